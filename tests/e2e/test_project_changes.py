"""Changes to a project take effect on every process within a second (#28), however they
were made: the admin API of one process, or ``agentlanes project … --database`` (what the
CLI does with the admin API off). Two real server processes on PostgreSQL and Redis."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from tests.e2e.conftest import ADMIN, create_project
from tests.e2e.test_cluster import _cluster_env, cluster  # noqa: F401  (the two processes)
from tests.support.server import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.redis]


def _project_cli(database_url: str, *args: str) -> dict[str, Any]:
    """``agentlanes project ARGS --database --json`` as an operator runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLANES_")}
    env.update({"AGENTLANES_DATABASE_URL": database_url, "AGENTLANES_LOG_LEVEL": "warning"})
    r = subprocess.run(
        [sys.executable, "-m", "agentlanes", "project", *args, "--database", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parent,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def _status(server: ServerProcess, key: str) -> int:
    r = httpx.get(f"{server.url}/api/v1/project", headers={"X-API-Key": key}, timeout=5)
    return r.status_code


def _until(what: Any, limit: float = 1.0) -> float:
    """Poll ``what()`` until true; how long it took (fails past ``limit`` seconds)."""
    started = time.monotonic()
    while not what():
        took = time.monotonic() - started
        assert took < limit, f"not within {limit} s"
        time.sleep(0.02)
    return time.monotonic() - started


async def _close_code(ws: Any, within: float) -> int:
    with pytest.raises(websockets.ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), within)
    return int(ws.close_code)


def _warm(server: ServerProcess, key: str) -> None:
    """Cache the key on the process (the 30 s cache that once held changes back)."""
    for _ in range(3):
        assert _status(server, key) == 200


def test_a_key_rotated_with_grace_0_on_one_process_is_refused_on_the_other_within_1s(
    cluster: tuple[ServerProcess, ServerProcess],  # noqa: F811
) -> None:
    a, b = cluster
    project = create_project(a.url)
    old = project["api_key"]
    _warm(b, old)

    async def scenario() -> None:
        url = f"{b.ws_url}/api/v1/events"
        async with websockets.connect(url, additional_headers={"X-API-Key": old}) as ws:
            await asyncio.wait_for(ws.recv(), 5)
            r = httpx.post(
                f"{a.url}/api/v1/projects/{project['slug']}/rotate-key",
                json={"grace_seconds": 0},
                headers=ADMIN,
            )
            assert r.status_code == 200, r.text
            started = time.monotonic()
            assert await _close_code(ws, 2) == 4401
            assert time.monotonic() - started < 1.0
            new = r.json()["api_key"]
            assert _status(b, new) == 200

    asyncio.run(scenario())
    assert _status(b, old) == 401


@pytest.mark.parametrize("change", ["rotate-key", "revoke-key", "delete", "update"])
def test_a_change_written_to_the_database_reaches_both_processes_within_1s(
    cluster: tuple[ServerProcess, ServerProcess],  # noqa: F811
    pg_database: str,
    change: str,
) -> None:
    a, b = cluster
    project = create_project(a.url)
    key, slug = project["api_key"], project["slug"]
    for server in (a, b):
        _warm(server, key)

    async def scenario() -> None:
        sockets = [
            await websockets.connect(
                f"{server.ws_url}/api/v1/events", additional_headers={"X-API-Key": key}
            )
            for server in (a, b)
        ]
        for ws in sockets:
            await asyncio.wait_for(ws.recv(), 5)
        if change == "rotate-key":
            _project_cli(pg_database, "rotate-key", slug, "--grace-seconds", "0")
        elif change == "revoke-key":
            _project_cli(pg_database, "revoke-key", slug)
        elif change == "delete":
            _project_cli(pg_database, "delete", slug, "--yes")
        else:
            _project_cli(
                pg_database, "update", slug, "--conflict-mode", "block", "--heartbeat-ttl", "300"
            )
        started = time.monotonic()
        if change == "update":
            for server in (a, b):
                _until(
                    lambda s=server: (
                        httpx.get(f"{s.url}/api/v1/project", headers={"X-API-Key": key}).json()[
                            "conflict_mode"
                        ]
                        == "block"
                    ),
                    1.0 - (time.monotonic() - started),
                )
            for ws in sockets:
                await ws.close()
            return
        for server in (a, b):
            _until(lambda s=server: _status(s, key) == 401, 1.0 - (time.monotonic() - started))
        for ws in sockets:
            assert await _close_code(ws, 1.5) == 4401
        assert time.monotonic() - started < 1.5

    asyncio.run(scenario())
    if change == "delete":
        # A deleted project's key is a 401 on every route of either process, never a 500.
        for server in (a, b):
            for method, path in (("POST", "/api/v1/checkin"), ("GET", "/api/v1/presence")):
                r = httpx.request(
                    method, f"{server.url}{path}", headers={"X-API-Key": key}, json={}
                )
                assert r.status_code == 401, (path, r.status_code, r.text)
