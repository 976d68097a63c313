"""Heartbeats without a database write each: kept in memory (or Redis), written through
in one batched UPDATE per flush, and consulted before any session times out."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event
from sqlmodel import select, update

from agentlanes.clock import utcnow
from agentlanes.errors import SessionEnded
from agentlanes.hub.memory import MemoryHub
from agentlanes.services import sessions
from agentlanes.services.context import ServiceContext
from agentlanes.services.lifecycle import expire_project_sessions
from agentlanes.services.liveness import RedisLiveness
from agentlanes.services.projects import ProjectInput, create_project
from agentlanes.store.database import Database
from agentlanes.store.models import AgentSession, Event, Project


class SessionWrites:
    """Counts statements that write the sessions table (one executemany counts once)."""

    def __init__(self, db: Database) -> None:
        self.statements: list[tuple[str, int]] = []
        event.listen(db.writer.sync_engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        text = statement.lstrip().upper()
        if text.startswith(("UPDATE SESSIONS", "INSERT INTO SESSIONS")):
            rows = len(params) if isinstance(params, list) else 1
            self.statements.append((text.split(" WHERE")[0], rows))


async def _project(ctx: ServiceContext, ttl: int = 120) -> Project:
    created = await create_project(
        ctx,
        ProjectInput(
            name=f"beats-{secrets.token_hex(4)}",
            heartbeat_interval_seconds=1,
            heartbeat_ttl_seconds=ttl,
        ),
    )
    async with ctx.db.read() as s:
        return (await s.exec(select(Project).where(Project.slug == created["slug"]))).one()


async def _backdate(db: Database, session_id: str) -> None:
    """Make the row overdue, as if its last written beat were long ago."""
    async with db.write() as s:
        await s.exec(
            update(AgentSession)
            .where(AgentSession.id == session_id)  # type: ignore[arg-type]
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )


async def _timeouts(db: Database, project_id: int) -> list[str]:
    async with db.read() as s:
        rows = (
            await s.exec(
                select(Event).where(Event.project_id == project_id, Event.type == "agent.timeout")
            )
        ).all()
    return [e.data["session_id"] for e in rows]


async def _beats_batched(url: str, settings: Any) -> None:
    db = Database(url)
    await db.create_all()
    ctx = ServiceContext(settings=settings, db=db, hub=MemoryHub())
    try:
        project = await _project(ctx)
        tokens = {}
        for i in range(50):
            got = await sessions.checkin(ctx, project, sessions.CheckinInput(agent_name=f"a{i}"))
            tokens[got["session_id"]] = got["session_token"]
        writes = SessionWrites(db)
        last = {}
        for _ in range(5):
            for session_id, token in tokens.items():
                last[session_id] = (await sessions.heartbeat(ctx, project, token))[
                    "last_heartbeat_at"
                ]
        assert writes.statements == []  # 250 heartbeats, no write

        assert await ctx.liveness.flush(db) == 50
        assert len(writes.statements) == 1  # one batched UPDATE for all of them
        assert writes.statements[0][1] == 50
        async with db.read() as s:
            rows = (
                await s.exec(select(AgentSession).where(AgentSession.project_id == project.id))
            ).all()
        from agentlanes.clock import iso

        assert {r.id: iso(r.last_heartbeat_at) for r in rows} == last
        assert await ctx.liveness.flush(db) == 0  # nothing new, nothing written
        assert len(writes.statements) == 1
    finally:
        await db.dispose()


def test_heartbeats_write_nothing_until_one_batched_update(
    database_url: str, make_settings: Any
) -> None:
    asyncio.run(_beats_batched(database_url, make_settings(database_url=database_url)))


async def _attached_idle(url: str, settings: Any) -> tuple[int, int, list[AgentSession]]:
    """1,000 sessions held by sockets (as the event socket's attach does) for 3 s."""
    db = Database(url)
    await db.create_all()
    ctx = ServiceContext(settings=settings, db=db, hub=MemoryHub())
    try:
        project = await _project(ctx, ttl=30)
        assert project.id is not None
        ids = []
        for i in range(1000):
            got = await sessions.checkin(ctx, project, sessions.CheckinInput(agent_name=f"a{i}"))
            ids.append(got["session_id"])
        async with db.read() as s:
            before = {
                r.id: r.expires_at
                for r in (
                    await s.exec(select(AgentSession).where(AgentSession.project_id == project.id))
                ).all()
            }
        writes = SessionWrites(db)
        await ctx.liveness.start(db)
        for n, session_id in enumerate(ids):  # each socket attaches at its own moment
            ctx.liveness.hold(project.id, session_id, project.heartbeat_ttl_seconds)
            if n % 100 == 0:
                await asyncio.sleep(0.05)
        await asyncio.sleep(2.5)
        # A flush counts once it has committed, its statement once it is sent: read the two
        # when no flush is half-way (a few ms; one every refresh).
        for _ in range(200):
            if len(writes.statements) == ctx.liveness.flushes:
                break
            await asyncio.sleep(0.01)
        written, flushes = len(writes.statements), ctx.liveness.flushes
        async with db.read() as s:
            rows = (
                await s.exec(select(AgentSession).where(AgentSession.project_id == project.id))
            ).all()
        await ctx.liveness.stop()
        assert all(r.expires_at > before[r.id] for r in rows)  # every held one was beaten
        return written, flushes, list(rows)
    finally:
        await db.dispose()


def test_a_thousand_attached_idle_sockets_cost_one_write_per_refresh(
    sqlite_url: str, make_settings: Any
) -> None:
    settings = make_settings(
        database_url=sqlite_url, liveness_flush_seconds=0.2, attach_refresh_seconds=1.0
    )
    statements, flushes, rows = asyncio.run(_attached_idle(sqlite_url, settings))
    assert len(rows) == 1000
    # About 3 s of holding, beaten on one grid of 1 s: every socket's session reaches the
    # database in the same batch, one write a refresh, not one a flush (0.2 s) or one a
    # socket. At the defaults (5 s) that is 12 writes a minute for any number of sockets.
    assert 2 <= statements <= 6, statements
    assert statements == flushes


async def _expiry_counts_unwritten_beats(url: str, settings: Any) -> None:
    db = Database(url)
    await db.create_all()
    ctx = ServiceContext(settings=settings, db=db, hub=MemoryHub())
    try:
        project = await _project(ctx, ttl=60)
        got = await sessions.checkin(ctx, project, sessions.CheckinInput(agent_name="kept"))
        await sessions.heartbeat(ctx, project, got["session_token"])
        await _backdate(db, got["session_id"])  # the row alone says overdue
        assert await expire_project_sessions(ctx, project.id) == 0
        async with db.read() as s:
            row = await s.get(AgentSession, got["session_id"])
        assert row is not None and row.status == "active"
        assert row.expires_at > utcnow() + timedelta(seconds=50)  # written through
        assert await _timeouts(db, project.id) == []
    finally:
        await db.dispose()


def test_expiry_consults_heartbeats_not_yet_written(database_url: str, make_settings: Any) -> None:
    asyncio.run(
        _expiry_counts_unwritten_beats(database_url, make_settings(database_url=database_url))
    )


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    yield f"t-beats-{secrets.token_hex(6)}"


async def _two_processes(url: str, settings: Any, redis_url: str, prefix: str) -> None:
    """Two service contexts (as two processes) on one database and one Redis."""
    a_db, b_db = Database(url), Database(url)
    await a_db.create_all()
    a = ServiceContext(
        settings=settings,
        db=a_db,
        hub=MemoryHub(),
        liveness=RedisLiveness(redis_url, prefix=prefix, flush_seconds=1.0),
    )
    b = ServiceContext(
        settings=settings,
        db=b_db,
        hub=MemoryHub(),
        liveness=RedisLiveness(redis_url, prefix=prefix, flush_seconds=1.0),
    )
    try:
        project = await _project(a, ttl=2)
        got = await sessions.checkin(a, project, sessions.CheckinInput(agent_name="x"))
        token, session_id = got["session_token"], got["session_id"]
        # A beats (never written: A "crashed" before its flush); B's expiry must see it.
        await sessions.heartbeat(a, project, token)
        await _backdate(a_db, session_id)
        assert await expire_project_sessions(b, project.id) == 0
        # B wrote it through; B also serves heartbeats for it.
        assert (await sessions.heartbeat(b, project, token))["session_id"] == session_id

        # Silence past the TTL: both processes race to expire it; it ends once.
        await asyncio.sleep(2.2)
        ended = await asyncio.gather(
            expire_project_sessions(a, project.id), expire_project_sessions(b, project.id)
        )
        assert sorted(ended) == [0, 1]
        assert await _timeouts(a_db, project.id) == [session_id]
        # A beat after the timeout is refused by either process, and revives nothing.
        for ctx in (a, b):
            with pytest.raises(SessionEnded):
                await sessions.heartbeat(ctx, project, token)
        await a.liveness.flush(a_db)
        await b.liveness.flush(b_db)
        async with a_db.read() as s:
            row = await s.get(AgentSession, session_id)
        assert row is not None and row.status == "timed_out"
    finally:
        for ctx in (a, b):
            await ctx.liveness.stop()
            await ctx.db.dispose()


def test_beats_in_redis_are_shared_and_expiry_happens_once_across_processes(
    database_url: str, make_settings: Any, redis_url: str, redis_prefix: str
) -> None:
    asyncio.run(
        _two_processes(
            database_url, make_settings(database_url=database_url), redis_url, redis_prefix
        )
    )


def test_a_beat_racing_the_claim_is_either_kept_or_refused(
    sqlite_url: str, make_settings: Any, redis_url: str, redis_prefix: str
) -> None:
    """Many heartbeats racing the expiry job across two processes: no 200 is ever given
    for a session that then times out before the expiry that 200 announced."""

    async def scenario() -> None:
        settings = make_settings(database_url=sqlite_url)
        a = ServiceContext(
            settings=settings,
            db=Database(sqlite_url),
            hub=MemoryHub(),
            liveness=RedisLiveness(redis_url, prefix=redis_prefix, flush_seconds=1.0),
        )
        await a.db.create_all()
        b = ServiceContext(
            settings=settings,
            db=Database(sqlite_url),
            hub=MemoryHub(),
            liveness=RedisLiveness(redis_url, prefix=redis_prefix, flush_seconds=1.0),
        )
        try:
            project = await _project(a, ttl=1)
            # Sessions are checked in elsewhere (a process whose beats a and b cannot see):
            # what the database says decides, as after a long silence.
            agent = ServiceContext(settings=settings, db=a.db, hub=MemoryHub())
            outcomes = []
            for i in range(12):
                checkin = sessions.CheckinInput(agent_name=f"r{i}")
                got = await sessions.checkin(agent, project, checkin)
                # Due around now: clearly overdue, on the edge either way, clearly alive.
                due_in = (-50, -3, 0, 3, 50, 10_000)[i % 6]
                async with a.db.write() as s:
                    await s.exec(
                        update(AgentSession)
                        .where(AgentSession.id == got["session_id"])  # type: ignore[arg-type]
                        .values(expires_at=utcnow() + timedelta(milliseconds=due_in))
                    )

                async def beat(ctx: ServiceContext, token: str = got["session_token"]) -> bool:
                    try:
                        await sessions.heartbeat(ctx, project, token)
                        return True
                    except SessionEnded:
                        return False

                results = await asyncio.gather(
                    beat(a), expire_project_sessions(b, project.id), beat(b)
                )
                async with a.db.read() as s:
                    row = await s.get(AgentSession, got["session_id"])
                assert row is not None
                granted = results[0] or results[2]
                if row.status == "timed_out":
                    assert not granted
                else:
                    assert row.status == "active" and granted
                outcomes.append(row.status)
            # Both sides of the race happened, so both assertions above were exercised.
            assert set(outcomes) == {"active", "timed_out"}, outcomes
        finally:
            for ctx in (a, b):
                await ctx.liveness.stop()
                await ctx.db.dispose()

    asyncio.run(scenario())
