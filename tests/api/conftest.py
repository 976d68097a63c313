"""In-process API tests: the Litestar app under TestClient (lifespan, jobs and all)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from agentlanes.api.app import create_app

ADMIN = {"Authorization": "Bearer admin-secret-for-the-test-suite-2026"}


class Api:
    """A TestClient bound to one project's API key, with small helpers."""

    def __init__(self, client: TestClient[Any], key: str, project: dict[str, Any]) -> None:
        self.client = client
        self.key = key
        self.project = project

    def headers(self, token: str | None = None, **extra: str) -> dict[str, str]:
        h = {"X-API-Key": self.key, **extra}
        if token:
            h["X-Session-Token"] = token
        return h

    def post(self, path: str, json: Any = None, token: str | None = None, **kw: Any) -> Any:
        return self.client.post(f"/api/v1{path}", json=json, headers=self.headers(token), **kw)

    def get(self, path: str, token: str | None = None, **kw: Any) -> Any:
        return self.client.get(f"/api/v1{path}", headers=self.headers(token), **kw)

    def checkin(self, **body: Any) -> dict[str, Any]:
        r = self.post("/checkin", body)
        assert r.status_code == 201, r.text
        return r.json()  # type: ignore[no-any-return]

    def events(self, since: int = 0) -> list[dict[str, Any]]:
        r = self.get(f"/events/log?since={since}&limit=1000")
        assert r.status_code == 200, r.text
        return r.json()["events"]  # type: ignore[no-any-return]


@pytest.fixture
def app_factory(make_settings: Callable[..., Any]) -> Iterator[Callable[..., TestClient[Any]]]:
    clients: list[TestClient[Any]] = []

    def make(**overrides: Any) -> TestClient[Any]:
        client = TestClient(create_app(make_settings(**overrides)))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(app_factory: Callable[..., TestClient[Any]], database_url: str) -> TestClient[Any]:
    return app_factory(database_url=database_url)


def new_project(client: TestClient[Any], **body: Any) -> Api:
    import secrets

    body.setdefault("name", f"proj-{secrets.token_hex(4)}")
    r = client.post("/api/v1/projects", json=body, headers=ADMIN)
    assert r.status_code == 201, r.text
    data = r.json()
    return Api(client, data["api_key"], data)


@pytest.fixture
def api(client: TestClient[Any]) -> Api:
    return new_project(client)


@pytest.fixture
def block_api(client: TestClient[Any]) -> Api:
    return new_project(client, conflict_mode="block")
