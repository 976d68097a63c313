"""Alembic migrations: a 0.1.0 database (made by that release's code, kept under
tests/fixtures/) upgrades with every row kept, on SQLite and PostgreSQL; the migrated
schema is exactly the models'; processes migrating at once all succeed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

from agentlanes.store import migrate
from agentlanes.store.database import Database
from tests.support import services

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# The tables of release 0.1.0 and how many rows the fixture holds in each.
TABLES = (
    "projects",
    "sessions",
    "events",
    "realtime_tokens",
    "tasks",
    "task_notes",
    "checkpoints",
    "messages",
    "message_receipts",
    "leases",
    "lease_counters",
    "consensus_requests",
    "consensus_votes",
    "agents",
)
NEW_COLUMNS = {
    "projects": {
        "epoch",
        "previous_api_key_hash",
        "previous_key_expires_at",
        "key_revoked_at",
        "block_on",  # 0006
        "line_margin",  # 0006
        "auto_queue",  # 0008
    },
    "messages": {"number", "sender_kind"},  # sender_kind: 0007
    "realtime_tokens": {"api_key_hash"},
    "message_receipts": {"delivered_at"},  # 0004
    # 0005: claim times; 0006: line-level edits; 0007: display names; 0008: the queue;
    # 0009: range claims
    "sessions": {"claimed_at", "edits", "display_name", "claims"},
}


def snapshot(conn: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every 0.1.0 table, in 0.1.0's columns, sorted."""
    rows: dict[str, list[tuple[Any, ...]]] = {}
    for table in TABLES:
        result = conn.execute(text(f"SELECT * FROM {table}"))
        columns = list(result.keys())
        keys = [k for k in columns if k not in NEW_COLUMNS.get(table, set())]
        rows[table] = sorted((tuple(str(r[k]) for k in keys) for r in result.mappings()), key=repr)
    return rows


async def _read_all(url: str) -> dict[str, list[tuple[Any, ...]]]:
    db = Database(url)
    try:
        async with db.reader.connect() as conn:
            return await conn.run_sync(snapshot)
    finally:
        await db.dispose()


async def _schema_diff(url: str) -> list[Any]:
    db = Database(url)
    try:
        async with db.reader.connect() as conn:
            return await conn.run_sync(
                lambda c: compare_metadata(
                    MigrationContext.configure(c, opts={"compare_type": True}),
                    SQLModel.metadata,
                )
            )
    finally:
        await db.dispose()


async def _epochs(url: str) -> list[str]:
    db = Database(url)
    try:
        async with db.reader.connect() as conn:
            return list((await conn.execute(text("SELECT epoch FROM projects"))).scalars())
    finally:
        await db.dispose()


@pytest.fixture
def pg_scratch() -> Any:
    name = services.create_pg_database()
    yield services.pg_url(name)
    services.drop_pg_database(name)


def load_pg_dump(url: str) -> None:
    subprocess.run(
        ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(FIXTURES / "v0_1_0.postgres.sql"), url],
        check=True,
        capture_output=True,
    )


def assert_upgrade_keeps_every_row(url: str) -> None:
    before = asyncio.run(_read_all(url))
    assert len(before["events"]) == 17 and len(before["sessions"]) == 3
    assert all(before[t] for t in ("tasks", "messages", "leases", "agents", "task_notes"))
    assert migrate.current_url(url) is None
    result = migrate.upgrade_url(url)
    assert result.stamped_baseline and result.after == migrate.head_revision()
    assert asyncio.run(_read_all(url)) == before
    epochs = asyncio.run(_epochs(url))
    assert len(epochs) == 2 and len(set(epochs)) == 2
    assert all(len(e) == 16 and int(e, 16) >= 0 for e in epochs)
    # Migrations and models agree: nothing left for autogenerate to find.
    assert asyncio.run(_schema_diff(url)) == []


