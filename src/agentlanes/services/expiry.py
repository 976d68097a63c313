"""The shape every expiry job shares: find the projects with rows past their time, then
expire each project's under its lock (sessions, leases, consensus requests).

The first read is a hint; each project's expiry re-reads under the project lock, so a row
ends once however many processes run the job at the same moment."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from sqlmodel import col, select
from sqlmodel.sql.expression import SelectOfScalar

from agentlanes.clock import utcnow
from agentlanes.services.context import ServiceContext
from agentlanes.services.project_tx import ProjectTx


def overdue_in_project(
    model: Any, project_id: int, *, status: str, now: datetime
) -> SelectOfScalar[Any]:
    """The project's ``model`` rows still in ``status`` whose ``expires_at`` has passed (to
    be read under the project lock)."""
    return select(model).where(
        model.project_id == project_id, model.status == status, col(model.expires_at) <= now
    )


ExpireProject = Callable[[ServiceContext, int], Awaitable[int]]


async def expire_in_each_project(
    ctx: ServiceContext, model: Any, expire_project: ExpireProject, *, status: str
) -> int:
    """Run ``expire_project`` for every project holding a ``model`` row in ``status`` whose
    ``expires_at`` has passed; how many rows ended in all."""
    async with ctx.db.read() as db:
        stmt = (
            select(model.project_id)
            .where(model.status == status, col(model.expires_at) <= utcnow())
            .distinct()
        )
        project_ids = list((await db.exec(stmt)).all())
    total = 0
    for project_id in project_ids:
        total += await expire_project(ctx, project_id)
    return total


EndRow = Callable[[ProjectTx, Any, datetime], Awaitable[None]]


async def expire_rows(ctx: ServiceContext, model: Any, *, status: str, end: EndRow) -> int:
    """The whole job for rows that simply end at ``expires_at`` (leases, consensus
    requests): in each project with overdue rows, re-read them under the lock and ``end``
    each one in that transaction."""

    async def in_project(ctx: ServiceContext, project_id: int) -> int:
        async with ctx.project_tx(project_id) as tx:
            now = utcnow()
            stmt = overdue_in_project(model, project_id, status=status, now=now)
            overdue = (await tx.db.exec(stmt)).all()
            for row in overdue:
                await end(tx, row, now)
            return len(overdue)

    return await expire_in_each_project(ctx, model, in_project, status=status)
