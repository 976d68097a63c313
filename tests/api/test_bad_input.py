"""Every field of every endpoint: bad input is a 400 naming the field, and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.api.conftest import ADMIN, Api

LONG = "a" * 1025

CHECKIN = [
    ({"agent_name": ""}, "agent_name"),
    ({"agent_name": "has space"}, "agent_name"),
    ({"agent_name": "x" * 65}, "agent_name"),
    ({"agent_name": 5}, "agent_name"),
    ({"declared_area": ""}, "declared_area"),
    ({"declared_area": "x" * 257}, "declared_area"),
    ({"declared_area": ["a"]}, "declared_area"),
    ({"declared_files": "src/**"}, "declared_files"),
    ({"declared_files": [""]}, "declared_files"),
    ({"declared_files": ["/etc/passwd"]}, "declared_files"),
    ({"declared_files": ["src/../secret"]}, "declared_files"),
    ({"declared_files": ["a\x00b"]}, "declared_files"),
    ({"declared_files": [LONG]}, "declared_files"),
    ({"declared_files": [f"p{i}" for i in range(257)]}, "declared_files"),
    ({"declared_files": [3]}, "declared_files"),
    ({"meta": "x"}, "meta"),
    ({"meta": {"big": "x" * 20_000}}, "meta"),
    ({"unknown": 1}, "unknown"),
    ({"meta": {"k": "a\x00b"}}, "meta"),
    ({"declared_area": "a\x00"}, "declared_area"),
]

STATUS = [
    ({"declared_area": ""}, "declared_area"),
    ({"declared_files": ["../x"]}, "declared_files"),
    ({"declared_files": {"a": 1}}, "declared_files"),
    ({"status_text": 7}, "status_text"),
    ({"status_text": "x" * 2001}, "status_text"),
    ({"colour": "red"}, "colour"),
    ({"status_text": "nul\x00byte"}, "status_text"),
]

CHECKOUT = [
    ({"outcome_status": "done"}, "outcome_status"),
    ({"work_summary": "x" * 10_001}, "work_summary"),
    ({"work_summary": 3}, "work_summary"),
    ({"files_touched": ["/abs"]}, "files_touched"),
    ({"files_touched": "a.py"}, "files_touched"),
    ({"work_summary": "\x00"}, "work_summary"),
]

CHECK = [
    ({"paths": ["../x"]}, "paths"),
    ({"paths": "a"}, "paths"),
    ({"patterns": [""]}, "patterns"),
    ({"declared_area": 4}, "declared_area"),
    ({"extra": True}, "extra"),
]

PROJECT = [
    ({}, "name"),
    ({"name": ""}, "name"),
    ({"name": "ok", "slug": "Bad Slug"}, "slug"),
    ({"name": "ok", "conflict_mode": "loud"}, "conflict_mode"),
    ({"name": "ok", "heartbeat_interval_seconds": 0}, "heartbeat_interval_seconds"),
    ({"name": "ok", "heartbeat_ttl_seconds": "9"}, "heartbeat_ttl_seconds"),
    (
        {"name": "ok", "heartbeat_interval_seconds": 60, "heartbeat_ttl_seconds": 30},
        "heartbeat_ttl_seconds",
    ),
    ({"name": "ok", "agent_config_keys": ["bad key"]}, "agent_config_keys"),
]


def _state(api: Api) -> tuple[Any, Any]:
    return api.get("/presence").json()["sessions"], api.get("/events/log?limit=1000").json()[
        "events"
    ]


def _assert_400(r: Any, field: str) -> None:
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"]["code"] == "VALIDATION_ERROR"
    assert body["field"] == field, body
    assert field in body["error"]["message"], body


@pytest.mark.parametrize(("body", "field"), CHECKIN)
def test_checkin_bad_field(api: Api, body: dict[str, Any], field: str) -> None:
    before = _state(api)
    _assert_400(api.post("/checkin", body), field)
    assert _state(api) == before


@pytest.mark.parametrize(("body", "field"), STATUS)
def test_status_bad_field(api: Api, body: dict[str, Any], field: str) -> None:
    s = api.checkin(agent_name="alice", declared_files=["src/**"])
    before = _state(api)
    _assert_400(api.post("/status", body, token=s["session_token"]), field)
    assert _state(api) == before


@pytest.mark.parametrize(("body", "field"), CHECKOUT)
def test_checkout_bad_field(api: Api, body: dict[str, Any], field: str) -> None:
    s = api.checkin(agent_name="alice")
    before = _state(api)
    _assert_400(api.post("/checkout", body, token=s["session_token"]), field)
    assert _state(api) == before


@pytest.mark.parametrize(("body", "field"), CHECK)
def test_conflict_check_bad_field(api: Api, body: dict[str, Any], field: str) -> None:
    _assert_400(api.post("/conflicts/check", body), field)


@pytest.mark.parametrize("path", ["/heartbeat", "/status", "/checkout"])
@pytest.mark.parametrize(("token", "field"), [(None, "session_token"), ("XYZ", "session_token")])
def test_missing_or_malformed_token(api: Api, path: str, token: str | None, field: str) -> None:
    before = _state(api)
    _assert_400(api.post(path, {} if token is None else {"session_token": token}), field)
    assert _state(api) == before


@pytest.mark.parametrize(("body", "field"), PROJECT)
def test_project_bad_field(client: TestClient[Any], body: dict[str, Any], field: str) -> None:
    before = client.get("/api/v1/projects", headers=ADMIN).json()
    _assert_400(client.post("/api/v1/projects", json=body, headers=ADMIN), field)
    assert client.get("/api/v1/projects", headers=ADMIN).json() == before


def test_malformed_json_and_non_object_bodies(api: Api) -> None:
    r = api.client.post(
        "/api/v1/checkin",
        content=b"{nope",
        headers={**api.headers(), "Content-Type": "application/json"},
    )
    _assert_400(r, "body")
    _assert_400(api.post("/checkin", [1, 2]), "body")


def test_too_large_body_is_413(app_factory: Any, sqlite_url: str) -> None:
    from tests.api.conftest import new_project

    client = app_factory(database_url=sqlite_url, max_body_bytes=4096)
    api = new_project(client)
    r = api.post("/checkin", {"meta": {"x": "y" * 10_000}})
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


def test_unknown_route_is_a_json_404(api: Api) -> None:
    r = api.get("/nowhere")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "NOT_FOUND"


def test_out_of_range_and_non_ascii_query_integers(api: Api) -> None:
    for raw in ("9" * 30, "-" + "9" * 30, "²"):
        r = api.get(f"/events/log?since={raw}")
        assert r.status_code == 400, r.text
        assert r.json()["field"] == "since"


def test_an_empty_or_padded_query_value_is_not_read_as_absent(api: Api) -> None:
    """The document says integer and boolean: ``?limit=`` is neither (a fuzzing run found
    it read as no limit), nor is `` 5``."""
    for path, field in (
        ("/tasks/ready?limit=", "limit"),
        ("/agents?limit=", "limit"),
        ("/tasks?offset=", "offset"),
        ("/board/messages?limit=", "limit"),
        ("/conflicts?limit=", "limit"),
        ("/events/log?since=", "since"),
        ("/events/log?since=%205", "since"),
        ("/messages/inbox?after_id=", "after_id"),
        ("/tasks?stale=", "stale"),
        ("/leases?include_ended=%20true", "include_ended"),
    ):
        token = api.checkin()["session_token"] if "inbox" in path else None
        r = api.get(path, token=token)
        assert r.status_code == 400, (path, r.text)
        assert r.json()["field"] == field, path
    assert api.get("/tasks?limit=5&stale=TRUE").status_code == 200
    assert api.get("/events/log?since=%2B0").status_code == 200


def test_deeply_nested_json_is_a_400(api: Api) -> None:
    body = b'{"meta": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    r = api.client.post(
        "/api/v1/checkin",
        content=body,
        headers={**api.headers(), "Content-Type": "application/json"},
    )
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"


def test_heartbeat_body_is_checked_when_it_carries_the_token(api: Api) -> None:
    s = api.checkin(agent_name="alice")
    ok = api.post("/heartbeat", {"session_token": s["session_token"]})
    assert ok.status_code == 200 and ok.json()["session_id"] == s["session_id"]
    _assert_400(api.post("/heartbeat", {"session_token": 5}), "session_token")
    _assert_400(api.post("/heartbeat", [1]), "body")
    r = api.client.post(
        "/api/v1/heartbeat",
        content=b"{nope",
        headers={**api.headers(), "Content-Type": "application/json"},
    )
    _assert_400(r, "body")


@pytest.mark.parametrize("path", ["/checkin", "/conflicts/check", "/messages", "/tasks"])
def test_a_body_that_is_not_utf8_is_a_400_naming_the_body(api: Api, path: str) -> None:
    r = api.client.post(
        f"/api/v1{path}",
        content=b'{"agent_name": "\xff\xfe"}',
        headers={**api.headers(), "content-type": "application/json"},
    )
    assert r.status_code == 400, r.text
    assert r.json()["field"] == "body" and "UTF-8" in r.json()["error"]["message"]


def test_an_admin_body_that_is_not_utf8_is_a_400(client: TestClient[Any]) -> None:
    r = client.post(
        "/api/v1/projects",
        content=b'{"name": "\xc3("}',
        headers={**ADMIN, "content-type": "application/json"},
    )
    assert r.status_code == 400, r.text
    assert "UTF-8" in r.json()["error"]["message"]


@pytest.mark.parametrize("path", ["/static/app.js%00.html", "/static/%00", "/static/a%00/b.js"])
def test_a_path_with_a_nul_byte_is_not_found(client: TestClient[Any], path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404, r.text
