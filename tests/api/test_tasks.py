"""Tasks over HTTP: create, list, ready list, claim, status machine, notes, stale claims."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api, new_project
from tests.api.shared_app import client  # noqa: F401  (one app per module)
from tests.support.waiting import wait_for


def _task(api: Api, token: str | None = None, **body: Any) -> dict[str, Any]:
    body.setdefault("title", "a task")
    r = api.post("/tasks", body, token=token)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def _ready_ids(api: Api, token: str | None = None) -> list[str]:
    r = api.get("/tasks/ready", token=token)
    assert r.status_code == 200, r.text
    return [t["task_id"] for t in r.json()["tasks"]]


def test_create_get_and_list_with_filters_and_pages(api: Api) -> None:
    alice = api.checkin(agent_name="alice")
    parent = _task(api, alice["session_token"], title="epic", priority=1)
    child = _task(
        api,
        title="  write docs ",
        description="the how-to",
        paths=["./docs//", "docs/**/*.md"],
        depends_on=[parent["task_id"], parent["task_id"]],
        parent_id=parent["task_id"],
    )
    assert child["task_id"].startswith("task_")
    assert child["title"] == "write docs"
    assert child["status"] == "pending" and child["priority"] == 2
    assert child["paths"] == ["docs/", "docs/**/*.md"]  # a trailing "/" is kept: a directory
    assert child["depends_on"] == [parent["task_id"]]
    assert parent["created_by"] == "alice" and child["created_by"] is None
    got = api.get(f"/tasks/{child['task_id']}").json()
    assert got["notes"] == [] and got["blocked_by"] == {
        "dependencies": [parent["task_id"]],
        "checkpoints": [],
    }
    listing = api.get(f"/tasks?parent_id={parent['task_id']}").json()
    assert [t["task_id"] for t in listing["tasks"]] == [child["task_id"]]
    page = api.get("/tasks?limit=1&offset=1").json()
    assert page["total"] == 2 and [t["task_id"] for t in page["tasks"]] == [child["task_id"]]
    assert api.get("/tasks?status=done").json()["total"] == 0
    created = [e for e in api.events() if e["type"] == "task.created"]
    assert [e["data"]["task"]["task_id"] for e in created] == [
        parent["task_id"],
        child["task_id"],
    ]
    assert created[0]["data"]["agent_name"] == "alice"


BAD_TASKS: list[tuple[dict[str, Any], str]] = [
    ({}, "title"),
    ({"title": "   "}, "title"),
    ({"title": "x" * 201}, "title"),
    ({"title": "t", "priority": 9}, "priority"),
    ({"title": "t", "priority": "high"}, "priority"),
    ({"title": "t", "paths": ["/abs"]}, "paths"),
    ({"title": "t", "paths": ["a/../b"]}, "paths"),
    ({"title": "t", "colour": "red"}, "colour"),
]
# Well-formed, but naming a task that does not exist: 404 naming the field.
UNKNOWN_REFERENCES: list[tuple[dict[str, Any], str]] = [
    ({"title": "t", "depends_on": ["task_nope"]}, "depends_on"),
    ({"title": "t", "parent_id": "task_nope"}, "parent_id"),
]


def test_bad_task_input_is_a_400_naming_the_field_and_changes_nothing(api: Api) -> None:
    before = api.events()
    for body, field in BAD_TASKS:
        r = api.post("/tasks", body)
        assert r.status_code == 400, (body, r.text)
        assert r.json()["error"]["code"] == "VALIDATION_ERROR"
        assert r.json()["field"] == field, body
    for body, field in UNKNOWN_REFERENCES:
        r = api.post("/tasks", body)
        assert r.status_code == 404, (body, r.text)
        assert r.json()["error"]["code"] == "NOT_FOUND" and r.json()["field"] == field, body
    assert api.get("/tasks").json()["total"] == 0
    assert api.events() == before


def test_bad_list_query_is_a_400(api: Api) -> None:
    for query in ["status=nope", "limit=0", "limit=501", "limit=x", "offset=-1", "stale=maybe"]:
        r = api.get(f"/tasks?{query}")
        assert r.status_code == 400 and r.json()["field"] == query.split("=")[0], query


def test_unknown_task_is_404(api: Api) -> None:
    assert api.get("/tasks/task_nope").status_code == 404
    s = api.checkin(agent_name="alice")
    r = api.post("/tasks/task_nope/claim", token=s["session_token"])
    assert r.status_code == 404 and r.json()["error"]["code"] == "NOT_FOUND"


def test_ready_list_orders_by_priority_then_age_and_waits_on_dependencies(api: Api) -> None:
    low = _task(api, title="low", priority=3)
    urgent = _task(api, title="urgent", priority=0)
    later_urgent = _task(api, title="later urgent", priority=0)
    dependent = _task(api, title="after low", priority=0, depends_on=[low["task_id"]])
    assert _ready_ids(api) == [urgent["task_id"], later_urgent["task_id"], low["task_id"]]
    s = api.checkin(agent_name="alice")
    token = s["session_token"]
    assert api.post(f"/tasks/{low['task_id']}/claim", token=token).status_code == 200
    assert low["task_id"] not in _ready_ids(api)  # claimed
    r = api.post(f"/tasks/{low['task_id']}/status", {"status": "done"}, token=token)
    assert r.status_code == 200, r.text
    assert _ready_ids(api) == [
        urgent["task_id"],
        later_urgent["task_id"],
        dependent["task_id"],
    ]


def test_ready_list_leaves_out_tasks_whose_paths_a_live_session_claims(api: Api) -> None:
    task = _task(api, title="api work", paths=["src/api/**"])
    free = _task(api, title="docs", paths=["docs/**"])
    bob = api.checkin(agent_name="bob", declared_files=["src/**/*.py"])
    assert _ready_ids(api) == [task["task_id"], free["task_id"]][1:]
    # Bob's own claims do not hide a task from Bob.
    assert task["task_id"] in _ready_ids(api, bob["session_token"])
    # A claimed task's paths count too: carol works on docs, so docs-overlapping work waits.
    carol = api.checkin(agent_name="carol")
    assert api.post(f"/tasks/{free['task_id']}/claim", token=carol["session_token"]).status_code
    more_docs = _task(api, title="more docs", paths=["docs/guide.md"])
    assert more_docs["task_id"] not in _ready_ids(api)
    api.post("/checkout", token=bob["session_token"])
    assert task["task_id"] in _ready_ids(api)


def test_claim_is_exclusive_and_one_active_task_per_session(api: Api) -> None:
    first = _task(api, title="one")
    second = _task(api, title="two")
    alice = api.checkin(agent_name="alice")
    bob = api.checkin(agent_name="bob")
    r = api.post(f"/tasks/{first['task_id']}/claim", token=alice["session_token"])
    assert r.status_code == 200
    assert r.json()["status"] == "in_progress"
    assert r.json()["claimed_by"] == {"session_id": alice["session_id"], "agent_name": "alice"}
    r = api.post(f"/tasks/{first['task_id']}/claim", token=bob["session_token"])
    assert r.status_code == 409 and r.json()["error"]["code"] == "TASK_ALREADY_CLAIMED"
    assert r.json()["claimed_by"]["agent_name"] == "alice"
    # Claiming again what you hold changes nothing.
    again = api.post(f"/tasks/{first['task_id']}/claim", token=alice["session_token"])
    assert again.status_code == 200
    r = api.post(f"/tasks/{second['task_id']}/claim", token=alice["session_token"])
    assert r.status_code == 409 and r.json()["active_task_id"] == first["task_id"]
    claimed = [e for e in api.events() if e["type"] == "task.claimed"]
    assert len(claimed) == 1 and claimed[0]["data"]["agent_name"] == "alice"


def test_claim_needs_a_live_session_token(api: Api) -> None:
    task = _task(api)
    r = api.post(f"/tasks/{task['task_id']}/claim")
    assert r.status_code == 400 and r.json()["field"] == "session_token"
    r = api.post(f"/tasks/{task['task_id']}/claim", token="0" * 64)
    assert r.status_code == 404 and r.json()["error"]["code"] == "SESSION_NOT_FOUND"
    s = api.checkin(agent_name="alice")
    api.post("/checkout", token=s["session_token"])
    r = api.post(f"/tasks/{task['task_id']}/claim", token=s["session_token"])
    assert r.status_code == 410
    assert api.get(f"/tasks/{task['task_id']}").json()["status"] == "pending"


def test_a_task_waiting_on_a_dependency_cannot_be_claimed(api: Api) -> None:
    base = _task(api, title="base")
    top = _task(api, title="top", depends_on=[base["task_id"]])
    s = api.checkin(agent_name="alice")
    r = api.post(f"/tasks/{top['task_id']}/claim", token=s["session_token"])
    assert r.status_code == 409
    assert r.json()["blocked_by"]["dependencies"] == [base["task_id"]]


def test_status_machine_refuses_a_transition_naming_the_allowed_ones(api: Api) -> None:
    task = _task(api)
    tid = task["task_id"]
    r = api.post(f"/tasks/{tid}/status", {"status": "done"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "CONFLICT"
    body = r.json()
    assert body["field"] == "status" and body["allowed"] == ["blocked", "cancelled"]
    assert "blocked, cancelled" in body["error"]["message"]
    r = api.post(f"/tasks/{tid}/status", {"status": "in_progress"})
    assert r.status_code == 409 and "claim" in r.json()["error"]["message"]
    r = api.post(f"/tasks/{tid}/status", {"status": "sleeping"})
    assert r.status_code == 400 and r.json()["field"] == "status"
    r = api.post(f"/tasks/{tid}/status", {"status": "blocked", "note": "waiting on infra"})
    assert r.status_code == 200 and r.json()["status"] == "blocked"
    assert api.post(f"/tasks/{tid}/status", {"status": "pending"}).status_code == 200
    assert api.post(f"/tasks/{tid}/status", {"status": "cancelled"}).status_code == 200
    r = api.post(f"/tasks/{tid}/status", {"status": "pending"})
    assert r.status_code == 409 and r.json()["allowed"] == []
    changes = [
        (e["data"]["from"], e["data"]["to"]) for e in api.events() if e["type"] == "task.status"
    ]
    assert changes == [("pending", "blocked"), ("blocked", "pending"), ("pending", "cancelled")]
    notes = api.get(f"/tasks/{tid}").json()["notes"]
    assert [n["body"] for n in notes] == ["waiting on infra"]


def test_only_the_claiming_session_changes_a_claimed_task(api: Api) -> None:
    task = _task(api)
    tid = task["task_id"]
    alice = api.checkin(agent_name="alice")
    bob = api.checkin(agent_name="bob")
    api.post(f"/tasks/{tid}/claim", token=alice["session_token"])
    r = api.post(f"/tasks/{tid}/status", {"status": "done"}, token=bob["session_token"])
    assert r.status_code == 409 and r.json()["error"]["code"] == "TASK_ALREADY_CLAIMED"
    assert api.post(f"/tasks/{tid}/status", {"status": "done"}).status_code == 409
    r = api.post(f"/tasks/{tid}/status", {"status": "done"}, token=alice["session_token"])
    assert r.status_code == 200
    done = r.json()
    assert done["status"] == "done" and done["claimed_by"] is None
    # Alice is free to take the next one.
    nxt = _task(api)
    assert (
        api.post(f"/tasks/{nxt['task_id']}/claim", token=alice["session_token"]).status_code == 200
    )


def test_notes_are_kept_in_order_with_their_author(api: Api) -> None:
    task = _task(api)
    s = api.checkin(agent_name="alice")
    r = api.post(f"/tasks/{task['task_id']}/notes", {"body": "started"}, token=s["session_token"])
    assert r.status_code == 201 and r.json()["author"] == "alice"
    api.post(f"/tasks/{task['task_id']}/notes", {"body": "from a person"})
    r = api.post(f"/tasks/{task['task_id']}/notes", {"body": ""})
    assert r.status_code == 400 and r.json()["field"] == "body"
    r = api.post(f"/tasks/{task['task_id']}/notes", {"body": "x" * 10_001})
    assert r.status_code == 400 and r.json()["field"] == "body"
    notes = api.get(f"/tasks/{task['task_id']}").json()["notes"]
    assert [(n["author"], n["body"]) for n in notes] == [
        ("alice", "started"),
        ("api", "from a person"),
    ]
    assert len([e for e in api.events() if e["type"] == "task.note"]) == 2


def test_checkout_releases_the_claim(api: Api) -> None:
    task = _task(api)
    s = api.checkin(agent_name="alice")
    api.post(f"/tasks/{task['task_id']}/claim", token=s["session_token"])
    assert api.post("/checkout", token=s["session_token"]).status_code == 200
    got = api.get(f"/tasks/{task['task_id']}").json()
    assert got["status"] == "pending" and got["claimed_by"] is None
    [released] = [e for e in api.events() if e["type"] == "task.released"]
    assert released["data"]["reason"] == "checked_out"
    assert released["data"]["agent_name"] == "alice"
    assert _ready_ids(api) == [task["task_id"]]


def test_superseded_session_releases_its_claim(api: Api) -> None:
    task = _task(api)
    old = api.checkin(agent_name="alice")
    api.post(f"/tasks/{task['task_id']}/claim", token=old["session_token"])
    api.checkin(agent_name="alice")
    [released] = [e for e in api.events() if e["type"] == "task.released"]
    assert released["data"]["reason"] == "superseded"


def test_timed_out_claim_goes_stale_with_a_note_and_can_be_taken_over(api: Api) -> None:
    api = new_project(api.client, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=1)
    task = _task(api)
    tid = task["task_id"]
    alice = api.checkin(agent_name="alice")
    api.post(f"/tasks/{tid}/claim", token=alice["session_token"])
    stale = wait_for(lambda: [e for e in api.events() if e["type"] == "task.stale"], 8)
    assert len(stale) == 1
    data = stale[0]["data"]
    assert data["session_id"] == alice["session_id"] and data["task"]["stale_since"]
    got = api.get(f"/tasks/{tid}").json()
    assert got["status"] == "in_progress" and got["stale_since"] is not None
    [note] = got["notes"]
    assert note["author"] == "system" and note["kind"] == "system"
    assert alice["session_id"] in note["body"]
    assert api.get("/tasks?stale=true").json()["total"] == 1
    bob = api.checkin(agent_name="bob")
    r = api.post(f"/tasks/{tid}/claim", token=bob["session_token"])
    assert r.status_code == 200, r.text
    assert r.json()["stale_since"] is None and r.json()["claimed_by"]["agent_name"] == "bob"
    claimed = [e for e in api.events() if e["type"] == "task.claimed"]
    assert claimed[-1]["data"]["took_over"]["agent_name"] == "alice"


def test_bad_status_note_and_claim_input_is_a_400_and_changes_nothing(api: Api) -> None:
    task = _task(api)
    tid = task["task_id"]
    s = api.checkin(agent_name="alice")["session_token"]
    before = api.events()
    cases = [
        ("status", {}, "status"),
        ("status", {"status": 3}, "status"),
        ("status", {"status": "blocked", "note": "n" * 10_001}, "note"),
        ("status", {"status": "blocked", "colour": "red"}, "colour"),
        ("notes", {}, "body"),
        ("notes", {"body": ["x"]}, "body"),
        ("claim", {"session_token": "short"}, "session_token"),
        ("claim", {"extra": 1}, "extra"),
    ]
    for route, body, field in cases:
        r = api.post(f"/tasks/{tid}/{route}", body)
        assert r.status_code == 400 and r.json()["field"] == field, (route, body, r.text)
    r = api.client.post(
        f"/api/v1/tasks/{tid}/claim",
        content=b"{not json",
        headers={**api.headers(s), "Content-Type": "application/json"},
    )
    assert r.status_code == 400 and r.json()["field"] == "body"
    assert api.events() == before
    got = api.get(f"/tasks/{tid}").json()
    assert got["status"] == "pending" and got["notes"] == [] and got["claimed_by"] is None
