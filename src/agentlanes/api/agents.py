"""The agent registry over HTTP."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, get, put
from litestar.openapi.spec import OpenAPIType, Schema
from litestar.params import FromQuery, JSONBody, PathParameter

from agentlanes.api.answers import AgentList, AgentSaved, AgentView, answer
from agentlanes.api.coordination_schemas import AgentBody
from agentlanes.api.deps import Ctx, Proj, api_key_guard
from agentlanes.api.query import PageLimit, PageOffset, page_param
from agentlanes.domain.names import NAME_CHARS, NAME_MAX
from agentlanes.services.coordination import agents

AgentName = Annotated[
    str,
    PathParameter(
        schema_extra={
            "min_length": 1,
            "max_length": NAME_MAX,
            "schema_not": Schema(type=OpenAPIType.STRING, pattern=f"[^{NAME_CHARS}]"),
            "description": "1-64 of A-Z a-z 0-9 . _ -",
        }
    ),
]


class AgentController(Controller):
    path = "/api/v1/agents"
    tags = ["agents"]
    guards = [api_key_guard]

    @put(
        "/{name:str}",
        summary="Register or update an agent (201 created, 200 updated)",
        responses={
            **answer(201, AgentSaved, "Registered: a new agent"),
            **answer(200, AgentSaved, "Updated (dropped_keys: config keys the project lacks)"),
        },
    )
    async def upsert(
        self, ctx: Ctx, project: Proj, name: AgentName, data: JSONBody[AgentBody | None] = None
    ) -> Response[dict[str, Any]]:
        body = data or AgentBody()
        view, created = await agents.upsert(
            ctx,
            project,
            name,
            role=body.role,
            config=body.config,
            sent=frozenset(body.model_fields_set),
        )
        return Response(view, status_code=201 if created else 200)

    @get("/", responses=answer(200, AgentList, "A page of agents"), summary="Registered agents")
    async def list_(
        self,
        ctx: Ctx,
        project: Proj,
        role: FromQuery[str | None] = None,
        limit: PageLimit = None,
        offset: PageOffset = None,
    ) -> dict[str, Any]:
        return await agents.list_agents(
            ctx,
            project,
            role=role,
            page=page_param(limit, offset),
        )

    @get(
        "/{name:str}",
        responses=answer(200, AgentView, "The agent"),
        summary="One registered agent",
    )
    async def get_(self, ctx: Ctx, project: Proj, name: AgentName) -> dict[str, Any]:
        return await agents.get_agent(ctx, project, name)
