"""Checkpoints: gates over tasks; a task is ready only when every gate over it passed."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api
from tests.api.shared_app import client  # noqa: F401  (one app per module)


def _task(api: Api, title: str) -> str:
    r = api.post("/tasks", {"title": title})
    assert r.status_code == 201, r.text
    return str(r.json()["task_id"])


def _checkpoint(api: Api, name: str, task_ids: list[str]) -> dict[str, Any]:
    r = api.post("/checkpoints", {"name": name, "task_ids": task_ids})
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def _ready(api: Api) -> list[str]:
    return [t["task_id"] for t in api.get("/tasks/ready").json()["tasks"]]


def test_a_task_is_unblocked_only_when_all_its_gates_passed(api: Api) -> None:
    deploy = _task(api, "deploy")
    announce = _task(api, "announce")
    review = _checkpoint(api, "code review", [deploy, announce])
    qa = _checkpoint(api, "qa sign-off", [deploy])
    assert review["checkpoint_id"].startswith("chk_") and review["status"] == "pending"
    assert _ready(api) == []
    r = api.post(f"/checkpoints/{review['checkpoint_id']}/resolve", {"status": "passed"})
    assert r.status_code == 200, r.text
    assert r.json()["unblocked_task_ids"] == [announce]  # deploy still waits on qa
    assert _ready(api) == [announce]
    assert api.get(f"/tasks/{deploy}").json()["blocked_by"]["checkpoints"] == [qa["checkpoint_id"]]
    s = api.checkin(agent_name="alice")
    r = api.post(f"/tasks/{deploy}/claim", token=s["session_token"])
    assert r.status_code == 409 and r.json()["blocked_by"]["checkpoints"] == [qa["checkpoint_id"]]
    r = api.post(
        f"/checkpoints/{qa['checkpoint_id']}/resolve",
        {"status": "passed", "note": "all green"},
        token=s["session_token"],
    )
    assert r.json()["unblocked_task_ids"] == [deploy]
    assert r.json()["resolved_by"] == "alice" and r.json()["note"] == "all green"
    assert set(_ready(api)) == {deploy, announce}
    types = [e["type"] for e in api.events() if e["type"].startswith("checkpoint.")]
    assert types == [
        "checkpoint.created",
        "checkpoint.created",
        "checkpoint.resolved",
        "checkpoint.resolved",
    ]


def test_a_failed_gate_keeps_its_tasks_blocked(api: Api) -> None:
    task = _task(api, "release")
    cp = _checkpoint(api, "security review", [task])
    r = api.post(f"/checkpoints/{cp['checkpoint_id']}/resolve", {"status": "failed"})
    assert r.status_code == 200 and r.json()["status"] == "failed"
    assert r.json()["unblocked_task_ids"] == []
    assert _ready(api) == []


def test_a_resolved_checkpoint_cannot_be_resolved_again(api: Api) -> None:
    cp = _checkpoint(api, "gate", [_task(api, "t")])
    url = f"/checkpoints/{cp['checkpoint_id']}/resolve"
    assert api.post(url, {"status": "failed"}).status_code == 200
    before = api.events()
    r = api.post(url, {"status": "passed"})
    assert r.status_code == 409 and r.json()["status"] == "failed"
    assert api.get(f"/checkpoints/{cp['checkpoint_id']}").json()["status"] == "failed"
    assert api.events() == before


def test_list_and_get_checkpoints(api: Api) -> None:
    a, b = _task(api, "a"), _task(api, "b")
    first = _checkpoint(api, "one", [a])
    second = _checkpoint(api, "two", [a, b])
    api.post(f"/checkpoints/{first['checkpoint_id']}/resolve", {"status": "passed"})
    everything = api.get("/checkpoints").json()
    assert [c["checkpoint_id"] for c in everything["checkpoints"]] == [
        first["checkpoint_id"],
        second["checkpoint_id"],
    ]
    pending = api.get("/checkpoints?status=pending").json()["checkpoints"]
    assert [c["checkpoint_id"] for c in pending] == [second["checkpoint_id"]]
    over_b = api.get(f"/checkpoints?task_id={b}").json()
    assert over_b["total"] == 1 and over_b["checkpoints"][0]["name"] == "two"
    assert api.get("/checkpoints/chk_nope").status_code == 404


def test_bad_checkpoint_input_is_a_400_and_changes_nothing(api: Api) -> None:
    task = _task(api, "t")
    before = api.events()
    cases = [
        ({"task_ids": [task]}, "name"),
        ({"name": "g"}, "task_ids"),
        ({"name": "g", "task_ids": []}, "task_ids"),
        ({"name": "x" * 201, "task_ids": [task]}, "name"),
        ({"name": "g", "task_ids": task}, "task_ids"),
    ]
    for body, field in cases:
        r = api.post("/checkpoints", body)
        assert r.status_code == 400 and r.json()["field"] == field, (body, r.text)
    # Well-formed but naming a task that does not exist: 404 naming the field.
    r = api.post("/checkpoints", {"name": "g", "task_ids": [task, "task_nope"]})
    assert r.status_code == 404 and r.json()["field"] == "task_ids" and r.json()["index"] == 1
    cp = _checkpoint(api, "g", [task])
    before = api.events()
    for body in ({}, {"status": "maybe"}, {"status": "pending"}):
        r = api.post(f"/checkpoints/{cp['checkpoint_id']}/resolve", body)
        assert r.status_code == 400 and r.json()["field"] == "status", body
    assert api.get("/checkpoints?status=nope").status_code == 400
    assert api.events() == before
    assert api.get(f"/checkpoints/{cp['checkpoint_id']}").json()["status"] == "pending"
