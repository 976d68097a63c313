"""Events: the log, the socket (snapshot, live, replay, ping, attach), browser tokens."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import Api, new_project


def _ws(api: Api, query: str = "") -> Any:
    return api.client.websocket_connect(f"/api/v1/events{query}", headers={"X-API-Key": api.key})


def test_every_change_writes_an_event_with_increasing_offsets(api: Api) -> None:
    a = api.checkin(agent_name="alice", declared_files=["src/**"])
    b = api.checkin(agent_name="bob", declared_files=["src/x.py"])
    api.post("/status", {"status_text": "busy"}, token=a["session_token"])
    api.post("/checkout", {}, token=b["session_token"])
    events = api.events()
    types = [e["type"] for e in events]
    assert types == [
        "agent.checkin",
        "agent.checkin",
        "agent.conflict",
        "agent.status",
        "agent.checkout",
    ]
    offsets = [e["offset"] for e in events]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets) and offsets[0] == 1
    assert all(e["ts"].endswith("Z") for e in events)


def test_socket_starts_with_a_snapshot_then_live_events(api: Api) -> None:
    api.checkin(agent_name="alice", declared_files=["a/**"])
    with _ws(api) as ws:
        snap = ws.receive_json()
        assert snap["type"] == "presence.snapshot"
        assert snap["offset"] == 1
        assert [s["agent_name"] for s in snap["data"]["sessions"]] == ["alice"]
        api.checkin(agent_name="bob", declared_files=["a/b.py"])
        first = ws.receive_json()
        second = ws.receive_json()
        assert (first["type"], first["offset"]) == ("agent.checkin", 2)
        assert (second["type"], second["offset"]) == ("agent.conflict", 3)
        assert second["data"]["conflicts"][0]["overlapping_files"][0]["example"] == "a/b.py"


def test_since_replays_missed_events_then_goes_live(api: Api) -> None:
    api.checkin(agent_name="a1")
    api.checkin(agent_name="a2")
    api.checkin(agent_name="a3")
    with _ws(api, "?since=1") as ws:
        got = [ws.receive_json(), ws.receive_json()]
        assert [e["offset"] for e in got] == [2, 3]
        done = ws.receive_json()
        assert done == {
            "type": "replay.complete",
            "recovered": True,
            "offset": 3,
            "epoch": api.get("/presence").json()["epoch"],
        }
        api.checkin(agent_name="a4")
        assert ws.receive_json()["offset"] == 4


def test_since_in_the_future_gets_a_fresh_snapshot(api: Api) -> None:
    api.checkin(agent_name="a1")
    with _ws(api, "?since=99") as ws:
        assert ws.receive_json()["type"] == "presence.snapshot"
        done = ws.receive_json()
        assert done["type"] == "replay.complete" and done["recovered"] is False


def test_ping_pong_and_bad_frames(api: Api) -> None:
    with _ws(api) as ws:
        ws.receive_json()
        ws.send_json({"type": "ping"})
        assert ws.receive_json() == {"type": "pong"}
        ws.send_text("not json")
        assert ws.receive_json()["error"]["code"] == "VALIDATION_ERROR"
        ws.send_json({"type": "dance"})
        assert ws.receive_json()["field"] == "type"


def test_attach_ties_the_session_to_the_socket(api: Api) -> None:
    s = api.checkin(agent_name="alice")
    with _ws(api) as ws:
        ws.receive_json()
        ws.send_json({"type": "attach", "session_token": s["session_token"]})
        reply = ws.receive_json()
        assert reply["type"] == "attached" and reply["session_id"] == s["session_id"]
        ws.send_json({"type": "attach", "session_token": "f" * 64})
        assert ws.receive_json()["error"]["code"] == "SESSION_NOT_FOUND"


def test_browser_token_opens_the_socket(api: Api) -> None:
    r = api.post("/realtime/token")
    assert r.status_code == 201
    token = r.json()["token"]
    with api.client.websocket_connect(f"/api/v1/events?token={token}") as ws:
        assert ws.receive_json()["type"] == "presence.snapshot"


def test_socket_without_credentials_is_refused(client: TestClient[Any]) -> None:
    with client.websocket_connect("/api/v1/events?token=bogus") as ws:
        frame = ws.receive_json()
        assert frame["error"]["code"] == "UNAUTHORIZED"


def test_event_log_pages_with_since_and_limit(api: Api) -> None:
    for i in range(5):
        api.checkin(agent_name=f"a{i}")
    r = api.get("/events/log?since=2&limit=2")
    body = r.json()
    assert [e["offset"] for e in body["events"]] == [3, 4]
    assert body["last_offset"] == 5
    assert api.get("/events/log?limit=0").json()["field"] == "limit"
    assert api.get("/events/log?since=abc").json()["field"] == "since"


def test_epoch_names_the_history_on_presence_snapshot_and_replay(api: Api) -> None:
    api.checkin(agent_name="a1")
    epoch = api.get("/presence").json()["epoch"]
    assert isinstance(epoch, str) and len(epoch) == 16
    assert api.get("/events/log").json()["epoch"] == epoch
    with _ws(api) as ws:
        snap = ws.receive_json()
        assert snap["type"] == "presence.snapshot" and snap["epoch"] == epoch
    with _ws(api, f"?since=0&epoch={epoch}") as ws:
        assert ws.receive_json()["offset"] == 1
        done = ws.receive_json()
        assert done["type"] == "replay.complete" and done["recovered"] is True
        assert done["epoch"] == epoch
    other = new_project(api.client)
    assert other.get("/presence").json()["epoch"] != epoch


def test_since_of_another_epoch_counts_as_too_old(api: Api) -> None:
    for i in range(3):
        api.checkin(agent_name=f"a{i}")
    with _ws(api, "?since=1&epoch=0123456789abcdef") as ws:
        snap = ws.receive_json()
        assert snap["type"] == "presence.snapshot" and snap["offset"] == 3
        done = ws.receive_json()
        assert (done["type"], done["recovered"], done["offset"]) == ("replay.complete", False, 3)
        api.checkin(agent_name="a4")
        assert ws.receive_json()["offset"] == 4
    log = api.get("/events/log?since=1&epoch=0123456789abcdef").json()
    assert log["recovered"] is False
    assert [e["offset"] for e in log["events"]] == [1, 2, 3, 4]  # the current history
    same = api.get(f"/events/log?since=1&epoch={log['epoch']}").json()
    assert same["recovered"] is True and [e["offset"] for e in same["events"]] == [2, 3, 4]


def test_event_log_since_past_the_last_offset_is_not_recovered(api: Api) -> None:
    for i in range(35):
        api.checkin(agent_name=f"a{i}")
    future = api.get("/events/log?since=999").json()
    assert future["last_offset"] == 35
    assert future["recovered"] is False
    assert future["events"][0]["offset"] == 1
    assert api.get("/events/log?since=35").json()["recovered"] is True
    assert api.get("/events/log?since=35").json()["events"] == []
    assert api.get("/events/log?since=0").json()["recovered"] is True
    assert api.get("/events/log?epoch=" + "x" * 40).json()["field"] == "epoch"
