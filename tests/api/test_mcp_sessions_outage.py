"""`/mcp` keeps its sessions in Redis when one is configured: while Redis is away the answer
is a clear 503 to retry, never a 500. A project opens at most max_mcp_sessions_per_project
of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import new_project
from tests.api.test_edge import MCP_HEADERS, MCP_INIT
from tests.support.server import free_port


def test_mcp_answers_503_while_redis_is_away(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    client = app_factory(database_url=sqlite_url, redis_url=f"redis://127.0.0.1:{free_port()}/0")
    api = new_project(client)
    r = client.post("/mcp", json=MCP_INIT, headers={**MCP_HEADERS, **api.headers()})
    assert r.status_code == 503, r.text
    assert "retry" in r.json()["error"]["message"]
    r = client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
        headers={**MCP_HEADERS, **api.headers(), "Mcp-Session-Id": "0" * 32},
    )
    assert r.status_code == 503, r.text


def test_mcp_sessions_past_the_project_cap_get_429(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    client = app_factory(database_url=sqlite_url, max_mcp_sessions_per_project=2)
    api, other = new_project(client), new_project(client)
    for _ in range(2):
        r = client.post("/mcp", json=MCP_INIT, headers={**MCP_HEADERS, **api.headers()})
        assert r.status_code == 200, r.text
    r = client.post("/mcp", json=MCP_INIT, headers={**MCP_HEADERS, **api.headers()})
    assert r.status_code == 429, r.text
    assert "max_mcp_sessions_per_project = 2" in r.json()["error"]["message"]
    # Another project opens its own.
    r = client.post("/mcp", json=MCP_INIT, headers={**MCP_HEADERS, **other.headers()})
    assert r.status_code == 200, r.text
