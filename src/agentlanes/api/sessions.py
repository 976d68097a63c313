"""Sessions: check-in, heartbeat, status, checkout, presence, conflict checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from litestar import Controller, MediaType, Request, Response, get, post
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import FromPath, JSONBody

from agentlanes.api.answers import (
    CheckinAnswer,
    CheckoutAnswer,
    ConflictsAnswer,
    HeartbeatAnswer,
    PresenceAnswer,
    SessionConflictsAnswer,
    StatusAnswer,
    answer,
)
from agentlanes.api.deps import Ctx, Proj, api_key_guard, session_token
from agentlanes.api.openapi import SESSION_OPTIONAL, SESSION_REQUIRED, contract
from agentlanes.api.query import QueryInt, int_range, text_range
from agentlanes.api.schemas import (
    CheckinBody,
    CheckoutBody,
    ClaimIn,
    ConflictCheckBody,
    EditIn,
    StatusBody,
)
from agentlanes.errors import InvalidInput
from agentlanes.services import presence as presence_service
from agentlanes.services import sessions
from agentlanes.services.context import ServiceContext
from agentlanes.settings import LIMITS
from agentlanes.store.models import Project


@dataclass
class _TokenBodyOperation(Operation):
    """The heartbeat reads its body itself; the schema still says what it may hold."""

    def __post_init__(self) -> None:
        token = Schema(type=OpenAPIType.STRING, description="when X-Session-Token is absent")
        self.request_body = RequestBody(
            content={
                "application/json": OpenAPIMediaType(
                    schema=Schema(type=OpenAPIType.OBJECT, properties={"session_token": token})
                )
            },
            required=False,
        )


async def _body_token(request: Request[Any, Any, Any]) -> str | None:
    """``session_token`` from a JSON body (empty or absent: none)."""
    raw = await request.body()
    if not raw.strip():
        return None
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise InvalidInput("body", "must be a JSON object") from None
    if not isinstance(body, dict):
        raise InvalidInput("body", "must be a JSON object")
    token = body.get("session_token")
    if "session_token" in body and not isinstance(token, str):
        raise InvalidInput("session_token", "must be a string")
    return token


def _edits(edits: list[EditIn] | None) -> list[dict[str, Any]] | None:
    # Not model_dump: it would copy every range before the service has counted them.
    return (
        None
        if edits is None
        else [
            {"path": e.path, "base": e.base, "ranges": e.ranges, "digests": e.digests}
            for e in edits
        ]
    )


def _claims(claims: list[ClaimIn] | None) -> list[dict[str, Any]] | None:
    # As _edits: the service counts the ranges before reading them.
    return (
        None
        if claims is None
        else [
            {"path": c.path, "base": c.base, "ranges": c.ranges, "symbol": c.symbol} for c in claims
        ]
    )


# Parsed by the service (our 400 naming it); documented as the range it takes.
Cursor = Annotated[
    str | None,
    text_range(
        1,
        9,
        "Where the page starts: a next_cursor from the page before (opaque)",
        pattern="^[0-9]{1,9}$",
    ),
]
ConflictLimit = Annotated[
    QueryInt | None,
    int_range(
        1, LIMITS.page_size, "How many conflicts at most (default and cap: answer_max_conflicts)"
    ),
]


class SessionController(Controller):
    path = "/api/v1"
    tags = ["sessions"]
    guards = [api_key_guard]

    @post(
        "/checkin",
        status_code=201,
        opt=contract(409),
        responses=answer(201, CheckinAnswer, "The session, its token and its conflicts"),
        summary="Check in: start a session",
    )
    async def checkin(
        self, request: Request[Any, Any, Any], data: JSONBody[CheckinBody | None] = None
    ) -> dict[str, Any]:
        # A swarm's first call, in bursts: the context and project straight from the state
        # the app and the guard set, as the heartbeat does (two providers fewer).
        ctx: ServiceContext = request.app.state.ctx
        project: Project = request.state.project
        body = data or CheckinBody()
        return await sessions.checkin(
            ctx,
            project,
            sessions.CheckinInput(
                agent_name=body.agent_name,
                declared_area=body.declared_area,
                declared_files=body.declared_files,
                meta=body.meta,
                claims=_claims(body.claims),
            ),
        )

    @post(
        "/heartbeat",
        status_code=200,
        opt=contract(session=SESSION_REQUIRED),
        responses=answer(200, HeartbeatAnswer, "Alive until expires_at"),
        summary="Keep a session alive",
        operation_class=_TokenBodyOperation,
    )
    async def heartbeat(self, request: Request[Any, Any, Any]) -> dict[str, Any]:
        # The hottest route: the context and project straight from the state the app and
        # the guard set, rather than through two dependency providers per request.
        ctx: ServiceContext = request.app.state.ctx
        project: Project = request.state.project
        # A body, when sent, must be what the document says, header or not (bad input is
        # refused whatever else the request carries); reading it costs little.
        body_token = await _body_token(request)
        token = request.headers.get("x-session-token")
        token = token.strip() if token else body_token
        return await sessions.heartbeat(ctx, project, token or "")

    @post(
        "/status",
        status_code=200,
        opt=contract(409, session=SESSION_REQUIRED),
        responses=answer(200, StatusAnswer, "The session and its fresh conflicts"),
        summary="Change scope or status text",
    )
    async def status(
        self,
        request: Request[Any, Any, Any],
        ctx: Ctx,
        project: Proj,
        data: JSONBody[StatusBody | None] = None,
    ) -> dict[str, Any]:
        body = data or StatusBody()
        return await sessions.update_status(
            ctx,
            project,
            session_token(request, body) or "",
            sessions.StatusInput(
                declared_area=body.declared_area,
                declared_files=body.declared_files,
                status_text=body.status_text,
                edits=_edits(body.edits),
                claims=_claims(body.claims),
                sent=frozenset(body.model_fields_set - {"session_token"}),
            ),
        )

    @post(
        "/checkout",
        status_code=200,
        opt=contract(session=SESSION_REQUIRED),
        responses=answer(200, CheckoutAnswer, "The session has ended"),
        summary="Check out: end a session",
    )
    async def checkout(
        self,
        request: Request[Any, Any, Any],
        ctx: Ctx,
        project: Proj,
        data: JSONBody[CheckoutBody | None] = None,
    ) -> dict[str, Any]:
        body = data or CheckoutBody()
        return await sessions.checkout(
            ctx,
            project,
            session_token(request, body) or "",
            outcome_status=body.outcome_status,
            work_summary=body.work_summary,
            files_touched=body.files_touched,
        )

    @get(
        "/presence",
        summary="Live sessions of the project",
        responses=answer(200, PresenceAnswer, "Active sessions, oldest first"),
    )
    async def presence(self, request: Request[Any, Any, Any]) -> Response[bytes]:
        # Hot: the context and project from the state, as for the heartbeat, and the body
        # joined from the sessions' encodings the projection keeps.
        body = await presence_service.presence_json(request.app.state.ctx, request.state.project)
        return Response(body, media_type=MediaType.JSON)

    @get(
        "/sessions/{session_id:str}/conflicts",
        opt=contract(410),
        responses=answer(200, SessionConflictsAnswer, "A page of the session's conflicts"),
        summary="Current conflicts of a session, a page at a time",
    )
    async def session_conflicts(
        self,
        ctx: Ctx,
        project: Proj,
        session_id: FromPath[str],
        cursor: Cursor = None,
        limit: ConflictLimit = None,
    ) -> dict[str, Any]:
        return await presence_service.session_conflicts(
            ctx, project, session_id, cursor=cursor, limit=limit
        )

    @post(
        "/conflicts/check",
        status_code=200,
        opt=contract(session=SESSION_OPTIONAL),
        responses=answer(200, ConflictsAnswer, "What would collide (nothing changes)"),
        summary="What paths or patterns would collide with",
    )
    async def check(
        self,
        request: Request[Any, Any, Any],
        ctx: Ctx,
        project: Proj,
        data: JSONBody[ConflictCheckBody | None] = None,
    ) -> dict[str, Any]:
        body = data or ConflictCheckBody()
        return await presence_service.check_conflicts(
            ctx,
            project,
            paths=body.paths,
            patterns=body.patterns,
            declared_area=body.declared_area,
            token=session_token(request, body),
            edits=_edits(body.edits),
            claims=_claims(body.claims),
        )
