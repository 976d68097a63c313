"""The engine and transactions.

Writes that touch a project run in one transaction that first locks the project's row
(PostgreSQL: ``SELECT ... FOR UPDATE``; SQLite: ``BEGIN IMMEDIATE`` takes the database's
write lock). That one lock serialises the conflict decision in ``block`` mode, makes event
offsets gap-free and commit-ordered, and makes expiry happen once across processes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlmodel import SQLModel
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.store import coordination, models  # noqa: F401  (registers the tables)
from agentlanes.store.queries import LOCK_PROJECT

SCHEMA_LOCK_KEY = 0x61676C6E  # advisory lock id while creating tables on PostgreSQL


def async_url(url: str) -> str:
    """Map a plain database URL to its asyncio driver (aiosqlite, asyncpg)."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    elif backend in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    else:
        raise ValueError(f"database_url: unsupported database {backend!r} (sqlite or postgresql)")
    return parsed.render_as_string(hide_password=False)


class Database:
    """One engine (two on SQLite: a writer that begins IMMEDIATE, and readers)."""

    def __init__(self, url: str, *, pool_size: int = 10) -> None:
        self.url = async_url(url)
        parsed = make_url(self.url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        if self.is_sqlite:
            database = parsed.database or ""
            if database and database != ":memory:":
                Path(database).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
            self.writer = self._sqlite_engine(immediate=True)
            self.reader = self._sqlite_engine(immediate=False)
            # One writer at a time in this process; other processes wait on busy_timeout.
            self._write_lock: asyncio.Lock | None = asyncio.Lock()
        else:
            self.writer = create_async_engine(
                self.url, pool_size=pool_size, max_overflow=pool_size * 2, pool_pre_ping=True
            )
            self.reader = self.writer
            self._write_lock = None

    def _sqlite_engine(self, *, immediate: bool) -> AsyncEngine:
        engine = create_async_engine(self.url, connect_args={"timeout": 30})

        @event.listens_for(engine.sync_engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            # Let us emit BEGIN ourselves (pysqlite's own transaction handling is off).
            dbapi_conn.isolation_level = None
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine.sync_engine, "begin")
        def _on_begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine

    async def create_all(self) -> None:
        """Create missing tables (idempotent; serialised across processes on PostgreSQL)."""
        async with self.writer.begin() as conn:
            if not self.is_sqlite:
                await conn.execute(text(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK_KEY})"))
            await conn.run_sync(SQLModel.metadata.create_all)

    async def dispose(self) -> None:
        await self.writer.dispose()
        if self.reader is not self.writer:
            await self.reader.dispose()

    async def ping(self) -> None:
        async with self.reader.connect() as conn:
            await conn.execute(text("SELECT 1"))

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A session for reads; nothing it does is committed."""
        async with AsyncSession(self.reader, expire_on_commit=False) as session:
            yield session

    @contextlib.asynccontextmanager
    async def read_conn(self) -> AsyncIterator[AsyncConnection]:
        """A bare connection for hot reads in SQLAlchemy Core (no ORM session)."""
        async with self.reader.connect() as conn:
            yield conn

    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        """A session whose work commits on success and rolls back on any error."""
        lock = self._write_lock or contextlib.nullcontext()
        async with lock, AsyncSession(self.writer, expire_on_commit=False) as session:
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise

    async def lock_project(self, session: AsyncSession, project_id: int) -> bool:
        """Take the project's row lock for the rest of the transaction; False when the
        project does not exist (deleted)."""
        # On SQLite BEGIN IMMEDIATE already holds the database's write lock; the read
        # makes sure the transaction began.
        stmt = LOCK_PROJECT if self.is_sqlite else LOCK_PROJECT.with_for_update()
        found = await session.exec(stmt, params={"project_id": project_id})
        return found.first() is not None
