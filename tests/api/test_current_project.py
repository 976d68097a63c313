"""``GET /api/v1/project``: the project an API key opens, for hooks and agents."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import Api, new_project


def test_project_view_shows_the_mode_of_the_keys_project(client: TestClient[Any]) -> None:
    warn = new_project(client)
    block = new_project(client, conflict_mode="block", heartbeat_interval_seconds=5)
    r = block.get("/project")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["slug"] == block.project["slug"]
    assert body["conflict_mode"] == "block"
    assert body["heartbeat_interval_seconds"] == 5
    assert "api_key" not in body and "api_key_hash" not in body
    assert warn.get("/project").json()["conflict_mode"] == "warn"


def test_project_view_needs_a_valid_key(api: Api) -> None:
    r = api.client.get("/api/v1/project")
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "UNAUTHORIZED"
    r = api.client.get("/api/v1/project", headers={"X-API-Key": "alk_wrong"})
    assert r.status_code == 401
