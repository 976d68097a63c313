"""Which errors mean "the database is away" (503 / close 1013) and which are bugs (500)."""

from __future__ import annotations

import errno
import logging
import sqlite3

import asyncpg
import pytest
from sqlalchemy import exc as sa_exc
from uvicorn.protocols.utils import ClientDisconnected

from agentlanes.store.availability import OutageLog, database_unavailable


def _wrapped(orig: BaseException, *, invalidated: bool = False) -> sa_exc.DBAPIError:
    error = sa_exc.DBAPIError("SELECT 1", {}, orig, connection_invalidated=invalidated)
    error.__cause__ = orig
    return error


def _chained(outer: BaseException, cause: BaseException) -> BaseException:
    outer.__cause__ = cause
    return outer


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
        ConnectionResetError(),
        TimeoutError(),
        OSError(errno.EHOSTUNREACH, "No route to host"),
        OSError("Multiple exceptions: [Errno 111] Connect call failed"),
        asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
        asyncpg.exceptions.AdminShutdownError("terminating connection"),
        asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed"),
        _wrapped(asyncpg.exceptions.AdminShutdownError("terminating connection")),
        _wrapped(ValueError("anything"), invalidated=True),
        sa_exc.TimeoutError("QueuePool limit of size 10 overflow 20 reached"),
        _wrapped(sqlite3.OperationalError("database is locked")),
        _chained(RuntimeError("while reading"), ConnectionRefusedError()),
    ],
)
def test_outages(exc: BaseException) -> None:
    assert database_unavailable(exc)


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("bad"),
        KeyError("x"),
        ClientDisconnected(),  # the socket's peer went away: not the database
        _wrapped(sqlite3.OperationalError("no such table: sessions")),
        _wrapped(asyncpg.exceptions.UniqueViolationError("duplicate key")),
        sa_exc.IntegrityError("INSERT", {}, ValueError("duplicate")),
        asyncpg.exceptions.SyntaxOrAccessError("syntax error"),
    ],
)
def test_bugs_stay_bugs(exc: BaseException) -> None:
    assert not database_unavailable(exc)


def test_outage_log_writes_one_line_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    outage = OutageLog(logging.getLogger("test.outage"), every=60)
    with caplog.at_level(logging.WARNING, logger="test.outage"):
        for _ in range(100):
            outage.note("POST /api/v1/checkin", ConnectionRefusedError("refused"))
    assert len(caplog.records) == 1
    assert "database unavailable (POST /api/v1/checkin)" in caplog.records[0].getMessage()
    assert caplog.records[0].exc_info is None
