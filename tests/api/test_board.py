"""The dashboard's read models: every conflict pair at once, the task board with why a task
waits, and the project's messages with their readers."""

from __future__ import annotations

from typing import Any

import pytest

from agentlanes.store import queries
from tests.api.conftest import Api, new_project
from tests.api.shared_app import client  # noqa: F401  (one app per module)


def _pairs(api: Api, query: str = "") -> dict[str, Any]:
    r = api.get(f"/conflicts{query}")
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _names(body: dict[str, Any]) -> set[tuple[str, str]]:
    return {(p["a"]["agent_name"], p["b"]["agent_name"]) for p in body["pairs"]}


def test_conflicts_lists_each_live_pair_once_from_the_older_side(api: Api) -> None:
    assert _pairs(api) == {
        "pairs": [],
        "total": 0,
        "truncated": False,
        "agents": [],
        "sessions": 0,
        "pending": 0,
        "offset": 0,
    }
    lint = api.checkin(agent_name="lint", declared_files=["**/*.py"])
    api.checkin(agent_name="api", declared_files=["src/api/**"], declared_area="backend")
    api.checkin(agent_name="docs", declared_files=["docs/*.md"])
    web = api.checkin(agent_name="web", declared_files=["web/app.py"], declared_area="backend")
    body = _pairs(api)
    assert body["sessions"] == 4 and body["total"] == 3 and not body["truncated"]
    assert _names(body) == {("lint", "api"), ("lint", "web"), ("api", "web")}
    by = {(p["a"]["agent_name"], p["b"]["agent_name"]): p for p in body["pairs"]}
    first = by[("lint", "api")]["overlapping_files"][0]
    # Seen from the older session: its pattern first.
    assert first["pattern"] == "**/*.py" and first["their_pattern"] == "src/api/**"
    assert first["example"].startswith("src/api/") and first["example"].endswith(".py")
    assert first["certain"] is True
    area = by[("api", "web")]
    assert area["overlapping_area"] is True and area["declared_area"] == "backend"
    assert area["overlapping_files"] == [] and area["certain"] is True
    assert by[("lint", "web")]["overlapping_files"][0]["example"] == "web/app.py"
    hot = body["agents"][0]
    assert hot["agent_name"] == "lint" and hot["partners"] == 2
    assert {a["agent_name"]: a["partners"] for a in body["agents"]} == {
        "lint": 2,
        "api": 2,
        "web": 2,
    }
    assert body["offset"] == api.events()[-1]["offset"]

    # A scope change and a checkout are reflected at once.
    r = api.post("/status", {"declared_files": ["lib/*.md"]}, token=web["session_token"])
    assert r.status_code == 200, r.text
    assert _names(_pairs(api)) == {("lint", "api"), ("api", "web")}
    r = api.post("/checkout", {}, token=lint["session_token"])
    assert r.status_code == 200, r.text
    body = _pairs(api)
    assert _names(body) == {("api", "web")} and body["sessions"] == 3


def test_conflicts_limit_truncates_but_counts_every_pair(api: Api) -> None:
    for i in range(6):
        api.checkin(agent_name=f"a{i}", declared_files=["src/**"])
    body = _pairs(api, "?limit=4")
    assert body["total"] == 15 and body["truncated"] is True and len(body["pairs"]) == 4
    assert all(a["partners"] == 5 for a in body["agents"])
    for bad in ("0", "10001", "x"):
        r = api.get(f"/conflicts?limit={bad}")
        assert r.status_code == 400, r.text
        assert r.json()["error"]["code"] == "VALIDATION_ERROR" and "limit" in r.text
    assert api.client.get("/api/v1/conflicts").status_code == 401


def test_conflicts_stay_within_the_project(api: Api) -> None:
    one, two = api, new_project(api.client)
    one.checkin(agent_name="a", declared_files=["x/**"])
    two.checkin(agent_name="b", declared_files=["x/**"])
    assert _pairs(one)["total"] == 0 and _pairs(two)["total"] == 0


