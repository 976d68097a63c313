"""Operators' commands on real processes: db backup / current, serve refusing a
placeholder admin token, and two servers starting at once on one fresh database."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from agentlanes.store.migrate import head_revision
from tests.e2e.conftest import create_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e


def agentlanes(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLANES_")}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "agentlanes", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_db_backup_copies_a_live_sqlite_database(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    url = f"sqlite:///{db}"
    server = ServerProcess(
        {
            "AGENTLANES_DATABASE_URL": url,
            "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
        },
        tmp_path,
    ).start()
    try:
        key = create_project(server.url)["api_key"]
        httpx.post(
            f"{server.url}/api/v1/checkin",
            headers={"X-API-Key": key},
            json={"agent_name": "alice", "declared_files": ["src/**"]},
        ).raise_for_status()
        r = agentlanes(tmp_path, "db", "backup", "backups/copy.db", AGENTLANES_DATABASE_URL=url)
        assert r.returncode == 0, r.stderr
        assert f"database: sqlite:///{db}" in r.stdout and "integrity ok" in r.stdout
        with sqlite3.connect(tmp_path / "backups" / "copy.db") as copy:
            assert copy.execute("SELECT agent_name FROM sessions").fetchall() == [("alice",)]
            assert copy.execute("SELECT count(*) FROM events").fetchone()[0] >= 1
        again = agentlanes(tmp_path, "db", "backup", "backups/copy.db", AGENTLANES_DATABASE_URL=url)
        assert again.returncode == 2 and "exists" in again.stderr
        r = agentlanes(tmp_path, "db", "current", "--json", AGENTLANES_DATABASE_URL=url)
        assert json.loads(r.stdout)["current"] == head_revision()
    finally:
        server.stop()
    r = agentlanes(
        tmp_path, "db", "backup", "x.dump", AGENTLANES_DATABASE_URL="postgresql://u@h/db"
    )
    assert r.returncode == 2 and "pg_dump" in r.stderr


@pytest.mark.parametrize("token", ["change-me", "admin", "short", "${ADMIN_TOKEN}", "12345678"])
def test_serve_refuses_a_placeholder_admin_token(tmp_path: Path, token: str) -> None:
    r = agentlanes(
        tmp_path,
        "serve",
        AGENTLANES_ADMIN_TOKEN=token,
        AGENTLANES_DATABASE_URL=f"sqlite:///{tmp_path / 'x.db'}",
    )
    assert r.returncode == 2
    assert "admin_token" in r.stderr and "openssl rand -hex 32" in r.stderr


@pytest.mark.postgres
def test_two_servers_starting_at_once_on_a_fresh_database_both_serve(tmp_path: Path) -> None:
    from tests.support import services

    name = services.create_pg_database()
    url = services.pg_url(name)
    servers = [
        ServerProcess(
            {
                "AGENTLANES_DATABASE_URL": url,
                "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
            },
            tmp_path,
        )
        for _ in range(2)
    ]
    errors: list[BaseException] = []

    def start(s: ServerProcess) -> None:
        try:
            s.start(timeout=60)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(s,)) for s in servers]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        key = create_project(servers[0].url)["api_key"]
        r = httpx.get(f"{servers[1].url}/api/v1/project", headers={"X-API-Key": key})
        assert r.status_code == 200
    finally:
        for s in servers:
            s.stop()
        services.drop_pg_database(name)
