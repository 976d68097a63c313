"""A client built on an injected httpx transport: users test their code against
``httpx.MockTransport`` without a server."""

from __future__ import annotations

import asyncio
import json

import httpx

from agentlanes.client import AsyncClient, Client

CHECKIN_ANSWER = {
    "session_id": "s-1",
    "session_token": "tok-1",
    "agent_name": "writer",
    "declared_area": "docs/**",
    "heartbeat_interval_seconds": 30,
    "heartbeat_ttl_seconds": 90,
    "expires_at": "2026-11-25T22:00:00+00:00",
}


def answer_checkin(seen: list[httpx.Request]) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(201, json=CHECKIN_ANSWER)

    return httpx.MockTransport(handle)


def test_checkin_goes_through_the_injected_transport() -> None:
    seen: list[httpx.Request] = []
    with Client("http://lanes.test", "key-1", transport=answer_checkin(seen)) as client:
        result = client.checkin("writer", "docs/**")
    assert result.session_token == "tok-1"
    assert client.session_token == "tok-1"
    [request] = seen
    assert (request.method, request.url.path) == ("POST", "/api/v1/checkin")
    assert request.headers["X-API-Key"] == "key-1"
    assert json.loads(request.content) == {"agent_name": "writer", "declared_area": "docs/**"}


def test_async_checkin_goes_through_the_injected_transport() -> None:
    seen: list[httpx.Request] = []

    async def go() -> str:
        transport = answer_checkin(seen)
        async with AsyncClient("http://lanes.test", "key-1", transport=transport) as client:
            return (await client.checkin("writer", "docs/**")).session_token

    assert asyncio.run(go()) == "tok-1"
    assert [r.url.path for r in seen] == ["/api/v1/checkin"]
