"""Admin API: projects (``Authorization: Bearer <admin_token>``).

List, create, show, update, rotate or revoke the key, delete (with all its data).
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, delete, get, patch, post
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler
from litestar.params import FromPath, JSONBody

from agentlanes.api.deps import Ctx
from agentlanes.api.openapi import contract
from agentlanes.api.project_schemas import KeyRotation, ProjectUpdate
from agentlanes.api.schemas import ProjectCreate
from agentlanes.errors import Unauthorized
from agentlanes.services import projects
from agentlanes.tokens import hash_secret, same_secret


def admin_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """``Authorization: Bearer <admin_token>``, checked before the body is read."""
    expected = connection.app.state.ctx.settings.admin_token
    header = connection.headers.get("authorization", "")
    scheme, _space, presented = header.partition(" ")
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

    @get("/{slug:str}", summary="Show a project (settings, key state, live sessions)")
    async def show(self, ctx: Ctx, slug: FromPath[str]) -> dict[str, Any]:
        return await projects.show_project(ctx, slug)

    @patch("/{slug:str}", summary="Change a project's conflict mode, heartbeat, config keys")
    async def update(
        self, ctx: Ctx, slug: FromPath[str], data: JSONBody[ProjectUpdate]
    ) -> dict[str, Any]:
        return await projects.update_project(
            ctx, slug, projects.ProjectChanges(**data.model_dump())
        )

    @delete("/{slug:str}", status_code=200, summary="Delete a project and all its data")
    async def remove(self, ctx: Ctx, slug: FromPath[str]) -> dict[str, Any]:
        return await projects.delete_project(ctx, slug)

    @post(
        "/{slug:str}/rotate-key",
        status_code=200,
        summary="New API key; the old one works for grace_seconds more",
    )
    async def rotate_key(
        self, ctx: Ctx, slug: FromPath[str], data: JSONBody[KeyRotation | None] = None
    ) -> dict[str, Any]:
        grace = data.grace_seconds if data is not None else None
        return await projects.rotate_key(ctx, slug, grace)

    @post(
        "/{slug:str}/revoke-key",
        status_code=200,
        summary="Refuse every key of the project at once (rotate-key issues a new one)",
    )
    async def revoke_key(self, ctx: Ctx, slug: FromPath[str]) -> dict[str, Any]:
        return await projects.revoke_key(ctx, slug)
