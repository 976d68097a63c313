"""The live projection a read may use: current with every committed event (services/
projection.py says how that is known without a query most of the time)."""

from __future__ import annotations

import time

from agentlanes.services.context import ServiceContext
from agentlanes.services.projection import LiveProject
from agentlanes.store import queries


async def current_projection(ctx: ServiceContext, project_id: int) -> LiveProject:
    """The project's projection with every committed event applied (see live_sessions)."""
    current = ctx.projections.fresh(
        project_id, ctx.hub.newest(project_id), ctx.settings.hub_catch_up_seconds
    )
    if current is None:
        async with ctx.db.read_conn() as conn:
            last = await queries.last_offset_of(conn, project_id)
        current = ctx.projections.peek(project_id)
        if current is None or current.offset < last:
            async with ctx.db.read() as db:
                current = await ctx.projections.current(db, project_id, upto=last)
        else:
            current.verified_at = time.monotonic()
    return current
