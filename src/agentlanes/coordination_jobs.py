"""Scheduled jobs of the coordination features: lease expiry and consensus expiry.

Both are idempotent (re-read under the project lock), so every server process may run them.
"""

from __future__ import annotations

import logging

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from agentlanes.services import consensus, leases
from agentlanes.services.context import ServiceContext
from agentlanes.store.availability import report_job_failure

log = logging.getLogger("agentlanes.jobs")

COMMON = {"coalesce": True, "max_instances": 1, "misfire_grace_time": 30}


async def run_lease_expiry(ctx: ServiceContext) -> None:
    try:
        ended = await leases.expire_overdue(ctx)
        if ended:
            log.info("expired %d lease(s)", ended)
    except Exception as exc:
        report_job_failure(log, "lease expiry job", exc)


async def run_consensus_expiry(ctx: ServiceContext) -> None:
    try:
        ended = await consensus.expire_overdue(ctx)
        if ended:
            log.info("expired %d consensus request(s)", ended)
    except Exception as exc:
        report_job_failure(log, "consensus expiry job", exc)


def schedule_lease_expiry(scheduler: AsyncIOScheduler, ctx: ServiceContext) -> None:
    seconds = ctx.settings.expiry_check_seconds
    scheduler.add_job(run_lease_expiry, "interval", args=[ctx], seconds=seconds, **COMMON)


def schedule_consensus_expiry(scheduler: AsyncIOScheduler, ctx: ServiceContext) -> None:
    seconds = ctx.settings.expiry_check_seconds
    scheduler.add_job(run_consensus_expiry, "interval", args=[ctx], seconds=seconds, **COMMON)
