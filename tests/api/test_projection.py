"""The live projection: each process keeps the live sessions in memory, current from the
event log by offset, and rebuilds from the database when it starts or falls behind."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from sqlalchemy import delete, event
from sqlmodel import select

from agentlanes.hub.memory import MemoryHub
from agentlanes.services import presence, sessions
from agentlanes.services.context import ServiceContext
from agentlanes.services.projects import ProjectInput, create_project
from agentlanes.store.database import Database
from agentlanes.store.models import Event, Project


class SessionReads:
    """Counts SELECTs that read the sessions table."""

    def __init__(self, db: Database) -> None:
        self.count = 0
        for engine in {db.writer, db.reader}:
            event.listen(engine.sync_engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        text = " ".join(statement.split()).upper()
        if text.startswith("SELECT") and "FROM SESSIONS" in text:
            self.count += 1


def _ctx(url: str, settings: Any, hub: MemoryHub | None = None) -> ServiceContext:
    return ServiceContext(settings=settings, db=Database(url), hub=hub or MemoryHub())


async def _project(ctx: ServiceContext, mode: str = "warn") -> Project:
    created = await create_project(
        ctx, ProjectInput(name=f"proj-{secrets.token_hex(4)}", conflict_mode=mode)
    )
    async with ctx.db.read() as s:
        return (await s.exec(select(Project).where(Project.slug == created["slug"]))).one()


def test_requests_read_events_after_their_offset_not_every_live_session(
    database_url: str, make_settings: Any
) -> None:
    async def scenario() -> None:
        ctx = _ctx(database_url, make_settings(database_url=database_url))
        await ctx.db.create_all()
        try:
            project = await _project(ctx)
            for i in range(100):
                await sessions.checkin(
                    ctx,
                    project,
                    sessions.CheckinInput(agent_name=f"a{i}", declared_files=[f"src/{i}/**"]),
                )
            reads = SessionReads(ctx.db)
            got = await sessions.checkin(
                ctx, project, sessions.CheckinInput(agent_name="new", declared_files=["src/7/x"])
            )
            assert [c["agent_name"] for c in got["conflicts"]] == ["a7"]
            snap = await presence.presence(ctx, project)
            assert len(snap["sessions"]) == 101
            assert snap["offset"] == 102  # 101 check-ins and one agent.conflict
            beat = await sessions.heartbeat(ctx, project, got["session_token"])
            assert beat["session_id"] == got["session_id"]
            assert reads.count == 0  # no request read the live sessions' rows
            assert ctx.projections.rebuilds == 1
        finally:
            await ctx.db.dispose()

    asyncio.run(scenario())


def test_two_processes_stay_one_service(database_url: str, make_settings: Any) -> None:
    async def scenario() -> None:
        settings = make_settings(database_url=database_url)
        # One hub, as Redis is for two processes: each hears of the other's events.
        hub = MemoryHub()
        a, b = _ctx(database_url, settings, hub), _ctx(database_url, settings, hub)
        await a.db.create_all()
        try:
            project = await _project(a, mode="block")
            alice = await sessions.checkin(
                a, project, sessions.CheckinInput(agent_name="alice", declared_files=["src/**"])
            )
            # B learns of alice from the log under the lock: block mode refuses bob.
            try:
                await sessions.checkin(
                    b, project, sessions.CheckinInput(agent_name="bob", declared_files=["src/a.py"])
                )
                raise AssertionError("bob got in beside alice")
            except Exception as exc:
                assert getattr(exc, "code", None) == "CONFLICT"
            assert [s["agent_name"] for s in (await presence.presence(b, project))["sessions"]] == [
                "alice"
            ]
            # Alice leaves through A; B sees it and lets bob in.
            await sessions.checkout(
                a,
                project,
                alice["session_token"],
                outcome_status=None,
                work_summary=None,
                files_touched=None,
            )
            bob = await sessions.checkin(
                b, project, sessions.CheckinInput(agent_name="bob", declared_files=["src/a.py"])
            )
            assert bob["conflicts"] == []
            snap_a, snap_b = (
                await presence.presence(a, project),
                await presence.presence(b, project),
            )
            assert [s["agent_name"] for s in snap_a["sessions"]] == ["bob"]
            assert snap_a == snap_b
        finally:
            for ctx in (a, b):
                await ctx.db.dispose()

    asyncio.run(scenario())


def test_a_process_behind_the_kept_history_rebuilds_from_the_database(
    sqlite_url: str, make_settings: Any
) -> None:
    async def scenario() -> None:
        settings = make_settings(database_url=sqlite_url)
        hub = MemoryHub()
        a, b = _ctx(sqlite_url, settings, hub), _ctx(sqlite_url, settings, hub)
        await a.db.create_all()
        try:
            project = await _project(a)
            await sessions.checkin(a, project, sessions.CheckinInput(agent_name="first"))
            assert len((await presence.presence(b, project))["sessions"]) == 1
            assert b.projections.rebuilds == 1
            tokens = []
            for i in range(5):
                got = await sessions.checkin(a, project, sessions.CheckinInput(agent_name=f"n{i}"))
                tokens.append(got["session_token"])
            await sessions.checkout(
                a, project, tokens[0], outcome_status=None, work_summary=None, files_touched=None
            )
            # The events B has not applied are pruned: B cannot catch up, so it rebuilds.
            async with a.db.write() as s:
                await s.exec(delete(Event).where(Event.project_id == project.id))  # type: ignore[call-overload]
            snap = await presence.presence(b, project)
            assert b.projections.rebuilds == 2
            assert [s["agent_name"] for s in snap["sessions"]] == ["first", "n1", "n2", "n3", "n4"]
            assert snap == await presence.presence(a, project)
        finally:
            for ctx in (a, b):
                await ctx.db.dispose()

    asyncio.run(scenario())


def test_a_lost_notification_delays_a_read_by_at_most_the_catch_up_interval(
    sqlite_url: str, make_settings: Any
) -> None:
    async def scenario() -> None:
        settings = make_settings(database_url=sqlite_url, hub_catch_up_seconds=0.3)
        # Two hubs that never talk: every notification between the processes is lost.
        a, b = _ctx(sqlite_url, settings), _ctx(sqlite_url, settings)
        await a.db.create_all()
        try:
            project = await _project(a)
            assert (await presence.presence(b, project))["sessions"] == []
            await sessions.checkin(a, project, sessions.CheckinInput(agent_name="quiet"))
            reads = SessionReads(b.db)
            await asyncio.sleep(0.35)
            snap = await presence.presence(b, project)
            assert [s["agent_name"] for s in snap["sessions"]] == ["quiet"]
            assert reads.count == 0  # caught up from the log, not from the sessions
        finally:
            for ctx in (a, b):
                await ctx.db.dispose()

    asyncio.run(scenario())
