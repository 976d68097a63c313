"""The record behind an MCP session over HTTP: every process reads it, Redis holds no usable
secret (neither the MCP session id nor the agent's session token)."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from agentlanes.mcp.sessions import AgentRecord, RedisSessionStore, SessionStore
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
