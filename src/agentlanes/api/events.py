"""Events: the WebSocket stream, the browser token, and the log over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from typing import Annotated, Any

from litestar import Controller, WebSocket, get, post, websocket

from agentlanes import tokens
from agentlanes.api.answers import EventLog, RealtimeToken, answer
from agentlanes.api.deps import Ctx, Proj, Req, api_key_guard
from agentlanes.api.query import MAX_INT, QueryInt, int_param, int_range, text_range
from agentlanes.api.socket_gate import ACCEPT_WAIT_MAX, gate_of
from agentlanes.api.stream import CLOSE_SERVER_ERROR, CLOSE_TRY_AGAIN_LATER, EventStream
from agentlanes.clock import utcnow
from agentlanes.errors import AgentlanesError, InvalidInput, Unauthorized
from agentlanes.server.asgi_json import error_body, send_json
from agentlanes.services import realtime
from agentlanes.services.context import ServiceContext
from agentlanes.services.open_sockets import CLOSE_TOO_MANY, key_state
from agentlanes.services.projects import project_for_key
from agentlanes.settings import LIMITS
from agentlanes.store.availability import database_unavailable
from agentlanes.store.models import Project

log = logging.getLogger("agentlanes.stream")

# Integers (api/query.py), so a bad value is our 400 naming the field.
Since = Annotated[QueryInt | None, int_range(0, MAX_INT, "The offset after which to list events")]
LogLimit = Annotated[
    QueryInt | None, int_range(1, LIMITS.event_log_limit, "How many events at most")
]
Epoch = Annotated[
    str | None,
    text_range(1, 32, "The history's epoch the client last saw (another one: recovered false)"),
]

CLOSE_UNAUTHORIZED = 4401
CLOSE_BAD_REQUEST = 4400


class EventController(Controller):
    path = "/api/v1"
    tags = ["events"]
    guards = [api_key_guard]

    @post(
        "/realtime/token",
        status_code=201,
        responses=answer(201, RealtimeToken, "The token (reusable until expires_at)"),
        summary="A 60 s token for the browser's socket",
    )
    async def token(self, ctx: Ctx, project: Proj, request: Req) -> dict[str, Any]:
        return await realtime.issue_token(ctx, project, request.headers.get("x-api-key"))

    @get(
        "/events/log",
        responses=answer(200, EventLog, "Events after since, oldest first"),
        summary="The event log over HTTP",
    )
    async def log(
        self,
        ctx: Ctx,
        project: Proj,
        since: Since = None,
        limit: LogLimit = None,
        epoch: Epoch = None,
    ) -> dict[str, Any]:
        return await realtime.event_log(
            ctx,
            project,
            since=since,
            limit=limit,
            epoch=epoch,
        )


async def _authenticate(
    ctx: ServiceContext, socket: WebSocket[Any, Any, Any]
) -> tuple[Project, str | None]:
    """The project, and the hash of the API key behind the credential (the socket closes
    when that key stops working)."""
    token = socket.query_params.get("token")
    key = socket.headers.get("x-api-key")
    if token and key:
        return await _one_project_for_both(ctx, key, token)
    if token:
        return await realtime.project_for_realtime_token(ctx, token)
    return await project_for_key(ctx, key), tokens.hash_secret(key or "")


async def _one_project_for_both(
    ctx: ServiceContext, key: str, token: str
) -> tuple[Project, str | None]:
    """A key in the header and a browser token in ``?token=``: both must be valid and
    name the same project; a socket never gets one project's events on another's key."""
    by_key = await project_for_key(ctx, key)
    by_token, _ = await realtime.project_for_realtime_token(ctx, token)
    if by_key.id != by_token.id:
        raise Unauthorized("X-API-Key and ?token= belong to different projects: send one")
    return by_key, tokens.hash_secret(key)


async def _refuse_on_outage(socket: WebSocket[Any, Any, Any], exc: Exception) -> None:
    """The credentials could not be checked: close with 1013 (try again later) when the
    database is away, else 1011; either way a close frame, never a dropped socket."""
    if database_unavailable(exc):
        code, reason = CLOSE_TRY_AGAIN_LATER, "database unavailable: try again"
    else:
        log.exception("event socket refused: server error", exc_info=exc)
        code, reason = CLOSE_SERVER_ERROR, "server error: try again"
    with contextlib.suppress(Exception):
        await socket.close(code=code, reason=reason)


def _address(socket: WebSocket[Any, Any, Any]) -> str:
    client = socket.scope.get("client")
    return str(client[0]) if client else "unknown"


async def _refuse_handshake(
    socket: WebSocket[Any, Any, Any], status: int, code: str, message: str, retry_after: float
) -> None:
    """``status`` with ``Retry-After`` as the handshake's answer, where the server can
    give one; else a close before the handshake (the server answers 403)."""
    seconds = max(1, math.ceil(retry_after))
    message = f"{message}: retry in {seconds} s"
    with contextlib.suppress(Exception):
        if "websocket.http.response" not in (socket.scope.get("extensions") or {}):
            await socket.close(code=CLOSE_TOO_MANY, reason=message[:120])
            return
        await socket.receive()  # websocket.connect
        await send_json(
            socket.send,
            status,
            error_body(code, message),
            prefix="websocket.http",
            extra_headers=[(b"retry-after", str(seconds).encode())],
        )


@websocket("/api/v1/events")
async def events_socket(socket: WebSocket[Any, Any, Any]) -> None:
    """Snapshot or replay, then live events; client frames ``ping`` and ``attach``.

    SPEC "One agent cannot hurt another": an address whose credentials were refused too
    often is answered 429 before anything is looked up, and a project's sockets are let
    in (the handshake, the snapshot) at ``socket_accepts_per_second`` (api/socket_gate.py)."""
    ctx: ServiceContext = socket.app.state.ctx
    gate = gate_of(socket.app)
    address = _address(socket)
    blocked = gate.address_blocked(address)
    if blocked:
        why = "too many refused credentials from this address (socket_bad_credentials_per_minute)"
        await _refuse_handshake(socket, 429, "RATE_LIMITED", why, blocked)
        return
    try:
        project, key_hash = await _authenticate(ctx, socket)
        since = int_param("since", socket.query_params.get("since"))
        if since is not None and since < 0:
            raise InvalidInput("since", "must be a non-negative offset")
        epoch = socket.query_params.get("epoch")
        if epoch is not None and not 1 <= len(epoch) <= 32:
            raise InvalidInput("epoch", "must be 1-32 characters")
    except AgentlanesError as exc:
        code = CLOSE_UNAUTHORIZED if exc.status_code == 401 else CLOSE_BAD_REQUEST
        if code == CLOSE_UNAUTHORIZED:
            gate.refused_credentials(address)
        with contextlib.suppress(Exception):
            await socket.accept()
            await socket.send_json({"type": "error", **exc.body()})
            await socket.close(code=code, reason=exc.message[:120])
        return
    except Exception as exc:
        with contextlib.suppress(Exception):
            await socket.accept()
        await _refuse_on_outage(socket, exc)
        return
    wait = gate.accept_wait(project.id or 0)
    if wait is None:
        why = "too many sockets opened at once for this project (socket_accepts_per_second)"
        await _refuse_handshake(socket, 503, "TRY_AGAIN_LATER", why, ACCEPT_WAIT_MAX)
        return
    if wait:
        await asyncio.sleep(wait)  # the project's turn
    try:
        await socket.accept()
    except Exception:
        return  # the client went away while it waited

    stream = EventStream(ctx, socket, project)
    stream.key_hash = key_hash
    limit = ctx.settings.max_sockets_per_project
    if not ctx.sockets.add(stream, limit):
        # SPEC: open sockets are counted per project; over the cap the next one is refused.
        reason = f"too many open sockets for this project (max_sockets_per_project = {limit})"
        with contextlib.suppress(Exception):
            await socket.send_json(
                {"type": "error", "error": {"code": "TOO_MANY_SOCKETS", "message": reason}}
            )
            await socket.close(code=CLOSE_TOO_MANY, reason=reason[:120])
        return
    # A replaced key in its grace: the socket closes when the grace ends.
    ctx.sockets.close_at(stream, key_state(project, key_hash, utcnow()).until)
    try:
        await stream.run(since, epoch)
    finally:
        ctx.sockets.remove(stream)
