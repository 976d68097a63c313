"""The real PostgreSQL and Redis on this machine: reachability, scratch databases, skips.

Without them tests skip with a reason; with AGENTLANES_REQUIRE_SERVICES=1 (CI) a skip
for want of a service is a failure instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket

import pytest

PG_HOST = os.environ.get("AGENTLANES_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("AGENTLANES_TEST_PG_PORT", "5432"))
PG_USER = os.environ.get("AGENTLANES_TEST_PG_USER", "postgres")
PG_DB = os.environ.get("AGENTLANES_TEST_PG_DB", "test")
REDIS_URL = os.environ.get("AGENTLANES_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def required() -> bool:
    return os.environ.get("AGENTLANES_REQUIRE_SERVICES") == "1"


def unavailable(what: str, why: str) -> None:
    message = f"{what} is not available ({why})"
    if required():
        pytest.fail(f"{message}; AGENTLANES_REQUIRE_SERVICES=1 makes this a failure")
    pytest.skip(message)


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def pg_url(database: str) -> str:
    return f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{database}"


async def _admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, database=PG_DB)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def create_pg_database() -> str:
    """A fresh database for one test run (dropped by drop_pg_database)."""
    if not _port_open(PG_HOST, PG_PORT):
        unavailable("PostgreSQL", f"nothing listens on {PG_HOST}:{PG_PORT}")
    name = f"agentlanes_t_{secrets.token_hex(6)}"
    try:
        asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        unavailable("PostgreSQL", f"cannot create a scratch database: {exc}")
    return name


def drop_pg_database(name: str) -> None:
    with contextlib.suppress(Exception):
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def require_redis() -> str:
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except Exception as exc:
        unavailable("Redis", f"{REDIS_URL}: {exc}")
    return REDIS_URL
