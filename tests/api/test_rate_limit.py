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


def test_a_random_key_per_request_is_limited_by_client_address(
    app_factory: Any, sqlite_url: str
) -> None:
    """#24 finding 6: counted per key value, a new random key per request was never
    limited. Keys that open nothing are counted per client address."""
    import secrets

    client = app_factory(database_url=sqlite_url, rate_limit_per_minute=5)
    codes = [
        client.get(
            "/api/v1/presence", headers={"X-API-Key": "alk_" + secrets.token_hex(32)}
        ).status_code
        for _ in range(7)
    ]
    assert codes[:5] == [401] * 5 and codes[5:] == [429, 429], codes
    r = client.get("/api/v1/presence", headers={"X-API-Key": "alk_" + secrets.token_hex(32)})
    assert r.status_code == 429
    assert r.json()["error"]["code"] == "RATE_LIMITED"
    assert 1 <= int(r.headers["Retry-After"]) <= 60


def test_guessing_the_admin_token_is_limited(app_factory: Any, sqlite_url: str) -> None:
    client = app_factory(database_url=sqlite_url, rate_limit_per_minute=5)
    codes = [
        client.get(
            "/api/v1/projects", headers={"Authorization": f"Bearer guess-{i:040d}"}
        ).status_code
        for i in range(7)
    ]
    assert codes[:5] == [401] * 5 and codes[5:] == [429, 429], codes


def test_every_key_of_a_project_shares_its_count(app_factory: Any, sqlite_url: str) -> None:
    """Counted per resolved project: a rotated key in its grace and the new one share
    one limit, and another project keeps its own."""
    from tests.api.conftest import ADMIN

    client = app_factory(database_url=sqlite_url, rate_limit_per_minute=6)
    api = new_project(client)  # 1 admin request: counted by address, not by project
    other = new_project(client)
    r = client.post(
        f"/api/v1/projects/{api.project['slug']}/rotate-key",
        json={"grace_seconds": 600},
        headers=ADMIN,
    )
    new_key = r.json()["api_key"]
    old_key = api.key
    codes = []
    for i in range(8):
        key = old_key if i % 2 else new_key
        codes.append(client.get("/api/v1/presence", headers={"X-API-Key": key}).status_code)
    assert codes[:6] == [200] * 6 and codes[6:] == [429, 429], codes
    assert other.get("/presence").status_code == 200