def test_conflicts_read_the_live_projection_not_the_session_rows(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.checkin(agent_name="a", declared_files=["x/**"])
    api.checkin(agent_name="b", declared_files=["x/y.py"])
    presence = api.get("/presence").json()

    def no_row_reads(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("live sessions read from the database")

    monkeypatch.setattr(queries, "live_sessions", no_row_reads)
    body = _pairs(api)
    assert _names(body) == {("a", "b")}
    # The same sessions and offset as presence.
    assert body["sessions"] == 2 and body["offset"] == presence["offset"]


def _post(api: Api, path: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    r = api.post(path, body, token=token)
    assert r.status_code in (200, 201), r.text
    return r.json()  # type: ignore[no-any-return]


def test_task_board_says_why_each_task_waits(api: Api) -> None:
    alice = api.checkin(agent_name="alice", declared_files=["src/api/**"])
    bob = api.checkin(agent_name="bob", declared_files=["web/**"])
    tok = alice["session_token"]
    free = _post(api, "/tasks", tok, {"title": "free", "paths": ["docs/**"]})
    base = _post(api, "/tasks", tok, {"title": "base"})
    _post(api, "/tasks", tok, {"title": "after base", "depends_on": [base["task_id"]]})
    gated = _post(api, "/tasks", tok, {"title": "gated"})
    gate = _post(api, "/checkpoints", tok, {"name": "QA", "task_ids": [gated["task_id"]]})
    _post(api, "/tasks", tok, {"title": "busy", "paths": ["src/api/x.py"]})
    claimed = _post(api, "/tasks", tok, {"title": "claimed"})
    _post(api, f"/tasks/{claimed['task_id']}/claim", bob["session_token"], {})
    done = _post(api, "/tasks", tok, {"title": "finished"})
    _post(api, f"/tasks/{done['task_id']}/status", tok, {"status": "cancelled"})

    r = api.get("/board/tasks")
    assert r.status_code == 200, r.text
    tasks = {t["title"]: t for t in r.json()["tasks"]}
    assert tasks["free"]["state"] == "ready" and "waiting_on" not in tasks["free"]
    assert tasks["base"]["state"] == "ready"
    assert tasks["after base"]["state"] == "waiting"
    assert tasks["after base"]["waiting_on"]["dependencies"] == [
        {"task_id": base["task_id"], "title": "base", "status": "pending"}
    ]
    assert tasks["gated"]["waiting_on"]["checkpoints"] == [
        {"checkpoint_id": gate["checkpoint_id"], "name": "QA", "status": "pending"}
    ]
    claim = tasks["busy"]["waiting_on"]["claimed_paths"][0]
    assert claim["agent_name"] == "alice" and claim["example"] == "src/api/x.py"
    assert tasks["claimed"]["state"] == "claimed"
    assert tasks["claimed"]["claimed_by"]["agent_name"] == "bob"
    assert tasks["finished"]["state"] == "cancelled"
    # The board agrees with the ready list.
    ready = {t["task_id"] for t in api.get("/tasks/ready").json()["tasks"]}
    board_ready = {t["task_id"] for t in tasks.values() if t["state"] == "ready"}
    assert ready == board_ready == {free["task_id"], base["task_id"]}


def test_message_board_shows_every_message_with_its_readers(api: Api) -> None:
    alice = api.checkin(agent_name="alice")
    bob = api.checkin(agent_name="bob")
    carol = api.checkin(agent_name="carol")
    first = _post(
        api,
        "/messages",
        alice["session_token"],
        {"to": "bob", "body": "can you take the parser?", "thread_id": "parser"},
    )
    _post(
        api,
        "/messages",
        bob["session_token"],
        {"to": "alice", "body": "yes", "thread_id": "parser"},
    )
    note = _post(api, "/messages", carol["session_token"], {"to": "broadcast", "body": "deploying"})
    _post(api, f"/messages/{first['message_id']}/ack", bob["session_token"], {})
    _post(api, f"/messages/{note['message_id']}/read", alice["session_token"], {})

    r = api.get("/board/messages")
    assert r.status_code == 200, r.text
    messages = r.json()["messages"]
    assert [m["body"] for m in messages] == ["deploying", "yes", "can you take the parser?"]
    assert messages[2]["thread_id"] == "parser" and messages[2]["to"] == "bob"
    [ack] = messages[2]["receipts"]
    assert ack["agent_name"] == "bob" and ack["acked_at"] and ack["read_at"]
    [read] = messages[0]["receipts"]
    assert read["agent_name"] == "alice" and read["read_at"] and read["acked_at"] is None
    assert messages[1]["receipts"] == []
    assert len(api.get("/board/messages?limit=1").json()["messages"]) == 1
    assert api.get("/board/messages?limit=0").status_code == 400
