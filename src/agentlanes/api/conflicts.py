"""The project's current conflicts in one answer (a dashboard's view of every pair)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, get
from litestar.di import NamedDependency
from litestar.params import FromQuery

from agentlanes.api.deps import api_key_guard
from agentlanes.api.query import int_param
from agentlanes.services import conflict_pairs
from agentlanes.services.context import ServiceContext
from agentlanes.store.models import Project

Ctx = NamedDependency[ServiceContext]
Proj = NamedDependency[Project]


class ConflictListController(Controller):
    path = "/api/v1"
    tags = ["sessions"]
    guards = [api_key_guard]

    @get("/conflicts", summary="Every overlapping pair of live sessions, once")
    async def pairs(
        self, ctx: Ctx, project: Proj, limit: FromQuery[str | None] = None
    ) -> dict[str, Any]:
        return await conflict_pairs.current_conflicts(ctx, project, limit=int_param("limit", limit))
