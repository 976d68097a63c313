"""Schema migrations: Alembic, run programmatically under a lock.

Every process that starts (``agentlanes serve``, the in-process app, the CLI when it
writes to the database) calls :func:`upgrade`. The first one to take the lock migrates;
the others wait on the lock, then find the database at the newest revision and do
nothing. The lock is the transaction the migration runs in:

* PostgreSQL: ``pg_advisory_xact_lock`` (released at commit; DDL is transactional, so a
  migration that fails leaves the database as it was);
* SQLite: ``BEGIN IMMEDIATE`` takes the database's write lock (the other processes wait
  on ``busy_timeout``); SQLite's DDL is transactional too.

A database made before migrations existed (release 0.1.0 created its tables with
``create_all``) has tables but no ``alembic_version``: it is stamped at the baseline,
which is exactly that schema, and then upgraded.
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from agentlanes.store.database import Database
from agentlanes.store.identity import sqlite_path

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# The revision equal to release 0.1.0's create_all schema.
BASELINE = "0001_baseline"
# pg_advisory_xact_lock key held while migrating ("agml").
MIGRATION_LOCK_KEY = 0x61676D6C


class MigrationError(Exception):
    """The database cannot be brought to this release's schema (message says why)."""


@dataclass(frozen=True)
class UpgradeResult:
    before: str | None
    after: str | None
    stamped_baseline: bool

    @property
    def changed(self) -> bool:
        return self.before != self.after or self.stamped_baseline


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def _current(conn: Connection) -> str | None:
    return MigrationContext.configure(conn).get_current_revision()


def _upgrade_sync(conn: Connection, target: str) -> UpgradeResult:
    cfg = alembic_config()
    cfg.attributes["connection"] = conn
    before = _current(conn)
    stamped = False
    if before is None and inspect(conn).has_table("projects"):
        # Tables without a version: made by create_all (release 0.1.0).
        command.stamp(cfg, BASELINE)
        stamped = True
    elif before is not None:
        known = ScriptDirectory.from_config(cfg)
        try:
            known.get_revision(before)
        except Exception:
            raise MigrationError(
                f"the database is at schema revision {before!r}, which this release does not "
                f"know (its newest is {head_revision()!r}): it was migrated by a newer "
                "agentlanes; run that release, or restore a backup"
            ) from None
    command.upgrade(cfg, target)
    return UpgradeResult(before=before, after=_current(conn), stamped_baseline=stamped)


def _sqlite_foreign_keys(conn: Connection, on: bool) -> None:
    """Switch SQLite's foreign key enforcement, outside any transaction (inside one the
    pragma does nothing): straight on the driver's connection, so that SQLAlchemy does
    not begin one first."""
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")
    finally:
        cursor.close()


def _check_foreign_keys(conn: Connection) -> None:
    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise MigrationError(f"the migration left rows whose parent is missing: {broken[:5]}")


async def upgrade(db: Database, target: str = "head") -> UpgradeResult:
    """Bring the schema to ``target`` (default: this release's newest), under the lock.

    On SQLite the migrations run with foreign keys off: a migration that rebuilds a
    parent table (0003 adds AUTOINCREMENT that way) would otherwise cascade into its
    children as the old table is dropped. They are checked before the commit, and on
    again for whatever uses the connection next (SQLite's procedure for table changes)."""
    async with db.writer.connect() as conn:
        if db.is_sqlite:
            await conn.run_sync(_sqlite_foreign_keys, False)
        try:
            async with conn.begin():
                if db.is_sqlite:
                    # The first statement makes the writer engine send BEGIN IMMEDIATE.
                    await conn.execute(text("SELECT 1"))
                else:
                    await conn.execute(
                        text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
                    )
                result = await conn.run_sync(_upgrade_sync, target)
                if db.is_sqlite and result.changed:
                    await conn.run_sync(_check_foreign_keys)
                return result
        finally:
            if db.is_sqlite:
                await conn.run_sync(_sqlite_foreign_keys, True)


async def current(db: Database) -> str | None:
    """The database's schema revision (None: empty, or made before migrations)."""
    async with db.reader.connect() as conn:
        return await conn.run_sync(_current)


def upgrade_url(url: str, target: str = "head") -> UpgradeResult:
    """:func:`upgrade` for synchronous callers (the CLI)."""

    async def go() -> UpgradeResult:
        db = Database(url)
        try:
            return await upgrade(db, target)
        finally:
            await db.dispose()

    return asyncio.run(go())


def current_url(url: str) -> str | None:
    async def go() -> str | None:
        db = Database(url)
        try:
            return await current(db)
        finally:
            await db.dispose()

    return asyncio.run(go())


def backup_sqlite(url: str, target: Path) -> dict[str, Any]:
    """Copy a live SQLite database with SQLite's online backup API.

    The copy is consistent even while the server writes (the API copies pages and
    restarts when a writer changes one it already copied)."""
    source = sqlite_path(url)
    if source is None:
        raise MigrationError(
            "backup copies SQLite databases; for PostgreSQL use pg_dump "
            "(docs/operations.md, 'Backups and restore')"
        )
    if not source.exists():
        raise MigrationError(f"no database at {source}")
    target = target.expanduser().resolve()
    if target == source:
        raise MigrationError("the backup must go to another file than the database")
    if target.exists():
        raise MigrationError(f"{target} exists; choose a new file (nothing was overwritten)")
    target.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    dst = sqlite3.connect(target)
    try:
        with dst:
            src.backup(dst)
        pages = dst.execute("PRAGMA page_count").fetchone()[0]
        check = dst.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        src.close()
        dst.close()
    return {"source": str(source), "backup": str(target), "pages": pages, "integrity": check}