def test_sqlite_database_of_release_0_1_upgrades_with_every_row(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "v0_1_0.sqlite", path)
    assert_upgrade_keeps_every_row(f"sqlite:///{path}")


@pytest.mark.postgres
def test_postgres_database_of_release_0_1_upgrades_with_every_row(pg_scratch: str) -> None:
    load_pg_dump(pg_scratch)
    assert_upgrade_keeps_every_row(pg_scratch)


def test_upgraded_sqlite_database_serves_its_old_project(
    tmp_path: Path, make_settings: Any
) -> None:
    """The old key still opens its project, and its sessions, tasks and log are there."""
    from litestar.testing import TestClient

    from agentlanes.api.app import create_app

    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "v0_1_0.sqlite", path)
    key = json.loads((FIXTURES / "v0_1_0.keys.json").read_text())["api_key"]
    app = create_app(make_settings(database_url=f"sqlite:///{path}"), run_jobs=False)
    with TestClient(app) as client:
        h = {"X-API-Key": key}
        log = client.get("/api/v1/events/log", headers=h, params={"limit": 1000}).json()
        assert [e["offset"] for e in log["events"]][-1] >= 17
        tasks = client.get("/api/v1/tasks", headers=h).json()
        assert sorted(t["title"] for t in tasks["tasks"]) == ["Add /v2", "Docs"]
        agents = client.get("/api/v1/agents/alice", headers=h).json()
        assert agents["config"] == {"model": "x"}
        r = client.post(
            "/api/v1/checkin",
            headers=h,
            json={"agent_name": "dave", "declared_files": ["src/api/x.py"]},
        )
        assert r.status_code == 201, r.text
        # The new check-in continues the old log's offsets.
        after = client.get("/api/v1/events/log", headers=h, params={"since": 17}).json()
        assert after["events"][0]["offset"] == 18


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_fresh_database_is_built_by_the_migrations(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'new.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("pg_scratch")
    )
    result = migrate.upgrade_url(url)
    assert (result.before, result.after, result.stamped_baseline) == (
        None,
        migrate.head_revision(),
        False,
    )
    assert asyncio.run(_schema_diff(url)) == []
    again = migrate.upgrade_url(url)
    assert not again.changed


def test_database_made_by_create_all_of_this_release_is_stamped_and_kept(tmp_path: Path) -> None:
    """A create_all database that already has the new columns upgrades without a clash."""
    path = tmp_path / "create_all.db"
    engine = create_engine(f"sqlite:///{path}")
    SQLModel.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO projects (slug, name, api_key_hash, conflict_mode, "
                "heartbeat_interval_seconds, heartbeat_ttl_seconds, last_offset, created_at, "
                "epoch) VALUES ('p', 'p', 'h', 'warn', 30, 120, 0, '2026-01-01', 'abcd')"
            )
        )
    engine.dispose()
    result = migrate.upgrade_url(f"sqlite:///{path}")
    assert result.stamped_baseline and result.after == migrate.head_revision()
    assert asyncio.run(_epochs(f"sqlite:///{path}")) == ["abcd"]


def test_database_from_a_newer_release_is_refused_with_a_reason(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'n.db'}"
    migrate.upgrade_url(url)
    with sqlite3.connect(tmp_path / "n.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099_future'")
    with pytest.raises(migrate.MigrationError, match="newer agentlanes"):
        migrate.upgrade_url(url)


