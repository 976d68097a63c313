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


def ours(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The records of agentlanes.jobs alone: a test that ran before may have set the root
    logger to INFO (an app's logging config), and APScheduler's own INFO lines then reach
    the capture too."""
    return [r for r in caplog.records if r.name == "agentlanes.jobs"]


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
        "queue expiry": 3,
        "event prune": 70,
        "hotspot prune": 70,
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
        asyncio.run(jobs.run_job(job, SimpleNamespace(job_outages={})))  # type: ignore[arg-type]
    assert [r.getMessage() for r in ours(caplog)] == ["broken job failed"]
    assert ours(caplog)[0].exc_info is not None


def test_a_job_that_did_something_says_how_much(caplog: pytest.LogCaptureFixture) -> None:
    async def three(ctx: Any) -> int:
        return 3

    async def nothing(ctx: Any) -> int:
        return 0

    with caplog.at_level(logging.INFO, logger="agentlanes.jobs"):
        asyncio.run(jobs.run_job(jobs.Job("x", three, lambda s: 1, "ended %d row(s)"), None))  # type: ignore[arg-type]
        asyncio.run(jobs.run_job(jobs.Job("y", nothing, lambda s: 1, "ended %d thing(s)"), None))  # type: ignore[arg-type]
    assert [r.getMessage() for r in ours(caplog)] == ["ended 3 row(s)"]


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
    started = asyncio.Event()

    async def stuck(ctx: Any) -> int:
        started.set()
        await asyncio.Event().wait()  # until cancelled
        return 0

    async def cancel_it() -> None:
        task = asyncio.create_task(jobs.run_job(jobs.Job("stuck", stuck, lambda s: 1, None), None))  # type: ignore[arg-type]
        await started.wait()
        task.cancel()
        await task  # returns: the cancellation is not raised into the scheduler

    with caplog.at_level(logging.INFO, logger="agentlanes.jobs"):
        asyncio.run(cancel_it())
    assert [r.getMessage() for r in ours(caplog)] == ["stuck job stopped by shutdown"]
    assert ours(caplog)[0].exc_info is None


def test_shutdown_waits_for_a_running_job_then_cancels_a_late_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Runs in flight finish within the grace (before the database closes); a run that
    outlasts it is cancelled, and stop() returns only when it has ended. No clock: the
    quick run is let go only once stop() is waiting, and the order of what happened is
    checked."""
    happened: list[str] = []

    async def shut_down() -> list[bool]:
        running = {"quick": asyncio.Event(), "slow": asyncio.Event()}
        release_quick, never = asyncio.Event(), asyncio.Event()

        def job(name: str, until: asyncio.Event) -> jobs.Job:
            async def run(ctx: Any) -> int:
                running[name].set()
                try:
                    await until.wait()
                except asyncio.CancelledError:
                    happened.append(f"{name} cancelled")
                    raise
                happened.append(f"{name} ended")
                return 0

            return jobs.Job(name, run, lambda s: 1, None)

        scheduled = jobs.Scheduled(jobs.AsyncIOScheduler(timezone="UTC"), set())
        scheduled.scheduler.start()
        runs = [
            asyncio.create_task(jobs.run_job(job("quick", release_quick), None, scheduled.running)),  # type: ignore[arg-type]
            asyncio.create_task(jobs.run_job(job("slow", never), None, scheduled.running)),  # type: ignore[arg-type]
        ]
        await asyncio.gather(*(e.wait() for e in running.values()))
        assert len(scheduled.running) == 2
        stopping = asyncio.create_task(scheduled.stop(0.5))
        for _ in range(5):  # a few turns of the loop: stop() is waiting for the runs
            await asyncio.sleep(0)
        happened.append("stop waiting")
        release_quick.set()
        await stopping
        happened.append("stop returned")
        return [t.done() for t in runs]

    with caplog.at_level(logging.INFO, logger="agentlanes.jobs"):
        done = asyncio.run(shut_down())
    assert done == [True, True]
    # The quick run finished while stop() waited; the slow one was cancelled after it,
    # and stop() returned only then.
    assert happened == ["stop waiting", "quick ended", "slow cancelled", "stop returned"]
    assert [r.getMessage() for r in ours(caplog)] == ["slow job stopped by shutdown"]


def test_shutdown_with_no_grace_still_lets_a_cancelled_run_unwind() -> None:
    started = asyncio.Event()
    unwound: list[bool] = []

    async def slow(ctx: Any) -> int:
        started.set()
        try:
            await asyncio.Event().wait()  # until cancelled
        finally:
            await asyncio.sleep(0.05)  # a rollback: unwinding takes a round trip
            unwound.append(True)
        return 0

    async def shut_down() -> bool:
        scheduled = jobs.Scheduled(jobs.AsyncIOScheduler(timezone="UTC"), set())
        scheduled.scheduler.start()
        job = jobs.Job("slow", slow, lambda s: 1, None)
        run = asyncio.create_task(jobs.run_job(job, None, scheduled.running))  # type: ignore[arg-type]
        await started.wait()
        await scheduled.stop(0)
        return run.done()

    assert asyncio.run(shut_down())
    assert unwound == [True]
