"""Events stay small whatever the swarm; the full conflicts are on the session's endpoint."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from litestar.testing import TestClient
from sqlmodel import select

from agentlanes.hub.memory import MemoryHub
from agentlanes.services import sessions
from agentlanes.services.context import ServiceContext
from agentlanes.services.projects import ProjectInput, create_project
from agentlanes.services.realtime import event_log
from agentlanes.store.database import Database
from agentlanes.store.models import Project
from tests.api.conftest import Api, new_project

EVENT_LIMIT = 64 * 1024


def _by_type(events: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == type_]


def test_checkin_and_status_events_carry_the_count_and_the_conflict_event_the_list(
    api: Api,
) -> None:
    api.checkin(agent_name="alice", declared_files=["src/**"])
    bob = api.checkin(agent_name="bob", declared_files=["src/api/*.py"])
    assert len(bob["conflicts"]) == 1  # the HTTP answer keeps the full list
    r = api.post("/status", {"declared_files": ["src/**/*.py"]}, token=bob["session_token"])
    assert r.status_code == 200 and len(r.json()["conflicts"]) == 1

    events = api.events()
    checkins = _by_type(events, "agent.checkin")
    assert [c["data"]["conflicts_total"] for c in checkins] == [0, 1]
    assert all("conflicts" not in c["data"] for c in checkins)
    [status] = _by_type(events, "agent.status")
    assert status["data"]["conflicts_total"] == 1 and "conflicts" not in status["data"]
    assert status["data"]["session"]["declared_files"] == ["src/**/*.py"]
    first, second = _by_type(events, "agent.conflict")
    for conflict in (first, second):
        assert conflict["data"]["conflicts_total"] == 1
        assert conflict["data"]["truncated"] is False
        assert [c["agent_name"] for c in conflict["data"]["conflicts"]] == ["alice"]


def test_conflict_event_is_capped_and_says_it_is_truncated(
    app_factory: Any, sqlite_url: str
) -> None:
    client = app_factory(database_url=sqlite_url, event_max_conflicts=5)
    api = new_project(client)
    for i in range(8):
        api.checkin(agent_name=f"a{i}", declared_files=[f"docs/{i}/{n}.md" for n in range(6)])
    broad = api.checkin(agent_name="broad", declared_files=["docs/**/*.md"])
    assert len(broad["conflicts"]) == 8
    assert all(len(c["overlapping_files"]) == 6 for c in broad["conflicts"])

    [event] = _by_type(api.events(), "agent.conflict")
    data = event["data"]
    assert data["conflicts_total"] == 8 and data["truncated"] is True
    assert [c["agent_name"] for c in data["conflicts"]] == [f"a{i}" for i in range(5)]
    assert all(len(c["overlapping_files"]) == 3 for c in data["conflicts"])

    # The full list stays available from the session's endpoint.
    r = api.get(f"/sessions/{broad['session_id']}/conflicts")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["session_id"] == broad["session_id"] and body["conflicts_total"] == 8
    assert body["conflicts"] == broad["conflicts"]


def test_session_conflicts_endpoint_follows_the_live_swarm(api: Api) -> None:
    alice = api.checkin(agent_name="alice", declared_area="billing", declared_files=["a/**"])
    bob = api.checkin(agent_name="bob", declared_files=["a/b.py"])
    got = api.get(f"/sessions/{alice['session_id']}/conflicts").json()
    assert [c["agent_name"] for c in got["conflicts"]] == ["bob"]
    assert got["conflicts"][0]["overlapping_files"][0]["example"] == "a/b.py"

    api.post("/checkout", {}, token=bob["session_token"])
    assert api.get(f"/sessions/{alice['session_id']}/conflicts").json()["conflicts"] == []


def test_session_conflicts_endpoint_errors(client: TestClient[Any]) -> None:
    api = new_project(client)
    other = new_project(client)
    mine = api.checkin(agent_name="alice")
    unknown = api.get("/sessions/ses_000000000000000000000000/conflicts")
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "SESSION_NOT_FOUND"
    foreign = other.get(f"/sessions/{mine['session_id']}/conflicts")
    assert foreign.status_code == 404
    assert foreign.json()["error"]["code"] == "SESSION_NOT_FOUND"
    api.post("/checkout", {}, token=mine["session_token"])
    ended = api.get(f"/sessions/{mine['session_id']}/conflicts")
    assert ended.status_code == 410
    assert ended.json()["error"]["code"] == "SESSION_ENDED"
    assert ended.json()["status"] == "checked_out"


async def _swarm(url: str, settings: Any) -> list[dict[str, Any]]:
    """1,000 live sessions with long patterns, then one broad check-in and a status change
    that overlap them all; every event written is returned."""
    db = Database(url)
    await db.create_all()
    ctx = ServiceContext(settings=settings, db=db, hub=MemoryHub())
    try:
        created = await create_project(ctx, ProjectInput(name="swarm"))
        async with db.read() as s:
            project = (await s.exec(select(Project).where(Project.slug == created["slug"]))).one()
        long = "x" * 300
        for i in range(1000):
            files = [f"docs/{i}/{long}/{n}/{long}.md" for n in range(4)]
            await sessions.checkin(
                ctx,
                project,
                sessions.CheckinInput(agent_name=f"agent-{i}", declared_files=files, meta={}),
            )
        broad = await sessions.checkin(
            ctx, project, sessions.CheckinInput(agent_name="broad", declared_files=["**/*.md"])
        )
        # The answer is bounded (answer_max_conflicts), and counts them all.
        assert len(broad["conflicts"]) == 100 and broad["conflicts_total"] == 1000
        assert broad["truncated"] is True
        await sessions.update_status(
            ctx,
            project,
            broad["session_token"],
            sessions.StatusInput(declared_files=["docs/**"], sent=frozenset({"declared_files"})),
        )
        events: list[dict[str, Any]] = []
        since = 0
        while True:
            page = await event_log(ctx, project, since=since, limit=1000, epoch=None)
            if not page["events"]:
                return events
            events.extend(page["events"])
            since = page["events"][-1]["offset"]
    finally:
        await db.dispose()


def test_every_event_stays_under_64_kb_with_1000_overlapping_sessions(
    sqlite_url: str, make_settings: Any
) -> None:
    events = asyncio.run(_swarm(sqlite_url, make_settings(database_url=sqlite_url)))
    assert len(events) >= 1003
    sizes = {e["offset"]: len(json.dumps(e, separators=(",", ":")).encode()) for e in events}
    assert max(sizes.values()) <= EVENT_LIMIT, max(sizes.values())
    conflicts = _by_type(events, "agent.conflict")
    assert len(conflicts) == 2
    for event in conflicts:
        assert event["data"]["conflicts_total"] == 1000 and event["data"]["truncated"] is True
        assert 1 <= len(event["data"]["conflicts"]) <= 20
