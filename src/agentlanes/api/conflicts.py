"""The project's current conflicts in one answer (a dashboard's view of every pair)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get

from agentlanes.api.deps import Ctx, Proj, api_key_guard
from agentlanes.api.query import QueryInt, int_range
from agentlanes.services import conflict_pairs
from agentlanes.settings import LIMITS

# An integer (api/query.py: our 400 naming it); documented as the range the service takes.
Limit = Annotated[
    QueryInt | None, int_range(1, LIMITS.conflict_pairs_limit, "How many pairs at most")
]


class ConflictListController(Controller):
    path = "/api/v1"
    tags = ["sessions"]
    guards = [api_key_guard]

    @get("/conflicts", summary="Every overlapping pair of live sessions, once")
    async def pairs(self, ctx: Ctx, project: Proj, limit: Limit = None) -> dict[str, Any]:
        return await conflict_pairs.current_conflicts(ctx, project, limit=limit)
