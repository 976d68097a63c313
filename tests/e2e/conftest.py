"""End-to-end helpers: a real server, admin-created projects, a websockets client."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.server import ServerProcess

ADMIN = {"Authorization": "Bearer admin-secret-for-the-test-suite-2026"}


def create_project(base_url: str, **body: Any) -> dict[str, Any]:
    body.setdefault("name", f"e2e-{secrets.token_hex(4)}")
    r = httpx.post(f"{base_url}/api/v1/projects", json=body, headers=ADMIN, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def agent_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One real server (SQLite) shared by a module's agent-side tests; each test makes
    its own project, so they stay apart."""
    workdir = tmp_path_factory.mktemp("agent-server")
    server = ServerProcess(
        {
            "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
            "AGENTLANES_LOG_LEVEL": "warning",
            "AGENTLANES_DATABASE_URL": f"sqlite:///{workdir / 'agentlanes.db'}",
            "AGENTLANES_EXPIRY_CHECK_SECONDS": "0.2",
        },
        workdir,
    )
    server.start()
    yield server
    server.stop()
