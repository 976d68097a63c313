"""The one table of scheduled jobs: each job scheduled at its setting's interval, a failed
run logged and never raised into the scheduler."""

from __future__ import annotations

import asyncio
import gc
import logging
import weakref
from types import SimpleNamespace
from typing import Any

import pytest

from agentlanes import jobs
from agentlanes.server import gc_tuning
from agentlanes.settings import Settings


def test_every_job_of_the_table_is_scheduled_at_its_interval() -> None:
    settings = Settings(expiry_check_seconds=3, event_prune_seconds=70, hub_catch_up_seconds=5)
    ctx: Any = SimpleNamespace(settings=settings)

    async def scheduled() -> dict[str, float]:
        scheduled = jobs.start_scheduler(ctx)
        try:
            return {
                j.id: j.trigger.interval.total_seconds() for j in scheduled.scheduler.get_jobs()
            }
        finally:
            await scheduled.stop(1.0)

    got = asyncio.run(scheduled())
    assert got == {
        "session expiry": 3,
        "lease expiry": 3,
        "consensus expiry": 3,
        "event prune": 70,
        "message prune": 70,
        "hub catch-up": 5,
        "project watch": settings.project_watch_seconds,
        "garbage collection": settings.gc_collect_seconds,
    }


def test_a_failing_job_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    async def broken(ctx: Any) -> int:
        raise RuntimeError("boom")

    job = jobs.Job("broken", broken, lambda s: 1, "did %d")
    with caplog.at_level(logging.ERROR, logger="agentlanes.jobs"):
        asyncio.run(jobs.run_job(job, SimpleNamespace()))  # type: ignore[arg-type]
    assert [r.getMessage() for r in caplog.records] == ["broken job failed"]
    assert caplog.records[0].exc_info is not None


def test_a_job_that_did_something_says_how_much(caplog: pytest.LogCaptureFixture) -> None:
    async def three(ctx: Any) -> int:
        return 3

    async def nothing(ctx: Any) -> int:
        return 0

    with caplog.at_level(logging.INFO, logger="agentlanes.jobs"):
        asyncio.run(jobs.run_job(jobs.Job("x", three, lambda s: 1, "ended %d row(s)"), None))  # type: ignore[arg-type]
        asyncio.run(jobs.run_job(jobs.Job("y", nothing, lambda s: 1, "ended %d thing(s)"), None))  # type: ignore[arg-type]
    assert [r.getMessage() for r in caplog.records] == ["ended 3 row(s)"]


def test_the_collection_job_frees_cyclic_garbage_the_widened_generation_keeps() -> None:
    """With the serving thresholds a steady trickle of cycles is never collected by
    allocation counts alone; the scheduled full collection frees them."""

    class Node:
        def __init__(self) -> None:
            self.me = self  # a cycle: reference counting alone never frees it

    thresholds = gc.get_threshold()
    gc.collect()
    gc.set_threshold(*gc_tuning.THRESHOLDS)
    try:
        kept = []
        for _ in range(1000):
            node = Node()
            kept.append(weakref.ref(node))
            del node
        assert sum(r() is not None for r in kept) == 1000  # garbage, yet alive
        job = next(j for j in jobs.JOBS if j.name == "garbage collection")
        asyncio.run(jobs.run_job(job, SimpleNamespace()))  # type: ignore[arg-type]
        assert sum(r() is not None for r in kept) == 0
    finally:
        gc.set_threshold(*thresholds)


def test_a_tuned_process_freezes_its_warm_up_state_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first scheduled collection of a serving process freezes what survived it
    (later passes walk only what came after); the next ones freeze nothing."""
    monkeypatch.setattr(gc_tuning, "_tuned", True)
    monkeypatch.setattr(gc_tuning, "_warm", False)
    before = gc.get_freeze_count()
    try:
        warm_up_state = [{"n": i} for i in range(1000)]
        gc_tuning.collect()
        frozen = gc.get_freeze_count()
        assert frozen >= before + len(warm_up_state)
        later = [{"n": i} for i in range(1000)]
        gc_tuning.collect()
        assert gc.get_freeze_count() == frozen and later
    finally:
        gc.unfreeze()


def test_a_job_cancelled_by_shutdown_says_so_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    """APScheduler logs any exception of a job with its traceback, CancelledError
    included: a job stopped by shutdown must end quietly instead."""

    async def stuck(ctx: Any) -> int:
        await asyncio.sleep(60)
        return 0

    async def cancel_it() -> None:
        task = asyncio.create_task(jobs.run_job(jobs.Job("stuck", stuck, lambda s: 1, None), None))  # type: ignore[arg-type]
        await asyncio.sleep(0.01)
        task.cancel()
        await task  # returns: the cancellation is not raised into the scheduler

    with caplog.at_level(logging.INFO, logger="agentlanes.jobs"):
        asyncio.run(cancel_it())
    assert [r.getMessage() for r in caplog.records] == ["stuck job stopped by shutdown"]
    assert caplog.records[0].exc_info is None


def test_shutdown_waits_for_a_running_job_then_cancels_a_late_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Runs in flight finish within the grace (before the database closes); a run that
    outlasts it is cancelled, and stop() returns only when it has ended."""
    ended: list[str] = []

    def job(name: str, seconds: float) -> jobs.Job:
        async def run(ctx: Any) -> int:
            await asyncio.sleep(seconds)
            ended.append(name)
            return 0

        return jobs.Job(name, run, lambda s: 1, None)

    async def shut_down() -> tuple[list[bool], float]:
        scheduled = jobs.Scheduled(jobs.AsyncIOScheduler(timezone="UTC"), set())
        scheduled.scheduler.start()
        runs = [
            asyncio.create_task(jobs.run_job(job("quick", 0.1), None, scheduled.running)),  # type: ignore[arg-type]
            asyncio.create_task(jobs.run_job(job("slow", 30), None, scheduled.running)),  # type: ignore[arg-type]
        ]
        await asyncio.sleep(0.01)
        assert len(scheduled.running) == 2
        started = asyncio.get_running_loop().time()
        await scheduled.stop(0.5)
        took = asyncio.get_running_loop().time() - started
        return [t.done() for t in runs], took

    with caplog.at_level(logging.INFO, logger="agentlanes.jobs"):
        done, took = asyncio.run(shut_down())
    assert done == [True, True]
    assert ended == ["quick"]  # the slow one never finished its work
    assert 0.4 < took < 5
    assert [r.getMessage() for r in caplog.records] == ["slow job stopped by shutdown"]


def test_shutdown_with_no_grace_still_lets_a_cancelled_run_unwind() -> None:
    async def slow(ctx: Any) -> int:
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0.05)  # a rollback: unwinding takes a round trip
        return 0

    async def shut_down() -> bool:
        scheduled = jobs.Scheduled(jobs.AsyncIOScheduler(timezone="UTC"), set())
        scheduled.scheduler.start()
        job = jobs.Job("slow", slow, lambda s: 1, None)
        run = asyncio.create_task(jobs.run_job(job, None, scheduled.running))  # type: ignore[arg-type]
        await asyncio.sleep(0.01)
        await scheduled.stop(0)
        return run.done()

    assert asyncio.run(shut_down())
