"""The optional request rate limit answers 429 RATE_LIMITED, per API key."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import new_project


def test_over_the_limit_is_429_per_key(app_factory: Any, sqlite_url: str) -> None:
    client = app_factory(database_url=sqlite_url, rate_limit_per_minute=5)
    api = new_project(client)
    other = new_project(client)
    codes = [api.get("/presence").status_code for _ in range(6)]
    assert codes[:5] == [200] * 5
    assert codes[5] == 429
    r = api.get("/presence")
    assert r.json()["error"]["code"] == "RATE_LIMITED"
    assert other.get("/presence").status_code == 200
    assert client.get("/healthz").status_code == 200


def test_no_limit_by_default(api: Any) -> None:
    assert all(api.get("/presence").status_code == 200 for _ in range(30))
