"""Scheduled jobs (APScheduler): expiry of overdue sessions, pruning of old events.

Every process runs its own scheduler. The jobs are idempotent: expiry re-checks each
session under the project lock, so a session times out once however many run it.
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
from agentlanes.store.models import Event, Project

log = logging.getLogger("agentlanes.jobs")


async def run_expiry(ctx: ServiceContext) -> None:
    try:
        ended = await expire_overdue(ctx)
        if ended:
            log.info("timed out %d session(s)", ended)
    except Exception:
        log.exception("expiry job failed")


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


async def run_prune(ctx: ServiceContext) -> None:
    try:
        removed = await prune_events(ctx)
        if removed:
            log.info("pruned %d event(s)", removed)
    except Exception:
        log.exception("event prune job failed")


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
    coordination_jobs.schedule_lease_expiry(scheduler, ctx)
    coordination_jobs.schedule_consensus_expiry(scheduler, ctx)
    scheduler.start()
    return scheduler
