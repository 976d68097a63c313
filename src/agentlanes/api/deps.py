"""Dependencies: the service context and the project that the API key opens."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.handlers.base import BaseRouteHandler

from agentlanes.services.context import ServiceContext
from agentlanes.services.projects import project_for_key
from agentlanes.store.models import Project


async def provide_ctx(state: State) -> ServiceContext:
    return state.ctx


async def api_key_guard(
    connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
) -> None:
    """Resolve the project from ``X-API-Key`` before the body is read (401 before 400)."""
    ctx: ServiceContext = connection.app.state.ctx
    connection.state.project = await project_for_key(ctx, connection.headers.get("x-api-key"))


async def provide_project(request: Request[Any, Any, Any]) -> Project:
    return request.state.project


def session_token(request: Request[Any, Any, Any], body: Any = None) -> str | None:
    """The session token from ``X-Session-Token``, else the body's ``session_token``."""
    header = request.headers.get("x-session-token")
    if header:
        return header.strip()
    return getattr(body, "session_token", None)


# What a route handler asks for by name (``ctx``, ``project``) and the request itself.
Ctx = NamedDependency[ServiceContext]
Proj = NamedDependency[Project]
Req = Request[Any, Any, Any]

DEPENDENCIES = {
    "ctx": Provide(provide_ctx),
    "project": Provide(provide_project),
}
