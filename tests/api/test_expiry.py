"""Liveness: overdue sessions end as timed_out, once, with their event.

No wall-clock bounds: the tests wait for the session expiry job's runs (counted by a
wrapper around the real job), so a slow machine makes them slower, never wrong.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from litestar.testing import TestClient

from agentlanes import jobs
from agentlanes.clock import utcnow
from tests.api.conftest import new_project
from tests.support.waiting import wait_for


@pytest.fixture
def expiry_runs(monkeypatch: pytest.MonkeyPatch) -> list[datetime]:
    """When each run of the real session expiry job began (request it before the app)."""
    runs: list[datetime] = []

    def counted(job: jobs.Job) -> jobs.Job:
        async def run(ctx: Any) -> int:
            runs.append(utcnow())
            return await job.run(ctx)

        return dataclasses.replace(job, run=run)

    wrapped = tuple(counted(j) if j.name == "session expiry" else j for j in jobs.JOBS)
    monkeypatch.setattr(jobs, "JOBS", wrapped)
    return runs


def runs_after(runs: list[datetime], moment: datetime, count: int = 1) -> bool:
    return len([r for r in runs if r > moment]) >= count


def test_overdue_session_times_out_with_one_event(
    expiry_runs: list[datetime], client: TestClient[Any]
) -> None:
    api = new_project(client, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=1)
    s = api.checkin(agent_name="alice")
    timeouts = wait_for(lambda: [e for e in api.events() if e["type"] == "agent.timeout"], 8)
    assert len(timeouts) == 1
    assert timeouts[0]["data"]["session_id"] == s["session_id"]
    seen = utcnow()
    assert wait_for(lambda: runs_after(expiry_runs, seen, 2), 10)  # two more runs...
    assert len([e for e in api.events() if e["type"] == "agent.timeout"]) == 1  # ...nothing
    r = api.post("/heartbeat", token=s["session_token"])
    assert r.status_code == 410 and r.json()["status"] == "timed_out"


def test_heartbeats_keep_a_session_alive(client: TestClient[Any]) -> None:
    api = new_project(client, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=2)
    s = api.checkin(agent_name="alice")
    for _ in range(6):
        time.sleep(0.5)
        assert api.post("/heartbeat", token=s["session_token"]).status_code == 200
    assert [x["agent_name"] for x in api.get("/presence").json()["sessions"]] == ["alice"]


def test_an_attached_socket_keeps_the_session_alive(
    expiry_runs: list[datetime], app_factory: Any, sqlite_url: str
) -> None:
    client = app_factory(database_url=sqlite_url, attach_refresh_seconds=0.3)
    api = new_project(client, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=1)
    s = api.checkin(agent_name="alice")
    due = datetime.fromisoformat(s["expires_at"])
    with client.websocket_connect("/api/v1/events", headers={"X-API-Key": api.key}) as ws:
        ws.receive_json()
        ws.send_json({"type": "attach", "session_token": s["session_token"]})
        assert ws.receive_json()["type"] == "attached"
        # Expiry runs well past the check-in's expiry (two TTLs): the socket kept it alive.
        assert wait_for(lambda: runs_after(expiry_runs, due + timedelta(seconds=1), 2), 10)
        assert [x["agent_name"] for x in api.get("/presence").json()["sessions"]] == ["alice"]
    timeouts = wait_for(lambda: [e for e in api.events() if e["type"] == "agent.timeout"], 8)
    assert len(timeouts) == 1
