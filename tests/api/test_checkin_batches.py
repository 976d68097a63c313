"""Group commit of check-ins (services/checkin_batch.py): a burst into one project is
decided in a few transactions, each check-in against every earlier one, answered only
once its transaction is committed, with its events in order."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from sqlalchemy import event
from sqlmodel import select

from agentlanes.errors import StateConflict
from agentlanes.hub.memory import MemoryHub
from agentlanes.services import presence, sessions
from agentlanes.services.context import ServiceContext
from agentlanes.services.projects import ProjectInput, create_project
from agentlanes.store.database import Database
from agentlanes.store.models import AgentSession, Event, Project

BURST = 40


def _ctx(url: str, settings: Any) -> ServiceContext:
    return ServiceContext(settings=settings, db=Database(url), hub=MemoryHub())


async def _project(ctx: ServiceContext, mode: str = "warn") -> Project:
    created = await create_project(
        ctx, ProjectInput(name=f"proj-{secrets.token_hex(4)}", conflict_mode=mode)
    )
    async with ctx.db.read() as s:
        return (await s.exec(select(Project).where(Project.slug == created["slug"]))).one()


def _checkin(ctx: ServiceContext, project: Project, name: str, files: list[str]) -> Any:
    return sessions.checkin(
        ctx, project, sessions.CheckinInput(agent_name=name, declared_files=files)
    )


async def _log(ctx: ServiceContext, project: Project) -> list[Event]:
    async with ctx.db.read() as s:
        stmt = select(Event).where(Event.project_id == project.id).order_by(Event.offset)
        return list((await s.exec(stmt)).all())


def test_a_burst_is_decided_in_few_transactions_each_against_every_earlier_one(
    database_url: str, make_settings: Any
) -> None:
    """40 agents claim the same tree at once: the k-th decided sees the k-1 before it,
    those of its own batch included, and the log holds the events in that order."""

    async def scenario() -> None:
        ctx = _ctx(database_url, make_settings(database_url=database_url))
        await ctx.db.create_all()
        try:
            project = await _project(ctx)
            answers = await asyncio.gather(
                *(_checkin(ctx, project, f"a{i}", ["src/**"]) for i in range(BURST))
            )
            assert sorted(a["conflicts_total"] for a in answers) == list(range(BURST))
            assert ctx.checkins.checkins == BURST
            assert ctx.checkins.batches < BURST / 4, ctx.checkins.batches
            # Each check-in conflicts with exactly the ones decided before it.
            order = sorted(answers, key=lambda a: a["conflicts_total"])
            for k, a in enumerate(order):
                assert {c["session_id"] for c in a["conflicts"]} == {
                    b["session_id"] for b in order[:k]
                }
            log = await _log(ctx, project)
            assert [e.offset for e in log] == list(range(1, len(log) + 1))
            checkins = [e.data["session"]["session_id"] for e in log if e.type == "agent.checkin"]
            assert checkins == [a["session_id"] for a in order]
            snap = await presence.presence(ctx, project)
            assert len(snap["sessions"]) == BURST and snap["offset"] == len(log)
        finally:
            await ctx.db.dispose()

    asyncio.run(scenario())


def test_block_mode_admits_one_of_a_burst_in_one_batch(
    database_url: str, make_settings: Any
) -> None:
    async def scenario() -> None:
        ctx = _ctx(database_url, make_settings(database_url=database_url))
        await ctx.db.create_all()
        try:
            project = await _project(ctx, mode="block")
            results = await asyncio.gather(
                *(_checkin(ctx, project, f"a{i}", ["src/**"]) for i in range(BURST)),
                return_exceptions=True,
            )
            admitted = [r for r in results if isinstance(r, dict)]
            refused = [r for r in results if isinstance(r, StateConflict)]
            assert len(admitted) == 1 and len(refused) == BURST - 1
            assert all(r.extra["conflicts"][0]["agent_name"] == admitted[0]["agent_name"]
                       for r in refused)  # fmt: skip
            assert ctx.checkins.batches < BURST / 4
        finally:
            await ctx.db.dispose()

    asyncio.run(scenario())


def test_answers_wait_for_the_commit_and_a_failed_commit_fails_the_whole_batch(
    database_url: str, make_settings: Any
) -> None:
    """No check-in is answered before its transaction commits; when the commit fails,
    every check-in of the batch gets the error, nothing of it is in the database or in
    presence, and the next check-in takes the next offset."""

    async def scenario() -> None:
        ctx = _ctx(database_url, make_settings(database_url=database_url))
        await ctx.db.create_all()
        try:
            project = await _project(ctx)
            answered: list[str] = []
            commits: list[int] = []
            fail = {"next": False}

            def on_commit(_conn: Any) -> None:
                commits.append(len(answered))
                if fail["next"]:
                    fail["next"] = False
                    raise RuntimeError("the disk is full")

            event.listen(ctx.db.writer.sync_engine, "commit", on_commit)

            async def one(i: int) -> Any:
                got = await _checkin(ctx, project, f"a{i}", [f"src/{i}/**"])
                answered.append(got["session_id"])
                return got

            # Hold the project's lock so that the burst queues up behind it.
            async with ctx.project_tx(project.id or 0):
                burst = [asyncio.ensure_future(one(i)) for i in range(8)]
                await asyncio.sleep(0.05)
            fail["next"] = True  # the batch waiting for the lock commits next
            results = await asyncio.gather(*burst, return_exceptions=True)
            assert all(isinstance(r, RuntimeError) for r in results), results
            assert answered == []
            async with ctx.db.read() as s:
                rows = (await s.exec(select(AgentSession))).all()
            assert [r for r in rows if r.project_id == project.id] == []
            assert (await presence.presence(ctx, project))["sessions"] == []
            assert await _log(ctx, project) == []

            commits.clear()
            answers = await asyncio.gather(*(one(i) for i in range(8)))
            assert len(answers) == 8
            # At each commit, no check-in of that transaction had been answered yet.
            assert commits[0] == 0
            log = await _log(ctx, project)
            assert [e.offset for e in log] == list(range(1, 9))
        finally:
            await ctx.db.dispose()

    asyncio.run(scenario())


def test_an_agent_checking_in_twice_in_one_batch_supersedes_its_first_session(
    database_url: str, make_settings: Any
) -> None:
    async def scenario() -> None:
        ctx = _ctx(database_url, make_settings(database_url=database_url))
        await ctx.db.create_all()
        try:
            project = await _project(ctx)
            async with ctx.project_tx(project.id or 0):
                first = asyncio.ensure_future(_checkin(ctx, project, "dup", ["a/**"]))
                await asyncio.sleep(0.01)
                other = asyncio.ensure_future(_checkin(ctx, project, "other", ["a/**"]))
                await asyncio.sleep(0.01)
                second = asyncio.ensure_future(_checkin(ctx, project, "dup", ["b/**"]))
                await asyncio.sleep(0.05)
            a, o, b = await asyncio.gather(first, other, second)
            assert ctx.checkins.batches == 1
            # "other" met the first dup (then live); the second dup meets nobody.
            assert [c["session_id"] for c in o["conflicts"]] == [a["session_id"]]
            assert b["conflicts"] == []
            snap = await presence.presence(ctx, project)
            assert sorted(s["session_id"] for s in snap["sessions"]) == sorted(
                [o["session_id"], b["session_id"]]
            )
            log = await _log(ctx, project)
            ends = [e for e in log if e.type == "agent.checkout"]
            assert [(e.data["session_id"], e.data["superseded_by"]) for e in ends] == [
                (a["session_id"], b["session_id"])
            ]
            assert [e.offset for e in log] == list(range(1, len(log) + 1))
        finally:
            await ctx.db.dispose()

    asyncio.run(scenario())


def test_a_check_in_whose_caller_went_away_before_its_batch_is_not_written(
    sqlite_url: str, make_settings: Any
) -> None:
    async def scenario() -> None:
        ctx = _ctx(sqlite_url, make_settings(database_url=sqlite_url))
        await ctx.db.create_all()
        try:
            project = await _project(ctx)
            async with ctx.project_tx(project.id or 0):
                kept = asyncio.ensure_future(_checkin(ctx, project, "kept", ["a/**"]))
                gone = asyncio.ensure_future(_checkin(ctx, project, "gone", ["b/**"]))
                await asyncio.sleep(0.05)
                gone.cancel()
            got = await kept
            assert gone.cancelled()
            snap = await presence.presence(ctx, project)
            assert [s["session_id"] for s in snap["sessions"]] == [got["session_id"]]
            async with ctx.db.read() as s:
                names = (await s.exec(select(AgentSession.agent_name))).all()
            assert "gone" not in names
        finally:
            await ctx.db.dispose()

    asyncio.run(scenario())
