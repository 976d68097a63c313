"""Replay from the kept history: retention by count and by age, pruning, and a fresh
snapshot with ``recovered: false`` when ``since`` is older than what is kept."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api, new_project
from tests.support.waiting import wait_for


def _ws(api: Api, query: str = "") -> Any:
    return api.client.websocket_connect(f"/api/v1/events{query}", headers={"X-API-Key": api.key})


def test_history_is_pruned_by_count_and_older_since_gets_a_fresh_snapshot(
    app_factory: Any, database_url: str
) -> None:
    client = app_factory(
        database_url=database_url, event_retention_count=5, event_prune_seconds=0.2
    )
    api = new_project(client)
    other = new_project(client)
    for i in range(12):
        api.checkin(agent_name=f"a{i}")
    other.checkin(agent_name="elsewhere")
    assert wait_for(lambda: [e["offset"] for e in api.events()] == [8, 9, 10, 11, 12])
    assert [e["offset"] for e in other.events()] == [1]  # per project
    log = api.get("/events/log?since=2").json()
    assert log["recovered"] is False

    with _ws(api, "?since=2") as ws:
        snap = ws.receive_json()
        assert snap["type"] == "presence.snapshot" and snap["offset"] == 12
        assert len(snap["data"]["sessions"]) == 12
        epoch = snap["epoch"]
        assert ws.receive_json() == {
            "type": "replay.complete",
            "recovered": False,
            "offset": 12,
            "epoch": epoch,
        }
        api.checkin(agent_name="live")
        assert ws.receive_json()["offset"] == 13

    # Five kept (9-13 once the pruner has seen offset 13): since=8 is just inside.
    with _ws(api, "?since=8") as ws:
        assert [ws.receive_json()["offset"] for _ in range(5)] == [9, 10, 11, 12, 13]
        assert ws.receive_json() == {
            "type": "replay.complete",
            "recovered": True,
            "offset": 13,
            "epoch": epoch,
        }


def test_history_is_pruned_by_age(app_factory: Any, sqlite_url: str) -> None:
    client = app_factory(
        database_url=sqlite_url, event_retention_seconds=1, event_prune_seconds=0.2
    )
    api = new_project(client)
    for i in range(3):
        api.checkin(agent_name=f"a{i}")
    assert wait_for(lambda: api.events() == [], timeout=10)
    with _ws(api, "?since=1") as ws:
        snap = ws.receive_json()
        assert snap["type"] == "presence.snapshot"
        epoch = snap["epoch"]
        assert ws.receive_json() == {
            "type": "replay.complete",
            "recovered": False,
            "offset": 3,
            "epoch": epoch,
        }
    # Up to date: nothing was missed, even though nothing is kept.
    with _ws(api, "?since=3") as ws:
        assert ws.receive_json() == {
            "type": "replay.complete",
            "recovered": True,
            "offset": 3,
            "epoch": epoch,
        }
        api.checkin(agent_name="next")
        assert ws.receive_json()["offset"] == 4


def test_replay_then_live_sends_no_event_twice(api: Api) -> None:
    for i in range(4):
        api.checkin(agent_name=f"a{i}")
    with _ws(api, "?since=0") as ws:
        first = [ws.receive_json() for _ in range(5)]
        assert [f.get("offset") for f in first] == [1, 2, 3, 4, 4]
        assert first[-1]["type"] == "replay.complete"
        for i in range(3):
            api.checkin(agent_name=f"b{i}")
        assert [ws.receive_json()["offset"] for _ in range(3)] == [5, 6, 7]
        ws.send_json({"type": "ping"})
        assert ws.receive_json() == {"type": "pong"}  # nothing else was queued in between
