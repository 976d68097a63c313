"""Consensus over HTTP: open a vote, vote, read."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.params import FromPath, JSONBody

from agentlanes.api.answers import ConsensusList, ConsensusView, answer
from agentlanes.api.coordination_schemas import ConsensusBody, VoteBody
from agentlanes.api.deps import Ctx, Proj, Req, api_key_guard, session_token
from agentlanes.api.openapi import SESSION_REQUIRED, contract
from agentlanes.api.query import PageLimit, PageOffset, choices, page_param
from agentlanes.services.coordination import consensus

ConsensusStatus = Annotated[str | None, choices(consensus.STATUSES, "Only requests in this status")]


class ConsensusController(Controller):
    path = "/api/v1/consensus"
    tags = ["consensus"]
    guards = [api_key_guard]

    @post(
        "/",
        status_code=201,
        opt=contract(session=SESSION_REQUIRED),
        responses=answer(201, ConsensusView, "The new request"),
        summary="Ask the other live agents to approve an action",
    )
    async def create(
        self, request: Req, ctx: Ctx, project: Proj, data: JSONBody[ConsensusBody]
    ) -> dict[str, Any]:
        body = data
        return await consensus.create(
            ctx,
            project,
            consensus.ConsensusInput(
                action=body.action,
                subject=body.subject,
                reason=body.reason,
                timeout_seconds=body.timeout_seconds,
            ),
            session_token(request, body),
        )

    @get(
        "/",
        responses=answer(200, ConsensusList, "A page of requests"),
        summary="Consensus requests, newest first",
    )
    async def list_(
        self,
        ctx: Ctx,
        project: Proj,
        status: ConsensusStatus = None,
        limit: PageLimit = None,
        offset: PageOffset = None,
    ) -> dict[str, Any]:
        return await consensus.list_requests(
            ctx,
            project,
            status=status,
            page=page_param(limit, offset),
        )

    @get(
        "/{request_id:str}",
        responses=answer(200, ConsensusView, "The request and its votes"),
        summary="One request with its votes",
    )
    async def get_(self, ctx: Ctx, project: Proj, request_id: FromPath[str]) -> dict[str, Any]:
        return await consensus.get(ctx, project, request_id)

    @post(
        "/{request_id:str}/vote",
        status_code=200,
        opt=contract(409, session=SESSION_REQUIRED),
        responses=answer(200, ConsensusView, "The request with the vote counted"),
        summary="Vote approve or reject",
    )
    async def vote(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        request_id: FromPath[str],
        data: JSONBody[VoteBody],
    ) -> dict[str, Any]:
        body = data
        return await consensus.vote(
            ctx, project, request_id, body.vote, session_token(request, body), comment=body.comment
        )
