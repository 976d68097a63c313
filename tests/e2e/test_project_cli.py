"""`agentlanes project …` against real servers: through the admin API when it can, to the
server's own database when the admin API is off, never to another database; it always
says which."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.server import ServerProcess, free_port

pytestmark = pytest.mark.e2e


def cli(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLANES_")}
    full.update({"AGENTLANES_LOG_LEVEL": "warning", **env})
    return subprocess.run(
        [sys.executable, "-m", "agentlanes", "project", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )


def project_key_works(server: ServerProcess, key: str) -> int:
    return httpx.get(f"{server.url}/api/v1/project", headers={"X-API-Key": key}).status_code


def test_cli_goes_through_the_admin_api_and_says_so(tmp_path: Path) -> None:
    srv = tmp_path / "srv"
    srv.mkdir()
    server = ServerProcess(
        {"AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026-123"}, srv
    ).start()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {
        "AGENTLANES_PORT": str(server.port),
        "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026-123",
    }
    try:
        r = cli(elsewhere, "create", "Demo", "--json", **env)
        assert r.returncode == 0, r.stderr
        assert f"via server {server.url}" in r.stderr
        key = json.loads(r.stdout)["api_key"]
        assert project_key_works(server, key) == 200
        assert not (elsewhere / "var").exists()  # nothing written here

        r = cli(elsewhere, "update", "demo", "--conflict-mode", "block", **env)
        assert r.returncode == 0 and "warn -> block" in r.stdout, r.stderr
        r = cli(elsewhere, "rotate-key", "demo", "--grace-seconds", "0", "--key-only", **env)
        assert r.returncode == 0, r.stderr
        new_key = r.stdout.strip()
        assert project_key_works(server, key) == 401
        assert project_key_works(server, new_key) == 200
        r = cli(elsewhere, "list", "--json", **env)
        assert [p["slug"] for p in json.loads(r.stdout)["projects"]] == ["demo"]
        # Wrong admin token: the server's answer, not a silent fallback.
        r = cli(elsewhere, "show", "demo", **{**env, "AGENTLANES_ADMIN_TOKEN": "wrong-token-0000"})
        assert r.returncode == 4 and "admin" in r.stderr.lower()
        r = cli(elsewhere, "update", "demo", "--heartbeat-interval", "0", **env)
        assert r.returncode == 2 and "heartbeat_interval_seconds" in r.stderr
        r = cli(elsewhere, "delete", "demo", "--yes", **env)
        assert r.returncode == 0, r.stderr
        assert project_key_works(server, new_key) == 401
    finally:
        server.stop()


def test_cli_never_writes_a_key_into_another_database_than_the_servers(tmp_path: Path) -> None:
    """The issue's trap: the server runs in srv/ with the admin API off, and project create
    runs elsewhere. It must refuse there, and work from srv/ on the server's database."""
    srv = tmp_path / "srv"
    srv.mkdir()
    server = ServerProcess({"AGENTLANES_ADMIN_TOKEN": ""}, srv).start()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"AGENTLANES_PORT": str(server.port)}
    try:
        r = cli(elsewhere, "create", "demo", **env)
        assert r.returncode == 2, r.stdout
        assert "another database" in r.stderr and "admin API is off" in r.stderr
        assert not (elsewhere / "var").exists()

        r = cli(srv, "create", "demo", "--json", **env)
        assert r.returncode == 0, r.stderr
        assert f"via database sqlite:///{(srv / 'var' / 'agentlanes.db').resolve()}" in r.stderr
        assert f"the server at {server.url} uses it" in r.stderr
        assert project_key_works(server, json.loads(r.stdout)["api_key"]) == 200
    finally:
        server.stop()


def test_cli_without_a_server_uses_the_configured_database_and_says_so(tmp_path: Path) -> None:
    env: dict[str, Any] = {"AGENTLANES_PORT": str(free_port())}
    r = cli(tmp_path, "create", "solo", "--key-only", **env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith("alk_")
    assert "via database sqlite:///" in r.stderr and "no agentlanes server answers" in r.stderr
    assert (tmp_path / "var" / "agentlanes.db").exists()
    r = cli(tmp_path, "show", "solo", "--database", **env)
    assert r.returncode == 0 and "asked with --database" in r.stderr
    r = cli(tmp_path, "show", "missing", **env)
    assert r.returncode == 2 and "no project with slug 'missing'" in r.stderr
    r = cli(tmp_path, "delete", "solo", **env)
    assert r.returncode == 2 and "--yes" in r.stderr


def test_cli_finds_a_server_started_on_another_port(tmp_path: Path) -> None:
    """`serve` records where it listens beside its database; `project` commands with the
    same settings (here: the same directory, so the same SQLite file) find it there."""
    srv = tmp_path / "srv"
    srv.mkdir()
    token = "admin-secret-for-the-test-suite-2026-123"
    server = ServerProcess({"AGENTLANES_ADMIN_TOKEN": token}, srv).start()
    record = next(srv.rglob("*.server.json"))
    assert json.loads(record.read_text())["url"] == server.url
    nothing = str(free_port())  # the configured address: nobody listens there
    try:
        r = cli(
            srv, "create", "Demo", "--json", AGENTLANES_PORT=nothing, AGENTLANES_ADMIN_TOKEN=token
        )
        assert r.returncode == 0, r.stderr
        assert f"found the server at {server.url}" in r.stderr
        assert f"via server {server.url}" in r.stderr
        assert project_key_works(server, json.loads(r.stdout)["api_key"]) == 200
    finally:
        server.stop()
    assert not record.exists()
    # No server anywhere: the database, and how to point at a server started elsewhere.
    r = cli(srv, "list", AGENTLANES_PORT=nothing)
    assert r.returncode == 0, r.stderr
    assert "pass --server http://HOST:PORT" in r.stderr
