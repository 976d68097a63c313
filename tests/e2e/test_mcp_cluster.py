"""`/mcp` behind a load balancer without stickiness: an MCP client (the official SDK's
streamable-HTTP client) whose requests alternate between two `agentlanes serve`
processes on one PostgreSQL and one Redis works as against one process."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from tests.e2e.conftest import create_project
from tests.support import services
from tests.support.server import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.redis]


@pytest.fixture(scope="module")
def two_processes(
    pg_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    env = {
        "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
        "AGENTLANES_LOG_LEVEL": "warning",
        "AGENTLANES_DATABASE_URL": pg_database,
        "AGENTLANES_REDIS_URL": services.require_redis(),
        "AGENTLANES_REDIS_CHANNEL_PREFIX": f"t-{secrets.token_hex(6)}",
    }
    workdir = tmp_path_factory.mktemp("mcp-cluster")
    servers = [ServerProcess(env, workdir), ServerProcess(env, workdir)]
    try:
        for server in servers:
            server.start()
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


def _round_robin(ports: list[int], served: list[tuple[int, str, str]]) -> Any:
    """A load balancer in the client: each request to the next process in turn (no
    stickiness at all), noting which process got which JSON-RPC method."""
    import httpx2

    class RoundRobin(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()
            self.turn = 0

        async def handle_async_request(self, request: Any) -> Any:
            port = ports[self.turn % len(ports)]
            self.turn += 1
            method = "-"
            if request.method == "POST":
                body = json.loads(await request.aread())
                method = body.get("method", "-") if isinstance(body, dict) else "batch"
            served.append((port, request.method, method))
            request.url = request.url.copy_with(port=port)
            return await self.inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return RoundRobin()


def test_mcp_calls_alternate_between_two_processes(
    two_processes: tuple[ServerProcess, ServerProcess],
) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    a, b = two_processes
    key = create_project(a.url, conflict_mode="block")["api_key"]
    headers = {"X-API-Key": key}
    r = httpx.post(
        f"{b.url}/api/v1/checkin",
        json={"agent_name": "alice", "declared_files": ["src/api/**"]},
        headers=headers,
        timeout=10,
    )
    assert r.status_code == 201, r.text
    ports = [int(server.url.rsplit(":", 1)[1]) for server in (a, b)]
    served: list[tuple[int, str, str]] = []

    def payload(result: Any) -> Any:
        assert not result.is_error, result.content[0].text
        if result.structured_content is not None:
            data = result.structured_content
            return data.get("result", data) if set(data) == {"result"} else data
        return json.loads(result.content[0].text)

    async def scenario() -> None:
        http = httpx2.AsyncClient(headers=headers, transport=_round_robin(ports, served))
        async with (
            http,
            Client(streamable_http_client(f"{a.url}/mcp", http_client=http)) as client,
        ):
            refused = await client.call_tool(
                "checkin", {"agent_name": "web-agent", "declared_files": ["src/**"]}
            )
            assert (
                refused.is_error
                and "is claimed by alice for certain (their pattern src/api/**)"
                in refused.content[0].text
            )
            me = payload(
                await client.call_tool(
                    "checkin", {"agent_name": "web-agent", "declared_files": ["docs/**"]}
                )
            )
            assert me["agent_name"] == "web-agent"
            # Every call after this acts as web-agent, whichever process answers it.
            for _ in range(3):
                beat = payload(await client.call_tool("heartbeat", {}))
                assert beat["session_id"] == me["session_id"], beat
            status = payload(await client.call_tool("status", {"status_text": "on docs"}))
            assert status["session_id"] == me["session_id"]
            live = payload(await client.call_tool("presence", {}))
            names = sorted(s["agent_name"] for s in live["sessions"])
            assert names == ["alice", "web-agent"]
            hits = payload(await client.call_tool("check_conflicts", {"paths": ["src/api/x.py"]}))
            assert [c["agent_name"] for c in hits["conflicts"]] == ["alice"]
            done = payload(await client.call_tool("checkout", {"summary": "docs done"}))
            assert done["session_id"] == me["session_id"]
            again = await client.call_tool("heartbeat", {})
            assert again.is_error and "checkin" in again.content[0].text

    anyio.run(scenario)

    tool_calls = [(port, m) for port, verb, m in served if m == "tools/call"]
    assert len(tool_calls) >= 9
    assert {port for port, _ in tool_calls} == set(ports), served  # both processes served
    init = next(port for port, _, m in served if m == "initialize")
    assert any(port != init for port, _ in tool_calls), served
    # The agent's session went through both processes: one session, checked out once.
    r = httpx.get(f"{a.url}/api/v1/events/log?limit=100", headers=headers, timeout=10)
    kinds = [e["type"] for e in r.json()["events"] if "web-agent" in json.dumps(e)]
    assert kinds.count("agent.checkin") == 1 and kinds.count("agent.checkout") == 1, kinds


def test_an_ended_mcp_session_is_404_on_every_process(
    two_processes: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = two_processes
    key = create_project(a.url)["api_key"]
    accept = {"Accept": "application/json, text/event-stream", "X-API-Key": key}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    r = httpx.post(f"{a.url}/mcp", json=init, headers=accept, timeout=10)
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    session = {**accept, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    for server in (b, a):
        assert httpx.post(f"{server.url}/mcp", json=ping, headers=session).status_code == 200
    other = create_project(a.url)["api_key"]
    r = httpx.post(f"{b.url}/mcp", json=ping, headers={**session, "X-API-Key": other})
    assert r.status_code == 404  # a session belongs to the project that opened it
    assert httpx.delete(f"{b.url}/mcp", headers=session).status_code == 200
    for server in (a, b):
        r = httpx.post(f"{server.url}/mcp", json=ping, headers=session)
        assert r.status_code == 404, (server.url, r.status_code)


def _rpc_answer(r: httpx.Response) -> Any:
    """A JSON-RPC answer sent as JSON or as one Server-Sent Event; the notifications sent
    before it on the same stream are in ``["notified"]``."""
    if not r.headers.get("content-type", "").startswith("text/event-stream"):
        return r.json()
    found = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:")]
    answer = next(m for m in found if "id" in m)
    return {**answer, "notified": [m.get("method") for m in found if "id" not in m]}


def test_the_tools_an_agent_sees_follow_it_to_every_process(
    two_processes: tuple[ServerProcess, ServerProcess],
) -> None:
    """SPEC "Context budget": a small default toolset; ``more_tools`` adds a group for
    this agent's MCP session on whichever process serves it next; ``?tools=`` asks for
    groups at the start, and a group that does not exist is refused by name."""
    a, b = two_processes
    key = create_project(a.url)["api_key"]
    accept = {"Accept": "application/json, text/event-stream", "X-API-Key": key}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    r = httpx.post(f"{a.url}/mcp", json=init, headers=accept, timeout=10)
    assert r.status_code == 200, r.text
    session = {**accept, "Mcp-Session-Id": r.headers["mcp-session-id"],
               "Mcp-Protocol-Version": "2025-06-18"}  # fmt: skip
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

    def names(server: ServerProcess) -> set[str]:
        r = httpx.post(f"{server.url}/mcp", json=listing, headers=session, timeout=10)
        return {t["name"] for t in _rpc_answer(r)["result"]["tools"]}

    assert "task_create" not in names(b) and "checkin" in names(b)
    more = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "more_tools", "arguments": {"groups": ["tasks"]}}}  # fmt: skip
    answer = _rpc_answer(httpx.post(f"{b.url}/mcp", json=more, headers=session, timeout=10))
    assert answer["result"].get("isError") is not True, answer
    assert "notifications/tools/list_changed" in answer.get("notified", []), answer
    assert {"task_create", "task_claim"} <= names(a) and "lease_acquire" not in names(a)
    # Asked up front; and a wrong group named.
    r = httpx.post(f"{a.url}/mcp?tools=leases,votes", json=init, headers=accept, timeout=10)
    up_front = {**session, "Mcp-Session-Id": r.headers["mcp-session-id"]}
    r = httpx.post(f"{b.url}/mcp", json=listing, headers=up_front, timeout=10)
    listed = {t["name"] for t in _rpc_answer(r)["result"]["tools"]}
    assert {"lease_acquire", "consensus_vote", "checkin"} <= listed
    assert "task_create" not in listed
    r = httpx.post(f"{a.url}/mcp?tools=everything", json=init, headers=accept, timeout=10)
    assert r.status_code == 400 and "everything" in r.text, r.text
