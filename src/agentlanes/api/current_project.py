"""``GET /api/v1/project``: the project an API key opens (agents and hooks read its mode)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, get

from agentlanes.api.answers import ProjectView, answer
from agentlanes.api.deps import Proj, api_key_guard
from agentlanes.services.views import project_view


class CurrentProjectController(Controller):
    path = "/api/v1/project"
    tags = ["projects"]
    guards = [api_key_guard]

    @get(
        "/",
        summary="The project of this API key (conflict mode, heartbeat settings)",
        responses=answer(200, ProjectView, "The project"),
    )
    async def show(self, project: Proj) -> dict[str, Any]:
        return project_view(project)
