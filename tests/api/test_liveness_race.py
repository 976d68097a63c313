"""A heartbeat racing the expiry job: the database decides, and a 200 is never undone."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from sqlmodel import select, update

from agentlanes.clock import utcnow
from agentlanes.errors import SessionEnded
from agentlanes.hub.memory import MemoryHub
from agentlanes.services import sessions
from agentlanes.services.context import ServiceContext
from agentlanes.services.lifecycle import expire_project_sessions
from agentlanes.services.projects import ProjectInput, create_project
from agentlanes.store.database import Database
from agentlanes.store.models import AgentSession, Project

# How far from "now" each trial's session is due when the race starts: clearly overdue,
# on the edge either way, clearly alive (10 s: no load delays the race that long). Both
# outcomes must happen, or the test has not exercised the race's two sides.
DUE_IN_MS = (-50, -3, 0, 3, 50, 10_000)


async def _race(url: str, settings: Any, trials: int) -> list[str]:
    db = Database(url)
    await db.create_all()
    ctx = ServiceContext(settings=settings, db=db, hub=MemoryHub())
    # The race runs in another context (another process, as it were): it has no beat of
    # these sessions in memory, so what the database says decides, as after a long silence.
    racer = ServiceContext(settings=settings, db=db, hub=MemoryHub())
    outcomes = []
    try:
        created = await create_project(ctx, ProjectInput(name=f"race-{id(ctx)}-{trials}"))
        async with db.read() as s:
            project = (await s.exec(select(Project).where(Project.slug == created["slug"]))).one()
        for i in range(trials):
            checked = await sessions.checkin(
                ctx, project, sessions.CheckinInput(agent_name=f"a{i}")
            )
            # Make the session due around now, then race both ways.
            due_in = DUE_IN_MS[i % len(DUE_IN_MS)]
            async with db.write() as s:
                await s.exec(
                    update(AgentSession)
                    .where(AgentSession.id == checked["session_id"])
                    .values(expires_at=utcnow() + timedelta(milliseconds=due_in))
                )

            async def beat(token: str = checked["session_token"]) -> str | None:
                try:
                    return (await sessions.heartbeat(racer, project, token))["expires_at"]
                except SessionEnded:
                    return None

            got = await asyncio.gather(beat(), expire_project_sessions(racer, project.id), beat())
            async with db.read() as s:
                row = await s.get(AgentSession, checked["session_id"])
            assert row is not None
            granted = [e for e in (got[0], got[2]) if e]
            if row.status == "timed_out":
                # No heartbeat may have been told "alive until E" for a session ended before E.
                assert not granted, (granted, row.ended_at)
                outcomes.append("timed_out")
            else:
                assert row.status == "active" and granted
                outcomes.append("alive")
    finally:
        await db.dispose()
    return outcomes


def test_heartbeat_and_expiry_race_is_decided_by_the_database(
    database_url: str, make_settings: Any
) -> None:
    outcomes = asyncio.run(_race(database_url, make_settings(database_url=database_url), 18))
    assert len(outcomes) == 18
    assert set(outcomes) == {"alive", "timed_out"}, outcomes
