"""Liveness: overdue sessions end as timed_out, once, with their event."""

from __future__ import annotations

import time
from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import new_project
from tests.support.waiting import wait_for


def test_overdue_session_times_out_within_seconds_with_one_event(client: TestClient[Any]) -> None:
    api = new_project(client, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=1)
    s = api.checkin(agent_name="alice")
    started = time.monotonic()
    timeouts = wait_for(lambda: [e for e in api.events() if e["type"] == "agent.timeout"], 8)
    assert time.monotonic() - started < 1 + 5
    assert len(timeouts) == 1
    assert timeouts[0]["data"]["session_id"] == s["session_id"]
    time.sleep(1.5)  # more job runs change nothing
    assert len([e for e in api.events() if e["type"] == "agent.timeout"]) == 1
    r = api.post("/heartbeat", token=s["session_token"])
    assert r.status_code == 410 and r.json()["status"] == "timed_out"


def test_heartbeats_keep_a_session_alive(client: TestClient[Any]) -> None:
    api = new_project(client, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=2)
    s = api.checkin(agent_name="alice")
    for _ in range(6):
        time.sleep(0.5)
        assert api.post("/heartbeat", token=s["session_token"]).status_code == 200
    assert [x["agent_name"] for x in api.get("/presence").json()["sessions"]] == ["alice"]


def test_an_attached_socket_keeps_the_session_alive(app_factory: Any, sqlite_url: str) -> None:
    client = app_factory(database_url=sqlite_url, attach_refresh_seconds=0.3)
    api = new_project(client, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=1)
    s = api.checkin(agent_name="alice")
    with client.websocket_connect("/api/v1/events", headers={"X-API-Key": api.key}) as ws:
        ws.receive_json()
        ws.send_json({"type": "attach", "session_token": s["session_token"]})
        assert ws.receive_json()["type"] == "attached"
        time.sleep(3)
        assert [x["agent_name"] for x in api.get("/presence").json()["sessions"]] == ["alice"]
    timeouts = wait_for(lambda: [e for e in api.events() if e["type"] == "agent.timeout"], 8)
    assert len(timeouts) == 1
