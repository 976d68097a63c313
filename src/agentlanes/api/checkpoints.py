"""Checkpoints over HTTP: named gates over tasks."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.params import FromPath, FromQuery, JSONBody

from agentlanes.api.answers import CheckpointList, CheckpointResolved, CheckpointView, answer
from agentlanes.api.coordination_schemas import CheckpointBody, ResolveBody
from agentlanes.api.deps import Ctx, Proj, Req, api_key_guard, session_token
from agentlanes.api.openapi import SESSION_OPTIONAL, contract
from agentlanes.api.query import PageLimit, PageOffset, choices, page_param
from agentlanes.services.coordination import checkpoints

CheckpointStatus = Annotated[
    str | None, choices(checkpoints.STATUSES, "Only checkpoints in this status")
]


class CheckpointController(Controller):
    path = "/api/v1/checkpoints"
    tags = ["checkpoints"]
    guards = [api_key_guard]

    @post(
        "/",
        status_code=201,
        opt=contract(404, session=SESSION_OPTIONAL),
        responses=answer(201, CheckpointView, "The new checkpoint"),
        summary="Create a checkpoint over tasks",
    )
    async def create(
        self, request: Req, ctx: Ctx, project: Proj, data: JSONBody[CheckpointBody]
    ) -> dict[str, Any]:
        body = data
        return await checkpoints.create_checkpoint(
            ctx,
            project,
            checkpoints.CheckpointInput(
                name=body.name, task_ids=body.task_ids, description=body.description
            ),
            session_token(request, body),
        )

    @get(
        "/",
        responses=answer(200, CheckpointList, "A page of checkpoints"),
        summary="List checkpoints",
    )
    async def list_(
        self,
        ctx: Ctx,
        project: Proj,
        status: CheckpointStatus = None,
        task_id: FromQuery[str | None] = None,
        limit: PageLimit = None,
        offset: PageOffset = None,
    ) -> dict[str, Any]:
        return await checkpoints.list_checkpoints(
            ctx,
            project,
            status=status,
            task_id=task_id,
            page=page_param(limit, offset),
        )

    @get(
        "/{checkpoint_id:str}",
        responses=answer(200, CheckpointView, "The checkpoint"),
        summary="One checkpoint",
    )
    async def get_(self, ctx: Ctx, project: Proj, checkpoint_id: FromPath[str]) -> dict[str, Any]:
        return await checkpoints.get_checkpoint(ctx, project, checkpoint_id)

    @post(
        "/{checkpoint_id:str}/resolve",
        status_code=200,
        opt=contract(409, session=SESSION_OPTIONAL),
        responses=answer(200, CheckpointResolved, "Resolved, with the tasks it unblocked"),
        summary="Resolve: passed or failed",
    )
    async def resolve(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        checkpoint_id: FromPath[str],
        data: JSONBody[ResolveBody],
    ) -> dict[str, Any]:
        body = data
        return await checkpoints.resolve_checkpoint(
            ctx,
            project,
            checkpoint_id,
            body.status,
            note=body.note,
            token=session_token(request, body),
        )