def _upgrade_processes(url: str, cwd: Path, n: int) -> list[subprocess.CompletedProcess[str]]:
    env = {**os.environ, "AGENTLANES_DATABASE_URL": url}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "agentlanes", "db", "upgrade", "--json"],
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    done = []
    for p in procs:
        out, err = p.communicate(timeout=90)
        done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return done


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_processes_migrating_at_once_all_succeed_and_one_migrates(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        shutil.copy(FIXTURES / "v0_1_0.sqlite", tmp_path / "old.db")
        url = f"sqlite:///{tmp_path / 'old.db'}"
    else:
        url = request.getfixturevalue("pg_scratch")
        load_pg_dump(url)
    before = asyncio.run(_read_all(url))
    results = _upgrade_processes(url, tmp_path, 3)
    for r in results:
        assert r.returncode == 0, r.stderr
    answers = [json.loads(r.stdout) for r in results]
    assert all(a["after"] == migrate.head_revision() for a in answers)
    # Exactly one process found the old database; the others waited and found it done.
    assert sum(a["stamped_baseline"] for a in answers) == 1
    assert asyncio.run(_read_all(url)) == before


AUTOINCREMENT_TABLES = (
    "projects",
    "events",
    "task_notes",
    "messages",
    "message_receipts",
    "consensus_votes",
)


@pytest.mark.parametrize("start", ["release_0_1", "fresh"])
def test_sqlite_ids_are_never_reused_after_the_migrations(tmp_path: Path, start: str) -> None:
    """SQLite hands the largest rowid out again unless the table says AUTOINCREMENT: a
    project made after a DELETE got the deleted one's id (#24 finding 4)."""
    path = tmp_path / "ids.db"
    if start == "release_0_1":
        shutil.copy(FIXTURES / "v0_1_0.sqlite", path)
    migrate.upgrade_url(f"sqlite:///{path}")
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA foreign_keys=ON")
        for table in AUTOINCREMENT_TABLES:
            (sql,) = conn.execute(
                "SELECT sql FROM sqlite_master WHERE type='table' AND name=?", (table,)
            ).fetchone()
            assert "AUTOINCREMENT" in sql, (table, sql)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        insert = (
            "INSERT INTO projects (slug, name, api_key_hash, conflict_mode, "
            "heartbeat_interval_seconds, heartbeat_ttl_seconds, last_offset, created_at, "
            "epoch) VALUES (?, 'p', ?, 'warn', 30, 120, 0, '2026-01-01', 'abcd')"
        )
        first = conn.execute(insert, ("gone", "h1")).lastrowid
        conn.execute("DELETE FROM projects WHERE id = ?", (first,))
        second = conn.execute(insert, ("new", "h2")).lastrowid
        conn.commit()
        assert second is not None and first is not None and second > first
        if start == "release_0_1":
            # Old messages are numbered per project in send order.
            numbers = conn.execute(
                "SELECT project_id, number FROM messages ORDER BY project_id, id"
            ).fetchall()
            assert [n for _, n in numbers] == list(range(1, len(numbers) + 1))
    finally:
        conn.close()


def test_many_old_messages_are_numbered_per_project_in_one_pass(tmp_path: Path) -> None:
    """Review finding: 0003 numbered each message with a count over its project's earlier
    ones (quadratic in a project's messages). Now one ROW_NUMBER() pass: 40,000 messages
    in two interleaved projects are numbered 1, 2, ... per project, in send order, quickly."""
    path = tmp_path / "many.db"
    shutil.copy(FIXTURES / "v0_1_0.sqlite", path)
    conn = sqlite3.connect(path)
    try:
        conn.executemany(
            "INSERT INTO messages (project_id, sender, recipient, type, body, created_at) "
            "VALUES (?, 'a', 'b', 'message', 'm', '2026-01-01')",
            [(1 + n % 2,) for n in range(40_000)],
        )
        conn.commit()
    finally:
        conn.close()
    started = time.monotonic()
    migrate.upgrade_url(f"sqlite:///{path}")
    took = time.monotonic() - started
    conn = sqlite3.connect(path)
    try:
        for project in (1, 2):
            numbers = [
                n
                for (n,) in conn.execute(
                    "SELECT number FROM messages WHERE project_id = ? ORDER BY id", (project,)
                )
            ]
            assert numbers == list(range(1, len(numbers) + 1))
    finally:
        conn.close()
    assert took < 5, took
