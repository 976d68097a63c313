"""A client built on an injected httpx transport: users test their code against
``httpx.MockTransport`` without a server."""

from __future__ import annotations

import asyncio
import json
from operator import attrgetter

import httpx
import pytest

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


# Each public method called with one optional argument too many positionally: the
# arguments after the natural first ones are keyword-only, so each call is refused.
TOO_MANY_POSITIONALS: list[tuple[str, tuple[object, ...]]] = [
    ("checkin", ("alice", "api", ["src/**"], {"model": "x"})),
    ("status", ("api",)),
    ("checkout", ("completed", "done", ["src/a.py"])),
    ("news", (None, 10)),
    ("check_conflicts", (["src/a.py"], ["src/**"])),
    ("session_conflicts", ("ses_1", "cursor")),
    ("event_log", (0, 10)),
    ("request", ("GET", "/api/v1/project", None, {"a": 1})),
    ("tasks.create", ("title", "description")),
    ("tasks.list", ("open", "alice")),
    ("tasks.set_status", ("t1", "done", "note")),
    ("checkpoints.create", ("cp", ["t1"], "description")),
    ("checkpoints.list", ("open", "t1")),
    ("checkpoints.resolve", ("cp1", "approved", "note")),
    ("messages.send", ("bob", "hello", "note")),
    ("messages.inbox", (True,)),
    ("leases.acquire", ("deploy", 600)),
    ("leases.list", ("deploy", "alice")),
    ("leases.renew", ("l1", 600)),
    ("consensus.request", ("deploy", "ship", "prod")),
    ("consensus.list", ("open", 10)),
    ("consensus.vote", ("c1", "approve", "fine")),
    ("agents.upsert", ("alice", "reviewer")),
    ("agents.list", ("reviewer", 10)),
]


def refuse_every_request(request: httpx.Request) -> httpx.Response:
    return httpx.Response(500, json={"error": {"code": "NOT_EXPECTED", "message": "sent"}})


@pytest.mark.parametrize(("method", "args"), TOO_MANY_POSITIONALS)
def test_optional_arguments_are_keyword_only(method: str, args: tuple[object, ...]) -> None:
    transport = httpx.MockTransport(refuse_every_request)
    client = Client("http://lanes.test", "key", session_token="t", transport=transport)
    with client, pytest.raises(TypeError, match="positional argument"):
        attrgetter(method)(client)(*args)


@pytest.mark.parametrize(("method", "args"), TOO_MANY_POSITIONALS)
def test_optional_arguments_are_keyword_only_on_the_async_client(
    method: str, args: tuple[object, ...]
) -> None:
    async def go() -> None:
        transport = httpx.MockTransport(refuse_every_request)
        async with AsyncClient(
            "http://lanes.test", "key", session_token="t", transport=transport
        ) as client:
            with pytest.raises(TypeError, match="positional argument"):
                await attrgetter(method)(client)(*args)

    asyncio.run(go())
