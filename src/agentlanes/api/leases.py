"""Leases over HTTP: acquire, list, renew, release, and fencing-token validation."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, get, post
from litestar.openapi.spec import OpenAPIType, Schema
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from agentlanes.api.answers import LeaseCheck, LeaseList, LeaseView, answer
from agentlanes.api.coordination_schemas import EmptyBody, LeaseBody, RenewBody, ValidateBody
from agentlanes.api.deps import Ctx, Proj, Req, api_key_guard, session_token
from agentlanes.api.openapi import SESSION_REQUIRED, contract
from agentlanes.api.query import Flag, PageLimit, PageOffset, bool_param, page_param
from agentlanes.services.coordination import leases
from agentlanes.settings import LIMITS

ResourceFilter = Annotated[
    str | None,
    QueryParameter(
        schema_extra={
            "min_length": 1,
            "max_length": LIMITS.lease_resource_chars,
            "schema_not": Schema(type=OpenAPIType.STRING, pattern=leases.RESOURCE_FORBIDDEN),
            "description": "Only leases on this resource key",
        }
    ),
]


class LeaseController(Controller):
    path = "/api/v1/leases"
    tags = ["leases"]
    guards = [api_key_guard]

    @post(
        "/",
        opt=contract(409, session=SESSION_REQUIRED),
        responses={
            **answer(201, LeaseView, "The new grant"),
            **answer(200, LeaseView, "This session held it already: the same grant, extended"),
        },
        summary="Acquire a lease (201 new; 200 when this session holds it already)",
    )
    async def acquire(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        data: JSONBody[LeaseBody],
    ) -> Response[dict[str, Any]]:
        body = data
        view, new = await leases.acquire(
            ctx, project, body.resource, session_token(request, body), ttl_seconds=body.ttl_seconds
        )
        return Response(view, status_code=201 if new else 200)

    @get(
        "/",
        responses=answer(200, LeaseList, "Leases, newest first"),
        summary="Live leases (include_ended=true for all)",
    )
    async def list_(
        self,
        ctx: Ctx,
        project: Proj,
        resource: ResourceFilter = None,
        agent_name: FromQuery[str | None] = None,
        include_ended: Flag = None,
        limit: PageLimit = None,
        offset: PageOffset = None,
    ) -> dict[str, Any]:
        return await leases.list_leases(
            ctx,
            project,
            resource=resource,
            agent_name=agent_name,
            include_ended=bool(bool_param("include_ended", include_ended)),
            page=page_param(limit, offset),
        )

    @post(
        "/validate",
        status_code=200,
        responses=answer(200, LeaseCheck, "Whether the token is the live grant, and why"),
        summary="Is this fencing token the live grant?",
    )
    async def validate(
        self,
        ctx: Ctx,
        project: Proj,
        data: JSONBody[ValidateBody],
    ) -> dict[str, Any]:
        body = data
        return await leases.validate(ctx, project, body.resource, body.fencing_token)

    @post(
        "/{lease_id:str}/renew",
        status_code=200,
        opt=contract(409, session=SESSION_REQUIRED),
        responses=answer(200, LeaseView, "The lease, extended"),
        summary="Extend a lease",
    )
    async def renew(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        lease_id: FromPath[str],
        data: JSONBody[RenewBody | None] = None,
    ) -> dict[str, Any]:
        body = data or RenewBody()
        return await leases.renew(
            ctx, project, lease_id, session_token(request, body), ttl_seconds=body.ttl_seconds
        )

    @post(
        "/{lease_id:str}/release",
        status_code=200,
        opt=contract(409, session=SESSION_REQUIRED),
        responses=answer(200, LeaseView, "The lease, released"),
        summary="Release a lease",
    )
    async def release(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        lease_id: FromPath[str],
        data: JSONBody[EmptyBody | None] = None,
    ) -> dict[str, Any]:
        return await leases.release(ctx, project, lease_id, session_token(request, data))
