"""Events: the WebSocket stream, the browser token, and the log over HTTP."""

from __future__ import annotations

import contextlib
from typing import Any

from litestar import Controller, WebSocket, get, post, websocket
from litestar.di import NamedDependency
from litestar.params import FromQuery

from agentlanes.api.deps import api_key_guard
from agentlanes.api.query import int_param
from agentlanes.api.stream import EventStream
from agentlanes.errors import AgentlanesError, InvalidInput
from agentlanes.services import realtime
from agentlanes.services.context import ServiceContext
from agentlanes.services.projects import project_for_key
from agentlanes.store.models import Project

Ctx = NamedDependency[ServiceContext]
Proj = NamedDependency[Project]

CLOSE_UNAUTHORIZED = 4401
CLOSE_BAD_REQUEST = 4400


class EventController(Controller):
    path = "/api/v1"
    tags = ["events"]
    guards = [api_key_guard]

    @post("/realtime/token", status_code=201, summary="A 60 s token for the browser's socket")
    async def token(self, ctx: Ctx, project: Proj) -> dict[str, Any]:
        return await realtime.issue_token(ctx, project)

    @get("/events/log", summary="The event log over HTTP")
    async def log(
        self,
        ctx: Ctx,
        project: Proj,
        # Strings, parsed by _int_param, so a bad value is our 400 naming the field.
        since: FromQuery[str | None] = None,
        limit: FromQuery[str | None] = None,
        epoch: FromQuery[str | None] = None,
    ) -> dict[str, Any]:
        return await realtime.event_log(
            ctx,
            project,
            since=int_param("since", since),
            limit=int_param("limit", limit),
            epoch=epoch,
        )


async def _authenticate(ctx: ServiceContext, socket: WebSocket[Any, Any, Any]) -> Project:
    token = socket.query_params.get("token")
    if token:
        return await realtime.project_for_realtime_token(ctx, token)
    return await project_for_key(ctx, socket.headers.get("x-api-key"))


@websocket("/api/v1/events")
async def events_socket(socket: WebSocket[Any, Any, Any]) -> None:
    """Snapshot or replay, then live events; client frames ``ping`` and ``attach``."""
    ctx: ServiceContext = socket.app.state.ctx
    await socket.accept()
    try:
        project = await _authenticate(ctx, socket)
        since = int_param("since", socket.query_params.get("since"))
        if since is not None and since < 0:
            raise InvalidInput("since", "must be a non-negative offset")
        epoch = socket.query_params.get("epoch")
        if epoch is not None and not 1 <= len(epoch) <= 32:
            raise InvalidInput("epoch", "must be 1-32 characters")
    except AgentlanesError as exc:
        code = CLOSE_UNAUTHORIZED if exc.status_code == 401 else CLOSE_BAD_REQUEST
        with contextlib.suppress(Exception):
            await socket.send_json({"type": "error", **exc.body()})
            await socket.close(code=code, reason=exc.message[:120])
        return

    await EventStream(ctx, socket, project).run(since, epoch)
