"""The record behind an MCP session over HTTP: every process reads it, Redis holds no usable
secret (neither the MCP session id nor the agent's session token)."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest

from agentlanes.mcp.sessions import AgentRecord, RedisSessionStore, SessionStore
from agentlanes.settings import Settings
from tests.support import services


def _roundtrip(store: SessionStore) -> None:
    sid, token = secrets.token_hex(16), secrets.token_hex(32)

    async def run() -> None:
        await store.start()
        try:
            assert await store.load(sid) is None
            assert await store.create(sid, AgentRecord(7)) is None
            await store.save(sid, AgentRecord(7, token, "web-agent", 15.0))
            assert await store.load(sid) == AgentRecord(7, token, "web-agent", 15.0)
            assert await store.load(secrets.token_hex(16)) is None
            if isinstance(store, RedisSessionStore):
                raw = b"".join(
                    [
                        k + (await store._redis.get(k) or b"")
                        async for k in store._redis.scan_iter(f"{store.prefix}*")
                    ]
                )
                assert raw and token.encode() not in raw and sid.encode() not in raw
            await store.drop(sid)
            assert await store.load(sid) is None
        finally:
            await store.stop()

    asyncio.run(run())


def test_memory_store() -> None:
    _roundtrip(SessionStore())


@pytest.mark.redis
def test_redis_store_keeps_no_usable_secret() -> None:
    _roundtrip(RedisSessionStore(services.require_redis(), f"t-{secrets.token_hex(6)}"))


def _capped(store: SessionStore) -> None:
    """At most ``per_project`` open sessions per project; another project is not affected;
    an ended session frees its place."""
    sids = [secrets.token_hex(16) for _ in range(4)]

    async def run() -> None:
        await store.start()
        try:
            assert await store.create(sids[0], AgentRecord(7)) is None
            assert await store.create(sids[1], AgentRecord(7)) is None
            assert await store.create(sids[2], AgentRecord(7)) == "project"
            assert await store.load(sids[2]) is None  # nothing kept for the refused one
            assert await store.create(sids[3], AgentRecord(8)) is None
            await store.drop(sids[0])
            assert await store.create(sids[2], AgentRecord(7)) is None
        finally:
            await store.stop()

    asyncio.run(run())


def test_memory_store_caps_sessions_per_project() -> None:
    _capped(SessionStore(per_project=2))


@pytest.mark.redis
def test_redis_store_caps_sessions_per_project_for_every_process() -> None:
    _capped(RedisSessionStore(services.require_redis(), f"t-{secrets.token_hex(6)}", 2))


def test_an_idled_out_session_frees_its_place_in_the_project() -> None:
    """A record found expired by ``load`` (the client came back after the idle time) no
    longer counts against the project's cap."""
    store = SessionStore(per_project=1)
    old, new = secrets.token_hex(16), secrets.token_hex(16)

    async def run() -> None:
        assert await store.create(old, AgentRecord(7)) is None
        key = next(iter(store._records))
        store._records[key] = (store._records[key][0], 0.0)  # its idle time is over
        assert await store.load(old) is None
        assert await store.create(new, AgentRecord(7)) is None

    asyncio.run(run())


def test_the_news_tools_cursor_is_kept_for_every_process() -> None:
    """The MCP ``news`` tool's place is part of the session's record, so the next call
    reaching another process goes on from there."""
    store, sid = SessionStore(), secrets.token_hex(16)

    async def run() -> None:
        await store.save(sid, AgentRecord(7, "tok", "web-agent", 15.0, "12-abcdef"))
        record = await store.load(sid)
        assert record is not None and record.news_cursor == "12-abcdef"

    asyncio.run(run())


def test_the_heartbeat_stops_once_the_projects_key_is_refused(tmp_path: Path) -> None:
    """Review finding: after the project was deleted (or its key revoked) an MCP session's
    heartbeat loop retried the 401 every interval for the record's lifetime (30 min). It
    stops at the first UNAUTHORIZED, as on SESSION_ENDED. A real app, served in process."""
    from litestar.testing import AsyncTestClient

    from agentlanes.api.app import create_app
    from agentlanes.mcp.http import in_process_client
    from agentlanes.mcp.sessions import SharedLanes
    from tests.api.conftest import ADMIN
    from tests.conftest import TEST_APP_SETTINGS

    settings = Settings(**{**TEST_APP_SETTINGS, "database_url": f"sqlite:///{tmp_path}/t.db"})
    app = create_app(settings)

    async def run() -> None:
        async with AsyncTestClient(app) as http:
            r = await http.post("/api/v1/projects", json={"name": "gone"}, headers=ADMIN)
            assert r.status_code == 201, r.text
            project = r.json()
            client = in_process_client(app, project["api_key"])
            checked_in = await client.checkin(agent_name="web-agent")
            store, sid = SessionStore(), secrets.token_hex(16)
            record = AgentRecord(1, checked_in.session_token, "web-agent", 0.05)
            await store.save(sid, record)
            lanes = SharedLanes(client, sid, store)
            lanes.adopt(record)
            r = await http.delete(f"/api/v1/projects/{project['slug']}", headers=ADMIN)
            assert r.status_code in (200, 204), r.text
            lanes.start_heartbeat()
            assert lanes._beat is not None
            await asyncio.wait_for(lanes._beat, timeout=5)  # returned: no more beats
            await lanes.close()

    asyncio.run(run())


def test_a_full_process_lets_go_of_its_longest_idle_session_for_a_new_project() -> None:
    """Issue 40: ten projects x 1,001 initialize filled the process's 10,000 sessions and
    an eleventh project's first initialize got 503 for up to 30 minutes. The project's
    own cap comes first; a full process then forgets its longest idle session."""
    store = SessionStore(per_project=1000)
    sids = {p: [secrets.token_hex(8) for _ in range(1001)] for p in range(11)}

    async def run() -> None:
        for project in range(10):
            outcomes = [await store.create(sid, AgentRecord(project)) for sid in sids[project]]
            assert outcomes[:1000] == [None] * 1000 and outcomes[1000] == "project"
        assert len(store._records) == 10_000
        await store.load(sids[0][0])  # used again: no longer the longest idle
        assert await store.create(sids[10][0], AgentRecord(10)) is None
        assert await store.load(sids[10][0]) is not None
        assert await store.load(sids[0][0]) is not None
        assert await store.load(sids[0][1]) is None  # the longest idle, let go
        assert len(store._records) == 10_000 and store.evicted == 1
        # Project 0 has room for one again; the others are still full.
        assert await store.create(sids[0][1000], AgentRecord(0)) is None
        assert await store.create(secrets.token_hex(8), AgentRecord(5)) == "project"

    asyncio.run(run())
