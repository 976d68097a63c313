"""The Python client (sync and async) against a real server process, stream restarts too."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentlanes.client import ApiError, AsyncClient, Client, NoSession, Unreachable
from tests.support.agents import new_project
from tests.support.server import ServerProcess, free_port

pytestmark = pytest.mark.e2e


def test_sync_client_covers_the_session_endpoints(agent_server: Any) -> None:
    key = new_project(agent_server.url, conflict_mode="block")["api_key"]
    with Client(agent_server.url, key) as alice, Client(agent_server.url, key) as bob:
        with pytest.raises(NoSession):
            alice.heartbeat()
        a = alice.checkin("alice", "api", ["src/api/**"], meta={"model": "x"})
        assert alice.session_token == a.session_token and a.conflicts == []
        assert alice.heartbeat().session_id == a.session_id
        with pytest.raises(ApiError) as refused:
            bob.checkin("bob", None, ["src/**/*.py"])
        assert refused.value.status == 409 and refused.value.code == "CONFLICT"
        assert refused.value.conflicts[0]["agent_name"] == "alice"
        b = bob.checkin("bob", None, ["docs/**"])
        check = bob.check_conflicts(paths=["src/api/a.py"])
        [conflict] = check.conflicts
        assert conflict.agent_name == "alice"
        assert conflict.overlapping_files[0].their_pattern == "src/api/**"
        assert alice.check_conflicts(paths=["src/api/a.py"]).conflicts == []  # own left out
        status = bob.status(status_text="docs")
        assert status.status_text == "docs" and status.session_id == b.session_id
        with pytest.raises(ApiError) as bad:
            bob.status(declared_files=["../x"])
        assert bad.value.code == "VALIDATION_ERROR" and bad.value.field == "declared_files"
        assert [s.agent_name for s in bob.presence().sessions] == ["alice", "bob"]
        assert bob.project().conflict_mode == "block"
        out = bob.checkout("partial", "half", files_touched=["docs/a.md"])
        assert (out.status, out.outcome_status) == ("checked_out", "partial")
        with pytest.raises(ApiError) as ended:
            bob.heartbeat()
        assert ended.value.status == 410 and ended.value.extra["status"] == "checked_out"
        log = bob.event_log(since=0)
        # The generic escape hatch: any route, plain JSON, errors still typed.
        assert bob.request("GET", "/api/v1/project")["conflict_mode"] == "block"
        with pytest.raises(ApiError) as missing:
            bob.request("GET", "/api/v1/nope")
        assert missing.value.status == 404
        kinds = [e.type for e in log.events]
        assert kinds[0] == "agent.checkin" and kinds[-1] == "agent.checkout"

    with Client(f"http://127.0.0.1:{free_port()}", key) as down, pytest.raises(Unreachable):
        down.presence()


def test_async_stream_resumes_across_a_server_restart(server_factory: Any, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'restart.db'}"
    server = server_factory({"AGENTLANES_DATABASE_URL": db})
    key = new_project(server.url)["api_key"]

    async def scenario() -> None:
        async with AsyncClient(server.url, key) as watcher, AsyncClient(server.url, key) as agent:
            stream = watcher.events()
            first = await anext(stream)
            assert first.type == "presence.snapshot"
            await agent.checkin("alice")
            assert (await anext(stream)).type == "agent.checkin"
            # The server goes away and comes back on the same port and database; events
            # written meanwhile by another process arrive after the stream reconnects.
            server.stop()
            next_frame = asyncio.ensure_future(anext(stream))
            await asyncio.sleep(0.5)
            server.start()
            await agent.checkin("bob")
            await agent.checkout()
            frames = [await asyncio.wait_for(next_frame, 30)]
            while len([f for f in frames if f.offset and f.type.startswith("agent.")]) < 2:
                frames.append(await asyncio.wait_for(anext(stream), 30))
            kinds = [f.type for f in frames]
            assert kinds == ["agent.checkin", "agent.checkout"] or kinds == [
                "replay.complete",
                "agent.checkin",
                "agent.checkout",
            ], kinds
            offsets = [f.offset for f in frames if f.type.startswith("agent.")]
            assert offsets == sorted(set(offsets))
            await stream.aclose()

    asyncio.run(scenario())


def _subscribers(server: ServerProcess) -> int:
    """Open event sockets in the server, as its metrics report them."""
    httpx.get(f"{server.url}/readyz", timeout=5)  # refreshes the gauge
    text = httpx.get(f"{server.url}/metrics", timeout=5).text
    match = re.search(r"^agentlanes_event_subscribers (\S+)$", text, re.MULTILINE)
    assert match, "no agentlanes_event_subscribers in /metrics"
    return int(float(match.group(1)))


def _until_subscribers(server: ServerProcess, count: int) -> int:
    """The server's open sockets once they are ``count`` (the server sees a close a moment
    after the client sends it), or what they still are after 10 s."""
    deadline = time.monotonic() + 10
    while (now := _subscribers(server)) != count and time.monotonic() < deadline:
        time.sleep(0.05)
    return now


def test_sync_events_in_a_with_block_close_the_socket_on_leaving(server_factory: Any) -> None:
    server = server_factory()
    key = new_project(server.url)["api_key"]
    assert _subscribers(server) == 0
    with Client(server.url, key) as lanes:
        with lanes.events() as stream:
            for frame in stream:
                assert frame.type == "presence.snapshot"
                break
            assert _until_subscribers(server, 1) == 1  # a break leaves the socket open
        assert _until_subscribers(server, 0) == 0
        # Plain iteration still works, and close() closes as leaving the block does.
        stream = lanes.events()
        assert next(stream).type == "presence.snapshot"
        assert _until_subscribers(server, 1) == 1
        stream.close()
        assert _until_subscribers(server, 0) == 0
        with pytest.raises(StopIteration):
            next(stream)


def test_async_events_in_an_async_with_block_close_the_socket_on_leaving(
    server_factory: Any,
) -> None:
    server = server_factory()
    key = new_project(server.url)["api_key"]

    async def scenario() -> None:
        async with AsyncClient(server.url, key) as lanes:
            async with lanes.events() as stream:
                async for frame in stream:
                    assert frame.type == "presence.snapshot"
                    break
                assert await asyncio.to_thread(_until_subscribers, server, 1) == 1
            assert await asyncio.to_thread(_until_subscribers, server, 0) == 0
            with pytest.raises(StopAsyncIteration):
                await anext(stream)

    assert _subscribers(server) == 0
    asyncio.run(scenario())
