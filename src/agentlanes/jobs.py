"""Scheduled jobs (APScheduler), in one table: expiry of overdue sessions, leases and
consensus requests, pruning of old events, the hub's catch-up, and a full garbage
collection on a clock.

Every process runs its own scheduler. The jobs are idempotent: each expiry re-checks its
rows under the project lock, so a row ends once however many processes run it; pruning
deletes by offset and age, which any process may do; catch-up only reads.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy import delete
from sqlmodel import col, select

from agentlanes.clock import utcnow
from agentlanes.server import gc_tuning
from agentlanes.services import hotspots, lifecycle, project_watch, queue
from agentlanes.services.context import ServiceContext
from agentlanes.services.coordination import consensus, leases
from agentlanes.settings import Settings
from agentlanes.store.availability import report_job_failure
from agentlanes.store.coordination import Message, MessageReceipt
from agentlanes.store.models import Event, Project

log = logging.getLogger("agentlanes.jobs")


async def prune_events(ctx: ServiceContext) -> int:
    """Drop events older than the retention age, or beyond the retention count."""
    cutoff = utcnow() - timedelta(seconds=ctx.settings.event_retention_seconds)
    keep = ctx.settings.event_retention_count
    removed = 0
    async with ctx.db.write() as db:
        result = await db.exec(delete(Event).where(col(Event.ts) < cutoff))
        removed += result.rowcount or 0
        offsets = select(col(Project.id), col(Project.last_offset))
        for project_id, last in (await db.exec(offsets)).all():
            if last > keep:
                result = await db.exec(
                    delete(Event).where(
                        col(Event.project_id) == project_id, col(Event.offset) <= last - keep
                    )
                )
                removed += result.rowcount or 0
    return removed


async def prune_messages(ctx: ServiceContext) -> int:
    """Drop messages older than ``message_retention_days`` (and their receipts): what one
    key can make the server keep is bounded in time (SPEC, "One agent cannot hurt
    another"). Runs on the event prune's clock."""
    cutoff = utcnow() - timedelta(days=ctx.settings.message_retention_days)
    old = select(col(Message.id)).where(col(Message.created_at) < cutoff)
    async with ctx.db.write() as db:
        await db.exec(delete(MessageReceipt).where(col(MessageReceipt.message_id).in_(old)))
        result = await db.exec(delete(Message).where(col(Message.created_at) < cutoff))
    return int(result.rowcount or 0)


async def catch_up(ctx: ServiceContext) -> int:
    """Poke the local subscribers of every project whose newest event never reached this
    process (its notification was lost, e.g. to a Redis outage). One small query."""
    projects = ctx.hub.subscribed_projects()
    if not projects:
        return 0
    async with ctx.db.read() as db:
        stmt = select(col(Project.id), col(Project.last_offset))
        rows = (await db.exec(stmt.where(col(Project.id).in_(projects)))).all()
    return ctx.hub.catch_up((pid, int(last)) for pid, last in rows if pid is not None)


async def collect_garbage(ctx: ServiceContext) -> int:
    """A full garbage collection (server/gc_tuning.py says why it runs on a clock)."""
    return gc_tuning.collect()


@dataclass(frozen=True)
class Job:
    """One scheduled job: what it is called in the log, what it runs, how often, and the
    log line for a run that did something (``%d``: how many; ``None``: no line)."""

    name: str
    run: Callable[[ServiceContext], Awaitable[int]]
    every: Callable[[Settings], float]
    done: str | None


JOBS: tuple[Job, ...] = (
    Job(
        "session expiry",
        lifecycle.expire_overdue,
        lambda s: s.expiry_check_seconds,
        "timed out %d session(s)",
    ),
    Job(
        "lease expiry",
        leases.expire_overdue,
        lambda s: s.expiry_check_seconds,
        "expired %d lease(s)",
    ),
    Job(
        "consensus expiry",
        consensus.expire_overdue,
        lambda s: s.expiry_check_seconds,
        "expired %d consensus request(s)",
    ),
    Job(
        "queue expiry",
        queue.expire_overdue,
        lambda s: s.expiry_check_seconds,
        "timed out %d wait(s) for a lane",
    ),
    Job("event prune", prune_events, lambda s: s.event_prune_seconds, "pruned %d event(s)"),
    Job(
        "hotspot prune",
        hotspots.prune,
        lambda s: s.event_prune_seconds,
        "pruned %d hotspot record(s) past hotspot_days_max",
    ),
    Job(
        "message prune",
        prune_messages,
        lambda s: s.event_prune_seconds,
        "pruned %d message(s) past message_retention_days",
    ),
    Job(
        "hub catch-up",
        catch_up,
        lambda s: s.hub_catch_up_seconds,
        "caught up %d project(s) whose notifications were lost",
    ),
    Job(
        "project watch",
        project_watch.check,
        lambda s: s.project_watch_seconds,
        "applied changes to %d project(s) made elsewhere",
    ),
    Job(
        "garbage collection",
        collect_garbage,
        lambda s: s.gc_collect_seconds,
        None,  # every minute: its pauses are in /metrics, not in the log
    ),
)


async def run_job(
    job: Job, ctx: ServiceContext, running: set[asyncio.Task[Any]] | None = None
) -> None:
    """Run one job; a failure is logged (an outage in one line, a bug with its traceback),
    never raised into the scheduler. A job cancelled by shutdown says so in one line (its
    transaction is rolled back; the next run, here or in another process, does its work)
    instead of reaching APScheduler, which logs any exception with its traceback.
    ``running`` holds the jobs in flight, so that shutdown can wait for them."""
    task = asyncio.current_task()
    if running is not None and task is not None:
        running.add(task)
    try:
        count = await job.run(ctx)
        if count and job.done:
            log.info(job.done, count)
    except asyncio.CancelledError:
        log.info("%s job stopped by shutdown", job.name)
    except Exception as exc:
        report_job_failure(log, f"{job.name} job", exc, ctx.job_outages)
    finally:
        if running is not None and task is not None:
            running.discard(task)


@dataclass
class Scheduled:
    """The jobs of one app: its scheduler and the runs in flight."""

    scheduler: AsyncIOScheduler
    running: set[asyncio.Task[Any]]

    async def stop(self, grace: float) -> None:
        """No new runs; the runs in flight get ``grace`` seconds to finish, then are
        cancelled (before the database they use is closed)."""
        self.scheduler.shutdown(wait=False)
        pending = {t for t in self.running if not t.done()}
        if pending:
            _, late = await asyncio.wait(pending, timeout=grace)
            for t in late:
                t.cancel()
            if late:  # a cancelled run unwinds (rolls back) in a moment: wait for it
                await asyncio.wait(late, timeout=max(grace, 1.0))


def start_scheduler(ctx: ServiceContext) -> Scheduled:
    """Start every job of ``JOBS`` on the running event loop (call inside the app's
    lifespan; ``await .stop()`` on the way out)."""
    scheduler = AsyncIOScheduler(timezone="UTC")
    running: set[asyncio.Task[Any]] = set()
    for job in JOBS:
        scheduler.add_job(
            run_job,
            "interval",
            args=[job, ctx, running],
            seconds=job.every(ctx.settings),
            id=job.name,
            coalesce=True,
            max_instances=1,
            misfire_grace_time=30,
        )
    scheduler.start()
    return Scheduled(scheduler, running)
