"""Operations: health, readiness, metrics."""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from litestar.datastructures import State
from litestar.openapi import ResponseSpec
from prometheus_client import Gauge

from agentlanes.api.answers import Health, Readiness, answer
from agentlanes.services.context import ServiceContext

SUBSCRIBERS = Gauge("agentlanes_event_subscribers", "Open event sockets in this process")


@get(
    "/healthz",
    summary="The process is up",
    tags=["operations"],
    responses=answer(200, Health, "Up"),
)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get(
    "/readyz",
    summary="Database (and Redis, when configured) reachable",
    tags=["operations"],
    responses={
        **answer(200, Readiness, "Ready: every check is ok"),
        503: ResponseSpec(
            data_container=Readiness,
            generate_examples=False,
            description='Not ready: `{"status": "unavailable", "checks": {...}}` names it',
        ),
    },
)
async def readyz(state: State) -> Response[dict[str, Any]]:
    ctx: ServiceContext = state.ctx
    checks: dict[str, Any] = {}
    ok = True
    try:
        await ctx.db.ping()
        checks["database"] = "ok"
    except Exception as exc:
        ok = False
        checks["database"] = f"unreachable: {type(exc).__name__}"
    hub_ok, hub_word = await ctx.hub.ready()
    checks["hub"] = "ok" if hub_ok else hub_word
    if ctx.settings.redis_url:
        checks["redis"] = "ok" if hub_ok else hub_word
    ok = ok and hub_ok
    SUBSCRIBERS.set(ctx.hub.subscriber_count())
    return Response(
        {"status": "ready" if ok else "unavailable", "checks": checks},
        status_code=200 if ok else 503,
    )
