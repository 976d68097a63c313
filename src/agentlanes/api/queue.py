"""Waiting for a lane over HTTP (SPEC): the queue, release requests, hotspots."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, delete, get, post
from litestar.params import FromPath, FromQuery, JSONBody

from agentlanes.api.answers import (
    HotspotList,
    QueueGranted,
    QueueList,
    QueueWaiting,
    ReleaseRequestView,
    WaitView,
    answer,
)
from agentlanes.api.deps import Ctx, Proj, Req, api_key_guard, session_token
from agentlanes.api.openapi import SESSION_REQUIRED, contract
from agentlanes.api.query import PageLimit, PageOffset, QueryInt, int_range
from agentlanes.api.queue_schemas import QueueBody, ReleaseRequestBody
from agentlanes.errors import NotFound
from agentlanes.services import hotspots, queue, release_requests
from agentlanes.settings import LIMITS

Days = Annotated[
    QueryInt | None,
    int_range(1, LIMITS.hotspot_days_max, "How many days back (default 7)"),
]
HotspotLimit = Annotated[
    QueryInt | None, int_range(1, hotspots.LIST_MAX, "How many paths at most (default 20)")
]


class QueueController(Controller):
    path = "/api/v1"
    tags = ["queue"]
    guards = [api_key_guard]

    @post(
        "/queue",
        opt=contract(409, session=SESSION_REQUIRED),
        responses={
            **answer(202, QueueWaiting, "Queued: its place in line and who holds the paths"),
            **answer(200, QueueGranted, "Nothing held them: they joined the claims at once"),
        },
        summary="Wait for paths others hold (granted in turn, as news)",
    )
    async def wait(
        self, request: Req, ctx: Ctx, project: Proj, data: JSONBody[QueueBody]
    ) -> Response[dict[str, Any]]:
        body, status = await queue.wait(
            ctx,
            project,
            session_token(request, data),
            queue.WaitInput(
                paths=data.paths, timeout_seconds=data.timeout_seconds, urgency=data.urgency
            ),
        )
        return Response(body, status_code=status)

    @get(
        "/queue",
        responses=answer(200, QueueList, "The waits in line order, with positions and holders"),
        summary="The project's waits for a lane",
    )
    async def waits(
        self,
        ctx: Ctx,
        project: Proj,
        session_id: FromQuery[str | None] = None,
        limit: PageLimit = None,
        offset: PageOffset = None,
    ) -> dict[str, Any]:
        return await queue.waits(ctx, project, session_id=session_id, limit=limit, offset=offset)

    @delete(
        "/queue/{queue_id:str}",
        status_code=200,
        opt=contract(409, session=SESSION_REQUIRED),
        responses=answer(200, WaitView, "The wait, ended (cancelled)"),
        summary="Stop waiting (your own wait)",
    )
    async def cancel(self, request: Req, ctx: Ctx, project: Proj, queue_id: FromPath[str]) -> Any:
        if len(queue_id) > 40:
            raise NotFound(f"no wait {queue_id[:40]!r}… of this session")
        return await queue.cancel(ctx, project, queue_id, session_token(request))

    @post(
        "/release-requests",
        status_code=201,
        opt=contract(404, 409, session=SESSION_REQUIRED),
        responses=answer(201, ReleaseRequestView, "Asked: news to the holder"),
        summary="Ask the holder of paths to release them",
    )
    async def ask(
        self, request: Req, ctx: Ctx, project: Proj, data: JSONBody[ReleaseRequestBody]
    ) -> dict[str, Any]:
        return await release_requests.ask(
            ctx,
            project,
            session_token(request, data),
            release_requests.AskInput(to=data.to, paths=data.paths, reason=data.reason),
        )

    @get(
        "/hotspots",
        responses=answer(200, HotspotList, "The paths most refused and waited for"),
        summary="Hotspots: the paths most refused and waited for, with wait times",
    )
    async def hotspots(
        self, ctx: Ctx, project: Proj, days: Days = None, limit: HotspotLimit = None
    ) -> dict[str, Any]:
        return await hotspots.hotspots(ctx, project, days=days, limit=limit)
