"""Admin API for projects: list, show, update (an event), rotate and revoke the key,
delete with all its data; bad input is a 4xx naming the field."""

from __future__ import annotations

import time
from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import ADMIN, Api, new_project


def admin(client: TestClient[Any], method: str, path: str, **kw: Any) -> Any:
    return client.request(method, f"/api/v1/projects{path}", headers=ADMIN, **kw)


def test_list_and_show_projects(client: TestClient[Any]) -> None:
    a = new_project(client, name="Alpha One")
    a.checkin(agent_name="alice", declared_files=["src/**"])
    listed = admin(client, "GET", "/").json()["projects"]
    assert "alpha-one" in [p["slug"] for p in listed]
    assert all("api_key" not in p and "api_key_hash" not in p for p in listed)
    shown = admin(client, "GET", "/alpha-one").json()
    assert shown["live_sessions"] == 1 and shown["last_offset"] >= 1
    assert shown["key"] == {"revoked_at": None, "previous_valid_until": None}
    r = admin(client, "GET", "/no-such-project")
    assert r.status_code == 404 and r.json()["error"]["code"] == "NOT_FOUND"


def test_update_changes_mode_and_heartbeat_and_writes_an_event(client: TestClient[Any]) -> None:
    api = new_project(client)
    slug = api.project["slug"]
    api.checkin(agent_name="alice", declared_files=["src/api/**"])
    r = admin(
        client,
        "PATCH",
        f"/{slug}",
        json={"conflict_mode": "block", "heartbeat_ttl_seconds": 300, "agent_config_keys": ["m"]},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["conflict_mode"] == "block" and body["heartbeat_ttl_seconds"] == 300
    assert body["changes"]["conflict_mode"] == {"from": "warn", "to": "block"}
    event = api.events()[-1]
    assert event["type"] == "project.updated"
    assert event["data"]["changes"]["heartbeat_ttl_seconds"] == {"from": 120, "to": 300}
    assert event["data"]["project"]["conflict_mode"] == "block"
    # Block mode now applies to the same key at once: an overlapping check-in is refused.
    r = api.post("/checkin", {"agent_name": "bob", "declared_files": ["src/api/x.py"]})
    assert r.status_code == 409, r.text
    assert api.get("/project").json()["agent_config_keys"] == ["m"]
    # Nothing changed, or nothing asked: no event.
    assert admin(client, "PATCH", f"/{slug}", json={}).json()["changes"] == {}
    offset = api.events()[-1]["offset"]
    assert (
        admin(client, "PATCH", f"/{slug}", json={"conflict_mode": "block"}).json()["changes"] == {}
    )
    assert api.events()[-1]["offset"] == offset


def test_update_refuses_bad_input_naming_the_field(client: TestClient[Any]) -> None:
    slug = new_project(client).project["slug"]
    cases = [
        ({"conflict_mode": "loud"}, "conflict_mode"),
        ({"heartbeat_interval_seconds": 0}, "heartbeat_interval_seconds"),
        ({"heartbeat_interval_seconds": 500}, "heartbeat_ttl_seconds"),  # ttl 120 < 500
        ({"agent_config_keys": ["bad key"]}, "agent_config_keys"),
        ({"slug": "x"}, "slug"),
    ]
    for body, field in cases:
        r = admin(client, "PATCH", f"/{slug}", json=body)
        assert r.status_code == 400, (body, r.text)
        assert field in r.text, (body, r.text)
    assert admin(client, "PATCH", "/nope", json={"conflict_mode": "warn"}).status_code == 404


def test_rotate_key_keeps_the_old_key_for_the_grace_period_then_401(
    client: TestClient[Any],
) -> None:
    api = new_project(client)
    slug = api.project["slug"]
    old = api.key
    r = admin(client, "POST", f"/{slug}/rotate-key", json={"grace_seconds": 1})
    assert r.status_code == 200, r.text
    new = r.json()["api_key"]
    assert new != old and new.startswith("alk_")
    assert r.json()["key"]["previous_valid_until"] is not None
    assert client.get("/api/v1/project", headers={"X-API-Key": new}).status_code == 200
    assert client.get("/api/v1/project", headers={"X-API-Key": old}).status_code == 200
    time.sleep(1.2)
    r = client.get("/api/v1/project", headers={"X-API-Key": old})
    assert r.status_code == 401 and "grace period" in r.json()["error"]["message"]
    assert client.get("/api/v1/project", headers={"X-API-Key": new}).status_code == 200
    assert Api(client, new, {}).events()[-1]["type"] == "project.key_rotated"


def test_rotate_key_defaults_to_the_settings_grace_and_zero_refuses_at_once(
    app_factory: Any, sqlite_url: str
) -> None:
    client = app_factory(database_url=sqlite_url, key_rotation_grace_seconds=600)
    api = new_project(client)
    slug = api.project["slug"]
    r = admin(client, "POST", f"/{slug}/rotate-key")  # no body at all
    assert r.status_code == 200, r.text
    assert client.get("/api/v1/project", headers={"X-API-Key": api.key}).status_code == 200
    second = r.json()["api_key"]
    r = admin(client, "POST", f"/{slug}/rotate-key", json={"grace_seconds": 0})
    third = r.json()["api_key"]
    # grace 0: the key just replaced stops at once; the one before it was dropped too.
    for gone in (api.key, second):
        assert client.get("/api/v1/project", headers={"X-API-Key": gone}).status_code == 401
    assert client.get("/api/v1/project", headers={"X-API-Key": third}).status_code == 200
    for bad in ({"grace_seconds": -1}, {"grace_seconds": 10**9}, {"grace": 5}):
        r = admin(client, "POST", f"/{slug}/rotate-key", json=bad)
        assert r.status_code == 400 and "grace" in r.text, r.text


def test_revoke_key_refuses_every_key_until_a_rotation(client: TestClient[Any]) -> None:
    api = new_project(client)
    slug = api.project["slug"]
    rotated = admin(client, "POST", f"/{slug}/rotate-key", json={"grace_seconds": 3600}).json()
    r = admin(client, "POST", f"/{slug}/revoke-key")
    assert r.status_code == 200 and r.json()["key"]["revoked_at"]
    assert "api_key" not in r.json()
    for key in (api.key, rotated["api_key"]):
        assert client.get("/api/v1/project", headers={"X-API-Key": key}).status_code == 401
    fresh = admin(client, "POST", f"/{slug}/rotate-key").json()
    assert fresh["key"] == {"revoked_at": None, "previous_valid_until": None}
    assert client.get("/api/v1/project", headers={"X-API-Key": fresh["api_key"]}).status_code == 200


def test_delete_removes_the_project_and_all_its_data(client: TestClient[Any]) -> None:
    api = new_project(client)
    other = new_project(client)
    slug = api.project["slug"]
    alice = api.checkin(agent_name="alice", declared_files=["src/**"])
    tok = alice["session_token"]
    task = api.post("/tasks", {"title": "t", "paths": ["src/**"]}, token=tok).json()
    api.post(f"/tasks/{task['task_id']}/notes", {"body": "n"}, token=tok)
    api.post("/tasks/" + task["task_id"] + "/claim", token=tok)
    api.post("/checkpoints", {"name": "c", "task_ids": [task["task_id"]]})
    api.post("/messages", {"to": "alice", "body": "hi"}, token=tok)
    api.post("/leases", {"resource": "db"}, token=tok)
    api.post("/consensus", {"action": "a", "reason": "r"}, token=tok)
    api.client.put("/api/v1/agents/alice", json={"role": "x"}, headers=api.headers())
    api.post("/realtime/token")
    other.checkin(agent_name="zed", declared_files=["x/**"])

    r = admin(client, "DELETE", f"/{slug}")
    assert r.status_code == 200, r.text
    counts = r.json()["rows_deleted"]
    for table in ("projects", "sessions", "events", "tasks", "task_notes", "checkpoints"):
        assert counts[table] >= 1, (table, counts)
    for table in ("messages", "leases", "consensus_requests", "agents", "realtime_tokens"):
        assert counts[table] >= 1, (table, counts)
    assert api.get("/project").status_code == 401
    assert admin(client, "GET", f"/{slug}").status_code == 404
    assert admin(client, "DELETE", f"/{slug}").status_code == 404
    # The other project is untouched.
    assert [s["agent_name"] for s in other.get("/presence").json()["sessions"]] == ["zed"]


def test_admin_routes_need_the_admin_token(client: TestClient[Any]) -> None:
    slug = new_project(client).project["slug"]
    for method, path in (
        ("GET", f"/{slug}"),
        ("PATCH", f"/{slug}"),
        ("DELETE", f"/{slug}"),
        ("POST", f"/{slug}/rotate-key"),
        ("POST", f"/{slug}/revoke-key"),
    ):
        r = client.request(
            method, f"/api/v1/projects{path}", headers={"Authorization": "Bearer wrong"}
        )
        assert r.status_code == 401, (method, path)
    assert admin(client, "GET", f"/{slug}").status_code == 200


def test_a_subscribed_socket_sees_project_changes_live(client: TestClient[Any]) -> None:
    api = new_project(client)
    slug = api.project["slug"]
    with client.websocket_connect("/api/v1/events", headers={"X-API-Key": api.key}) as ws:
        assert ws.receive_json()["type"] == "presence.snapshot"
        admin(client, "PATCH", f"/{slug}", json={"heartbeat_interval_seconds": 10})
        frame = ws.receive_json()
        assert frame["type"] == "project.updated"
        assert frame["data"]["changes"] == {"heartbeat_interval_seconds": {"from": 30, "to": 10}}
        admin(client, "POST", f"/{slug}/rotate-key", json={"grace_seconds": 60})
        frame = ws.receive_json()
        assert frame["type"] == "project.key_rotated" and frame["data"]["previous_valid_until"]
