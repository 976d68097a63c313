"""Browsers (SPEC "One agent cannot hurt another"): Host and Origin checks on every route,
and the security headers on every answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from litestar.exceptions import WebSocketDisconnect
from litestar.testing import TestClient

from agentlanes.api.edge import CONTENT_SECURITY_POLICY, HostRule, OriginRule, effective_hosts
from agentlanes.settings import Settings
from tests.api.conftest import ADMIN, new_project

MCP_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "edge-test", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
# What the MCP transport documents for servers (status for a foreign Origin and the rest).
MCP_TRANSPORT = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "mcp_transport_security.json").read_text()
)


@pytest.fixture
def client(app_factory: Callable[..., TestClient[Any]], sqlite_url: str) -> TestClient[Any]:
    return app_factory(database_url=sqlite_url)


def test_default_hosts_follow_the_bound_address() -> None:
    base = {"admin_token": "", "allowed_hosts": []}
    assert effective_hosts(Settings(**base, host="127.0.0.1")) == [  # type: ignore[arg-type]
        "localhost",
        "127.0.0.1",
        "[::1]",
    ]
    assert effective_hosts(Settings(**base, host="lanes.internal"))[-1] == "lanes.internal"  # type: ignore[arg-type]
    assert effective_hosts(Settings(**base, host="::1")) == ["localhost", "127.0.0.1", "[::1]"]  # type: ignore[arg-type]
    for every in ("0.0.0.0", "::"):
        assert effective_hosts(Settings(**base, host=every)) == ["*"]  # type: ignore[arg-type]
    named = Settings(admin_token="", host="0.0.0.0", allowed_hosts=["Lanes.Example.com"])  # type: ignore[call-arg]
    assert effective_hosts(named) == ["lanes.example.com"]


def test_lists_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for text, hosts in (
        ("lanes.example.com, localhost:8787", ["lanes.example.com", "localhost:8787"]),
        ('["a.example", "[::1]"]', ["a.example", "[::1]"]),
        ("[::1],localhost", ["[::1]", "localhost"]),
        ("*", ["*"]),
    ):
        monkeypatch.setenv("AGENTLANES_ALLOWED_HOSTS", text)
        monkeypatch.setenv("AGENTLANES_ALLOWED_ORIGINS", "https://tools.example.com")
        settings = Settings(admin_token="")  # type: ignore[call-arg]
        assert settings.allowed_hosts == hosts
        assert settings.allowed_origins == ["https://tools.example.com"]


def test_host_rule() -> None:
    rule = HostRule(["localhost", "127.0.0.1", "[::1]", "lanes.example.com:8443"])
    for ok in ("localhost", "localhost:8787", "LOCALHOST:1", "127.0.0.1:9", "[::1]:8787", "[::1]"):
        assert rule.allows(ok), ok
    assert rule.allows("lanes.example.com:8443")
    for bad in (
        "evil.example",
        "evil.example:8787",
        "lanes.example.com",
        "lanes.example.com:8787",
        "localhost.evil.example",
        "127.0.0.1.nip.io:8787",
        "[::2]:8787",
    ):
        assert not rule.allows(bad), bad
    assert HostRule(["*"]).allows("anything.example")


def test_origin_rule() -> None:
    rule = OriginRule(["https://tools.example.com"])
    assert rule.allows(None, "localhost:8787")  # not a browser
    assert rule.allows("http://localhost:8787", "localhost:8787")  # own origin
    assert rule.allows("https://tools.example.com", "localhost:8787")
    assert OriginRule(["https://Tools.example.com/"]).allows("https://tools.example.com", "x")
    for bad in ("null", "http://evil.example", "http://localhost:9999", "file://", "data:"):
        assert not rule.allows(bad, "localhost:8787"), bad
    assert OriginRule(["*"]).allows("null", "localhost")


def test_every_route_refuses_a_foreign_host(client: TestClient[Any]) -> None:
    api = new_project(client)
    evil = {"Host": "evil.example:8787"}
    for path in ("/metrics", "/server", "/readyz", "/healthz", "/", "/static/app.js"):
        r = client.get(path, headers=evil)
        assert r.status_code == 421, (path, r.status_code)
        assert r.json()["error"]["code"] == "HOST_NOT_ALLOWED"
    r = client.get("/api/v1/presence", headers={**api.headers(), **evil})
    assert r.status_code == 421
    r = client.get("/api/v1/projects", headers={**ADMIN, **evil})
    assert r.status_code == 421
    r = client.post("/mcp", json=MCP_INIT, headers={**MCP_HEADERS, **api.headers(), **evil})
    assert r.status_code == 421
    # The names it has still work, and a request without Origin is not affected.
    assert client.get("/metrics").status_code == 200
    assert client.get("/readyz", headers={"Host": "localhost:8787"}).status_code == 200
    assert client.get("/readyz", headers={"Host": "[::1]:8787"}).status_code == 200


def test_socket_refuses_a_foreign_host(client: TestClient[Any]) -> None:
    """In process there is no handshake status to answer with: told why, closed 4421 (a
    real server answers the handshake with 421: tests/e2e/test_browser_edge.py)."""
    api = new_project(client)
    with client.websocket_connect(
        "/api/v1/events", headers={**api.headers(), "Host": "evil.example"}
    ) as socket:
        assert socket.receive_json()["error"]["code"] == "HOST_NOT_ALLOWED"
        with pytest.raises(WebSocketDisconnect) as refused:
            socket.receive_json()
    assert refused.value.code == 4421


def test_mcp_refuses_a_foreign_origin(client: TestClient[Any]) -> None:
    api = new_project(client)
    for origin in ("http://evil.example", "null", "http://localhost:9999"):
        r = client.post(
            "/mcp", json=MCP_INIT, headers={**MCP_HEADERS, **api.headers(), "Origin": origin}
        )
        assert r.status_code == MCP_TRANSPORT["origin"]["invalid_status"], (origin, r.text)
        assert r.json()["error"]["code"] == "ORIGIN_NOT_ALLOWED"
    # Its own origin and no Origin at all (an agent) are served.
    for extra in ({"Origin": "http://testserver.local"}, {}):
        r = client.post("/mcp", json=MCP_INIT, headers={**MCP_HEADERS, **api.headers(), **extra})
        assert r.status_code == 200, (extra, r.text)
        assert r.headers[MCP_TRANSPORT["session"]["header"]]
    # No stream at GET: the documented 405.
    r = client.get("/mcp", headers={**MCP_HEADERS, **api.headers()})
    assert r.status_code == MCP_TRANSPORT["get_stream"]["no_stream_status"]


def test_socket_refuses_a_foreign_origin(client: TestClient[Any]) -> None:
    api = new_project(client)
    for origin in ("http://evil.example", "null"):
        with client.websocket_connect(
            "/api/v1/events", headers={**api.headers(), "Origin": origin}
        ) as socket:
            error = socket.receive_json()
            assert error["error"]["code"] == "ORIGIN_NOT_ALLOWED"
            with pytest.raises(WebSocketDisconnect) as closed:
                socket.receive_json()
            assert closed.value.code == 4403
    with client.websocket_connect(
        "/api/v1/events", headers={**api.headers(), "Origin": "http://testserver.local"}
    ) as socket:
        assert socket.receive_json()["type"] != "error"


def test_listed_origin_is_served(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    client = app_factory(database_url=sqlite_url, allowed_origins=["https://tools.example.com"])
    api = new_project(client)
    r = client.post(
        "/mcp",
        json=MCP_INIT,
        headers={**MCP_HEADERS, **api.headers(), "Origin": "https://tools.example.com"},
    )
    assert r.status_code == 200, r.text


def test_security_headers_on_every_answer(client: TestClient[Any]) -> None:
    api = new_project(client)
    for path, headers in (
        ("/", {}),
        ("/static/app.js", {}),
        ("/static/dashboard.css", {}),
        ("/schema/swagger", {}),
        ("/schema/openapi.json", {}),
        ("/api/v1/presence", api.headers()),
        ("/no/such/page", {}),
    ):
        r = client.get(path, headers=headers)
        assert r.status_code in (200, 404), (path, r.status_code)
        assert r.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
        assert "default-src 'self'" in r.headers["content-security-policy"]
        assert r.headers["x-content-type-options"] == "nosniff", path
        assert r.headers["referrer-policy"] == "no-referrer", path


def test_pages_load_nothing_from_another_origin(client: TestClient[Any]) -> None:
    for path in ("/", "/schema/swagger"):
        page = client.get(path).text
        assert "http://" not in page and "https://" not in page, path
        assert "<script>" not in page and "<style>" not in page, path
