"""Scheduled jobs (APScheduler): expiry of overdue sessions, pruning of old events, and
the hub's catch-up.

Every process runs its own scheduler. The jobs are idempotent: expiry re-checks each
session under the project lock, so a session times out once however many run it; pruning
deletes by offset and age, which any process may do; catch-up only reads.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy import delete, select
from sqlmodel import col

from agentlanes import coordination_jobs
from agentlanes.clock import utcnow
from agentlanes.services.context import ServiceContext
from agentlanes.services.lifecycle import expire_overdue
from agentlanes.store.availability import report_job_failure
from agentlanes.store.models import Event, Project

log = logging.getLogger("agentlanes.jobs")


async def run_expiry(ctx: ServiceContext) -> None:
    try:
        ended = await expire_overdue(ctx)
        if ended:
            log.info("timed out %d session(s)", ended)
    except Exception as exc:
        report_job_failure(log, "expiry job", exc)


async def prune_events(ctx: ServiceContext) -> int:
    """Drop events older than the retention age, or beyond the retention count."""
    cutoff = utcnow() - timedelta(seconds=ctx.settings.event_retention_seconds)
    keep = ctx.settings.event_retention_count
    removed = 0
    async with ctx.db.write() as db:
        result = await db.exec(delete(Event).where(col(Event.ts) < cutoff))  # type: ignore[call-overload]
        removed += result.rowcount or 0
        for project_id, last in (await db.exec(select(Project.id, Project.last_offset))).all():  # type: ignore[call-overload]
            if last > keep:
                result = await db.exec(
                    delete(Event).where(  # type: ignore[call-overload]
                        Event.project_id == project_id, col(Event.offset) <= last - keep
                    )
                )
                removed += result.rowcount or 0
    return removed


async def catch_up(ctx: ServiceContext) -> int:
    """Poke the local subscribers of every project whose newest event never reached this
    process (its notification was lost, e.g. to a Redis outage). One small query."""
    projects = ctx.hub.subscribed_projects()
    if not projects:
        return 0
    async with ctx.db.read() as db:
        stmt = select(Project.id, Project.last_offset).where(col(Project.id).in_(projects))
        rows = (await db.exec(stmt)).all()  # type: ignore[call-overload]
    return ctx.hub.catch_up((int(pid), int(last)) for pid, last in rows)


async def run_catch_up(ctx: ServiceContext) -> None:
    try:
        poked = await catch_up(ctx)
        if poked:
            log.info("caught up %d project(s) whose notifications were lost", poked)
    except Exception as exc:
        report_job_failure(log, "hub catch-up", exc)


async def run_prune(ctx: ServiceContext) -> None:
    try:
        removed = await prune_events(ctx)
        if removed:
            log.info("pruned %d event(s)", removed)
    except Exception as exc:
        report_job_failure(log, "event prune job", exc)


def start_scheduler(ctx: ServiceContext) -> AsyncIOScheduler:
    """Start the jobs on the running event loop (call inside the app's lifespan)."""
    scheduler = AsyncIOScheduler(timezone="UTC")
    common = {"coalesce": True, "max_instances": 1, "misfire_grace_time": 30}
    scheduler.add_job(
        run_expiry, "interval", args=[ctx], seconds=ctx.settings.expiry_check_seconds, **common
    )
    scheduler.add_job(
        run_prune, "interval", args=[ctx], seconds=ctx.settings.event_prune_seconds, **common
    )
    scheduler.add_job(
        run_catch_up, "interval", args=[ctx], seconds=ctx.settings.hub_catch_up_seconds, **common
    )
    coordination_jobs.schedule_lease_expiry(scheduler, ctx)
    coordination_jobs.schedule_consensus_expiry(scheduler, ctx)
    scheduler.start()
    return scheduler
