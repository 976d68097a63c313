"""Leases: exclusive holds on any resource key, renew, release, expiry, fencing tokens."""

from __future__ import annotations

import time
from typing import Any

from litestar.testing import TestClient

from agentlanes.api.app import create_app
from tests.api.conftest import Api, new_project
from tests.api.shared_app import client  # noqa: F401  (one app per module)
from tests.support.waiting import wait_for


def _acquire(api: Api, token: str, resource: str, **body: Any) -> Any:
    return api.post("/leases", {"resource": resource, **body}, token=token)


def test_a_lease_is_exclusive_and_the_conflict_names_the_holder(api: Api) -> None:
    alice = api.checkin(agent_name="alice")
    bob = api.checkin(agent_name="bob")
    r = _acquire(api, alice["session_token"], "deploy:prod")
    assert r.status_code == 201, r.text
    lease = r.json()
    assert lease["lease_id"].startswith("lease_") and lease["status"] == "active"
    assert lease["fencing_token"] == 1 and lease["ttl_seconds"] == 1800
    assert lease["agent_name"] == "alice"
    r = _acquire(api, bob["session_token"], "deploy:prod")
    assert r.status_code == 409
    body = r.json()
    assert body["error"]["code"] == "LEASE_CONFLICT" and body["conflict"] is True
    assert body["lease_holder"]["agent_name"] == "alice"
    assert body["lease_holder"]["session_id"] == alice["session_id"]
    assert body["lease_holder"]["expires_at"] == lease["expires_at"]
    # Another resource is free; keys are exact (case and spaces count).
    assert _acquire(api, bob["session_token"], "contact:alice@example.com").status_code == 201
    assert _acquire(api, bob["session_token"], "Deploy:prod").status_code == 201
    # Acquiring what you hold extends it and keeps the token.
    again = _acquire(api, alice["session_token"], "deploy:prod")
    assert again.status_code == 200 and again.json()["fencing_token"] == 1


def test_renew_release_and_list(api: Api) -> None:
    alice = api.checkin(agent_name="alice")
    bob = api.checkin(agent_name="bob")
    lease = _acquire(api, alice["session_token"], "db:migrate", ttl_seconds=60).json()
    lid = lease["lease_id"]
    r = api.post(f"/leases/{lid}/renew", {"ttl_seconds": 600}, token=alice["session_token"])
    assert r.status_code == 200 and r.json()["ttl_seconds"] == 600
    assert r.json()["expires_at"] > lease["expires_at"]
    r = api.post(f"/leases/{lid}/renew", token=bob["session_token"])
    assert r.status_code == 409 and r.json()["lease_holder"]["agent_name"] == "alice"
    assert [x["lease_id"] for x in api.get("/leases").json()["leases"]] == [lid]
    assert api.get("/leases?agent_name=bob").json()["leases"] == []
    r = api.post(f"/leases/{lid}/release", token=alice["session_token"])
    assert r.status_code == 200 and r.json()["status"] == "released"
    assert api.post(f"/leases/{lid}/release", token=alice["session_token"]).status_code == 409
    assert api.post(f"/leases/{lid}/renew", token=alice["session_token"]).status_code == 409
    assert api.get("/leases").json()["leases"] == []
    ended = api.get("/leases?include_ended=true").json()["leases"]
    assert [(x["lease_id"], x["status"]) for x in ended] == [(lid, "released")]
    for resource in ("a", "b", "c"):
        _acquire(api, bob["session_token"], resource)
    page = api.get("/leases?limit=2&offset=1").json()
    assert [x["resource"] for x in page["leases"]] == ["b", "a"]  # newest first
    assert (page["total"], page["limit"], page["offset"]) == (3, 2, 1)
    types = [e["type"] for e in api.events() if e["type"].startswith("lease.")]
    assert types == ["lease.acquired", "lease.renewed", "lease.released"] + 3 * ["lease.acquired"]
    assert api.post("/leases/lease_nope/renew", token=alice["session_token"]).status_code == 404


