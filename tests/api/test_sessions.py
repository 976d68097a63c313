"""Sessions over HTTP: check-in, conflicts, heartbeat, status, checkout, presence."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import Api, new_project


def test_checkin_returns_token_and_normalised_scope(api: Api) -> None:
    body = api.checkin(
        agent_name="alice", declared_area="api", declared_files=["./src//api/", " x.py "]
    )
    assert re.fullmatch(r"[0-9a-f]{64}", body["session_token"])
    assert body["status"] == "active"
    assert body["declared_files"] == ["src/api/", "x.py"]  # a trailing "/" is kept: a directory
    assert body["heartbeat_interval_seconds"] == 30
    assert body["heartbeat_ttl_seconds"] == 120
    assert body["expires_at"].endswith("Z")
    assert body["conflicts"] == []


def test_second_overlapping_checkin_reports_the_first_with_an_example(api: Api) -> None:
    first = api.checkin(agent_name="alice", declared_files=["src/api/**"])
    second = api.checkin(agent_name="bob", declared_files=["src/**/*.ts"])
    [conflict] = second["conflicts"]
    assert conflict["session_id"] == first["session_id"]
    assert conflict["agent_name"] == "alice"
    assert conflict["overlapping_area"] is False
    [overlap] = conflict["overlapping_files"]
    assert overlap["pattern"] == "src/**/*.ts"
    assert overlap["their_pattern"] == "src/api/**"
    assert overlap["example"].startswith("src/api/") and overlap["example"].endswith(".ts")


def test_same_area_is_a_conflict(api: Api) -> None:
    api.checkin(agent_name="alice", declared_area="billing")
    body = api.checkin(agent_name="bob", declared_area="billing")
    assert body["conflicts"][0]["overlapping_area"] is True
    assert api.checkin(agent_name="carol", declared_area="Billing")["conflicts"] == []


def test_omitted_agent_name_is_generated(api: Api) -> None:
    body = api.checkin()
    assert re.fullmatch(r"agent-[a-z]+-\d+", body["agent_name"])


def test_checkin_under_a_live_name_supersedes_without_conflict(api: Api) -> None:
    old = api.checkin(agent_name="alice", declared_files=["a/**"])
    new = api.checkin(agent_name="alice", declared_files=["a/**"])
    assert new["conflicts"] == []
    r = api.post("/heartbeat", token=old["session_token"])
    assert r.status_code == 410
    assert r.json()["error"]["code"] == "SESSION_ENDED"
    assert r.json()["status"] == "superseded"
    names = [s["session_id"] for s in api.get("/presence").json()["sessions"]]
    assert names == [new["session_id"]]


def test_block_mode_refuses_overlap_and_records_the_session_ended(block_api: Api) -> None:
    api = block_api
    api.checkin(agent_name="alice", declared_files=["src/*.py"])
    r = api.post("/checkin", {"agent_name": "bob", "declared_files": ["src/main.py"]})
    assert r.status_code == 409
    body = r.json()
    assert body["error"]["code"] == "CONFLICT"
    assert body["outcome_status"] == "blocked"
    assert body["session_id"].startswith("ses_")
    assert body["conflicts"][0]["overlapping_files"][0]["example"] == "src/main.py"
    assert "session_token" not in body
    assert [s["agent_name"] for s in api.get("/presence").json()["sessions"]] == ["alice"]
    blocked = [e for e in api.events() if e["type"] == "agent.conflict"]
    assert blocked and blocked[-1]["data"]["blocked"] is True


def test_heartbeat_extends_and_reports(api: Api) -> None:
    s = api.checkin(agent_name="alice")
    r = api.post("/heartbeat", token=s["session_token"])
    assert r.status_code == 200
    assert r.json()["status"] == "active"
    assert r.json()["expires_at"] >= s["expires_at"]


def test_token_in_body_is_accepted(api: Api) -> None:
    s = api.checkin(agent_name="alice")
    r = api.post("/heartbeat", {"session_token": s["session_token"]})
    assert r.status_code == 200, r.text


def test_unknown_token_is_404_and_foreign_project_token_too(
    client: TestClient[Any], api: Api
) -> None:
    r = api.post("/heartbeat", token="0" * 64)
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "SESSION_NOT_FOUND"
    other = new_project(client)
    s = other.checkin(agent_name="alice")
    assert api.post("/heartbeat", token=s["session_token"]).status_code == 404


def test_status_changes_scope_and_reports_fresh_conflicts(api: Api) -> None:
    api.checkin(agent_name="alice", declared_files=["docs/**"])
    s = api.checkin(agent_name="bob", declared_files=["src/**"])
    r = api.post(
        "/status",
        {"declared_files": ["docs/a.md"], "status_text": "writing"},
        token=s["session_token"],
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["declared_files"] == ["docs/a.md"]
    assert body["status_text"] == "writing"
    assert body["conflicts"][0]["agent_name"] == "alice"


def test_block_mode_refuses_a_conflicting_scope_change_and_keeps_the_old(block_api: Api) -> None:
    api = block_api
    api.checkin(agent_name="alice", declared_files=["docs/**"])
    s = api.checkin(agent_name="bob", declared_files=["src/**"])
    r = api.post("/status", {"declared_files": ["docs/x.md"]}, token=s["session_token"])
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "CONFLICT"
    [bob] = [x for x in api.get("/presence").json()["sessions"] if x["agent_name"] == "bob"]
    assert bob["declared_files"] == ["src/**"]
    assert api.post("/heartbeat", token=s["session_token"]).status_code == 200


def test_checkout_ends_the_session(api: Api) -> None:
    s = api.checkin(agent_name="alice")
    r = api.post(
        "/checkout",
        {"outcome_status": "partial", "work_summary": "half", "files_touched": ["a.py"]},
        token=s["session_token"],
    )
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "checked_out"
    assert r.json()["outcome_status"] == "partial"
    assert r.json()["ended_at"].endswith("Z")
    again = api.post("/heartbeat", token=s["session_token"])
    assert again.status_code == 410
    assert again.json()["status"] == "checked_out"
    assert api.get("/presence").json()["sessions"] == []


def test_presence_lists_live_sessions_oldest_first_without_tokens(api: Api) -> None:
    a = api.checkin(agent_name="alice", declared_files=["a/**"])
    b = api.checkin(agent_name="bob", declared_files=["b/**"])
    body = api.get("/presence").json()
    assert [s["session_id"] for s in body["sessions"]] == [a["session_id"], b["session_id"]]
    assert body["offset"] >= 2
    assert all("session_token" not in s for s in body["sessions"])
    assert set(body["sessions"][0]) >= {
        "session_id", "agent_name", "declared_area", "declared_files", "status_text",
        "started_at", "last_heartbeat_at", "expires_at",
    }  # fmt: skip


def test_conflict_check_changes_nothing_and_leaves_out_the_caller(api: Api) -> None:
    a = api.checkin(agent_name="alice", declared_files=["src/api/**"])
    api.checkin(agent_name="bob", declared_files=["src/api/routes.py"])
    before = api.events()
    r = api.post(
        "/conflicts/check", {"paths": ["src/api/routes.py", "README.md"]}, token=a["session_token"]
    )
    assert r.status_code == 200
    [c] = r.json()["conflicts"]
    assert c["agent_name"] == "bob"
    # When bob's pattern joined his claims (block mode lets the older claim stand).
    assert c["overlapping_files"][0].pop("claimed_at").endswith("Z")
    assert c["overlapping_files"] == [
        {
            "pattern": "src/api/routes.py",
            "their_pattern": "src/api/routes.py",
            "example": "src/api/routes.py",
            "certain": True,
        }
    ]
    anonymous = api.post("/conflicts/check", {"patterns": ["src/**"]})
    assert {c["agent_name"] for c in anonymous.json()["conflicts"]} == {"alice", "bob"}
    assert api.events() == before


def test_wrong_or_missing_api_key_is_401(client: TestClient[Any]) -> None:
    r = client.post("/api/v1/checkin", json={}, headers={"X-API-Key": "nope"})
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "UNAUTHORIZED"
    assert client.get("/api/v1/presence").status_code == 401


def test_admin_api_needs_the_admin_token(client: TestClient[Any]) -> None:
    assert client.post("/api/v1/projects", json={"name": "x"}).status_code == 401
    r = client.post("/api/v1/projects", json={"name": "x"}, headers={"Authorization": "Bearer bad"})
    assert r.status_code == 401


def test_project_slug_is_unique(client: TestClient[Any]) -> None:
    from tests.api.conftest import ADMIN

    assert (
        client.post("/api/v1/projects", json={"name": "Same Name"}, headers=ADMIN).status_code
        == 201
    )
    r = client.post("/api/v1/projects", json={"name": "Same Name"}, headers=ADMIN)
    assert r.status_code == 409
    assert r.json()["field"] == "slug"
