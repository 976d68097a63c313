"""The real services a benchmark runs against: a scratch PostgreSQL database, Redis, and
enough open files for a thousand sockets on each side.

A service that is not there ends the benchmark with exit status 2 and a line saying what
to start or which option to pass, never with a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import secrets
import sys
from collections.abc import Iterator

import asyncpg

POSTGRES_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
REDIS_URL = "redis://127.0.0.1:6379/0"


def raise_open_files(want: int = 8192) -> None:
    """Raise the soft limit on open files (server processes started later inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY:
        want = min(hard, want)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def postgres_or_exit(admin_url: str) -> None:
    async def probe() -> None:
        conn = await asyncpg.connect(admin_url, timeout=10)
        await conn.close()

    try:
        asyncio.run(probe())
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        print(
            f"PostgreSQL at {admin_url} is not usable ({exc}): start it, pass --postgres-url, "
            "or use SQLite (see --help)",
            file=sys.stderr,
        )
        sys.exit(2)


def redis_or_exit(url: str) -> None:
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except Exception as exc:
        print(
            f"Redis at {url} is not usable ({exc}): start it, pass --redis-url, or use --no-redis",
            file=sys.stderr,
        )
        sys.exit(2)


@contextlib.contextmanager
def scratch_postgres(admin_url: str, prefix: str = "agentlanes_bench") -> Iterator[str]:
    """A fresh database on the server of admin_url (its URL), dropped afterwards."""
    name = f"{prefix}_{secrets.token_hex(4)}"

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(admin_url, timeout=10)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{admin_url.rsplit('/', 1)[0]}/{name}"
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