def test_fencing_tokens_strictly_increase_per_resource_and_validate(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    tokens = []
    for who in (alice, bob, alice):
        lease = _acquire(api, who, "deploy:prod").json()
        tokens.append(lease["fencing_token"])
        check = api.post(
            "/leases/validate", {"resource": "deploy:prod", "fencing_token": lease["fencing_token"]}
        ).json()
        assert check["valid"] is True and check["reason"] == "current"
        api.post(f"/leases/{lease['lease_id']}/release", token=who)
    assert tokens == [1, 2, 3]
    assert _acquire(api, bob, "other").json()["fencing_token"] == 1  # per resource
    stale = api.post("/leases/validate", {"resource": "deploy:prod", "fencing_token": 2}).json()
    assert stale["valid"] is False and stale["reason"] == "no_active_lease"
    current = _acquire(api, bob, "deploy:prod").json()
    assert current["fencing_token"] == 4
    old = api.post("/leases/validate", {"resource": "deploy:prod", "fencing_token": 3}).json()
    assert old["valid"] is False and old["reason"] == "superseded"
    assert old["latest_fencing_token"] == 4 and old["lease"]["lease_id"] == current["lease_id"]
    future = api.post("/leases/validate", {"resource": "deploy:prod", "fencing_token": 9}).json()
    assert future["valid"] is False and future["reason"] == "unknown"


def test_fencing_tokens_survive_a_restart(make_settings: Any, sqlite_url: str) -> None:
    settings = make_settings(database_url=sqlite_url)
    with TestClient(create_app(settings)) as first:
        api = new_project(first)
        s = api.checkin(agent_name="alice")["session_token"]
        lease = _acquire(api, s, "deploy:prod").json()
        api.post(f"/leases/{lease['lease_id']}/release", token=s)
    with TestClient(create_app(settings)) as second:
        again = Api(second, api.key, api.project)
        assert _acquire(again, s, "deploy:prod").json()["fencing_token"] == 2


def test_a_sessions_leases_end_with_it(api: Api) -> None:
    alice = api.checkin(agent_name="alice")
    bob = api.checkin(agent_name="bob")
    _acquire(api, alice["session_token"], "a")
    _acquire(api, alice["session_token"], "b")
    api.post("/checkout", token=alice["session_token"])
    assert api.get("/leases").json()["leases"] == []
    released = [e for e in api.events() if e["type"] == "lease.released"]
    assert {e["data"]["lease"]["resource"] for e in released} == {"a", "b"}
    assert {e["data"]["reason"] for e in released} == {"session_checked_out"}
    assert _acquire(api, bob["session_token"], "a").json()["fencing_token"] == 2


def test_a_lease_expires_at_its_time(api: Api) -> None:
    api = new_project(api.client)
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    lease = _acquire(api, alice, "deploy:prod", ttl_seconds=1).json()
    time.sleep(1.1)
    # Past its time it is expired on read, whether or not the job has run yet.
    assert api.get("/leases").json()["leases"] == []
    check = api.post("/leases/validate", {"resource": "deploy:prod", "fencing_token": 1}).json()
    assert check["valid"] is False
    expired = wait_for(lambda: [e for e in api.events() if e["type"] == "lease.expired"], 30)
    assert len(expired) == 1 and expired[0]["data"]["lease"]["lease_id"] == lease["lease_id"]
    assert _acquire(api, bob, "deploy:prod").json()["fencing_token"] == 2
    time.sleep(1.2)
    assert len([e for e in api.events() if e["type"] == "lease.expired"]) == 1


def test_timed_out_session_releases_its_leases(api: Api) -> None:
    api = new_project(api.client, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=1)
    alice = api.checkin(agent_name="alice")["session_token"]
    _acquire(api, alice, "deploy:prod")
    released = wait_for(lambda: [e for e in api.events() if e["type"] == "lease.released"], 30)
    assert released[0]["data"]["reason"] == "session_timed_out"


def test_bad_lease_input_is_a_400_and_changes_nothing(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    before = api.events()
    cases = [
        ({}, "resource"),
        ({"resource": ""}, "resource"),
        ({"resource": "r" * 257}, "resource"),
        ({"resource": "bad\nkey"}, "resource"),
        ({"resource": "ok", "ttl_seconds": 0}, "ttl_seconds"),
        ({"resource": "ok", "ttl_seconds": 86_401}, "ttl_seconds"),
        ({"resource": "ok", "ttl_seconds": "long"}, "ttl_seconds"),
        ({"resource": 7}, "resource"),
    ]
    for body, field in cases:
        r = api.post("/leases", body, token=alice)
        assert r.status_code == 400 and r.json()["field"] == field, (body, r.text)
    r = api.post("/leases", {"resource": "ok"})
    assert r.status_code == 400 and r.json()["field"] == "session_token"
    for body, field in [
        ({"fencing_token": 1}, "resource"),
        ({"resource": "ok"}, "fencing_token"),
        ({"resource": "ok", "fencing_token": 0}, "fencing_token"),
    ]:
        r = api.post("/leases/validate", body)
        assert r.status_code == 400 and r.json()["field"] == field, body
    assert api.get("/leases?limit=0").status_code == 400
    assert api.get("/leases?include_ended=perhaps").status_code == 400
    assert api.events() == before
    assert api.get("/leases").json()["leases"] == []
    # 256 printable characters is fine, as is any printable punctuation.
    assert api.post("/leases", {"resource": "r" * 256}, token=alice).status_code == 201
    assert api.post("/leases", {"resource": "contact:a b@x.com/é"}, token=alice).status_code == 201


def test_bad_renew_input_is_a_400_and_keeps_the_lease(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    lease = _acquire(api, alice, "deploy:prod", ttl_seconds=60).json()
    before = api.events()
    for body in ({"ttl_seconds": 0}, {"ttl_seconds": 86_401}, {"ttl_seconds": "1h"}):
        r = api.post(f"/leases/{lease['lease_id']}/renew", body, token=alice)
        assert r.status_code == 400 and r.json()["field"] == "ttl_seconds", body
    assert api.events() == before
    [live] = api.get("/leases").json()["leases"]
    assert live["expires_at"] == lease["expires_at"] and live["ttl_seconds"] == 60
