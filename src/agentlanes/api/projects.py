"""Admin API: projects (``Authorization: Bearer <admin_token>``)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, get, post
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.handlers.base import BaseRouteHandler
from litestar.params import JSONBody

from agentlanes.api.openapi import contract
from agentlanes.api.schemas import ProjectCreate
from agentlanes.errors import Unauthorized
from agentlanes.secrets import hash_secret, same_secret
from agentlanes.services import projects
from agentlanes.services.context import ServiceContext

Ctx = NamedDependency[ServiceContext]


def admin_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """``Authorization: Bearer <admin_token>``, checked before the body is read."""
    expected = connection.app.state.ctx.settings.admin_token
    header = connection.headers.get("authorization", "")
    scheme, _, presented = header.partition(" ")
    if not expected:
        raise Unauthorized("the admin API is disabled (no admin_token is configured)")
    if scheme.lower() != "bearer" or not presented:
        raise Unauthorized("missing Authorization: Bearer <admin_token>")
    if not same_secret(presented.strip(), hash_secret(expected)):
        raise Unauthorized("wrong admin token")


class ProjectController(Controller):
    path = "/api/v1/projects"
    tags = ["admin"]
    guards = [admin_guard]

    @post(
        "/",
        status_code=201,
        opt=contract(409),
        summary="Create a project (its API key is shown once)",
    )
    async def create(self, ctx: Ctx, data: JSONBody[ProjectCreate]) -> dict[str, Any]:
        return await projects.create_project(ctx, projects.ProjectInput(**data.model_dump()))

    @get("/", summary="List projects")
    async def list_(self, ctx: Ctx) -> dict[str, Any]:
        return {"projects": await projects.list_projects(ctx)}
