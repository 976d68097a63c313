"""The agent registry: upsert by name, role, agent_<hex> id, config limited to declared keys."""

from __future__ import annotations

import re

from tests.api.conftest import Api, new_project
from tests.api.shared_app import client  # noqa: F401  (one app per module)


def test_upsert_keeps_the_id_and_drops_undeclared_config_keys(api: Api) -> None:
    api = new_project(api.client, agent_config_keys=["model", "max_parallel"])
    r = api.client.put(
        "/api/v1/agents/alice",
        json={"role": "reviewer", "config": {"model": "m-1", "colour": "red", "max_parallel": 2}},
        headers=api.headers(),
    )
    assert r.status_code == 201, r.text
    created = r.json()
    assert re.fullmatch(r"agent_[0-9a-f]{24}", created["agent_id"])
    assert created["role"] == "reviewer"
    assert created["config"] == {"model": "m-1", "max_parallel": 2}
    assert created["dropped_keys"] == ["colour"]
    r = api.client.put(
        "/api/v1/agents/alice", json={"config": {"model": "m-2"}}, headers=api.headers()
    )
    assert r.status_code == 200
    updated = r.json()
    assert updated["agent_id"] == created["agent_id"]
    assert updated["role"] == "reviewer"  # left out: kept
    assert updated["config"] == {"model": "m-2"}  # sent: replaced
    got = api.get("/agents/alice").json()
    assert got == {k: v for k, v in updated.items() if k != "dropped_keys"}
    listing = api.get("/agents").json()
    assert [a["name"] for a in listing["agents"]] == ["alice"]
    assert listing["allowed_config_keys"] == ["max_parallel", "model"]
    events = [e for e in api.events() if e["type"] == "agent.registered"]
    assert [e["data"]["created"] for e in events] == [True, False]
    assert events[0]["data"]["dropped_keys"] == ["colour"]


def test_a_project_without_declared_keys_keeps_no_config(api: Api) -> None:
    r = api.client.put("/api/v1/agents/bob", json={"config": {"a": 1}}, headers=api.headers())
    assert r.status_code == 201 and r.json()["config"] == {} and r.json()["dropped_keys"] == ["a"]


def test_list_filters_by_role_and_unknown_agent_is_404(api: Api) -> None:
    for name, role in [("carol", "builder"), ("alice", "reviewer"), ("bob", "builder")]:
        api.client.put(f"/api/v1/agents/{name}", json={"role": role}, headers=api.headers())
    builders = api.get("/agents?role=builder").json()["agents"]
    assert [a["name"] for a in builders] == ["bob", "carol"]
    page = api.get("/agents?limit=1&offset=1").json()
    assert [a["name"] for a in page["agents"]] == ["bob"]
    assert (page["total"], page["limit"], page["offset"]) == (3, 1, 1)
    assert api.get("/agents/nobody").status_code == 404


def test_bad_agent_input_is_a_400_and_changes_nothing(api: Api) -> None:
    cases = [
        ("bad name!", {"role": "x"}, "name"),
        ("alice", {"role": ""}, "role"),
        ("alice", {"role": "r" * 65}, "role"),
        ("alice", {"config": ["not", "an", "object"]}, "config"),
        ("alice", {"config": {"k": "x" * 20_000}}, "config"),
        ("alice", {"nickname": "al"}, "nickname"),
    ]
    for name, body, field in cases:
        r = api.client.put(f"/api/v1/agents/{name}", json=body, headers=api.headers())
        assert r.status_code == 400 and r.json()["field"] == field, (body, r.text)
    assert api.get("/agents").json()["agents"] == []
    assert [e for e in api.events() if e["type"] == "agent.registered"] == []
    r = api.client.put("/api/v1/agents/alice", json={}, headers={})
    assert r.status_code == 401
