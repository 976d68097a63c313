"""Telling "the database is away" apart from a bug.

A PostgreSQL restart, fail-over or a pool that cannot get a connection surfaces as many
exception types, wrapped or not by SQLAlchemy: a refused or reset connection, asyncpg's
``CannotConnectNowError`` (starting up / shutting down), ``AdminShutdownError``
(terminated by the restart), ``ConnectionDoesNotExistError``, SQLAlchemy's pool timeout
or a DBAPI error that invalidated its connection. The API answers all of them with 503
and a retry hint (``api/errors.py``), the event socket with close code 1013 (try again
later); anything else stays a 500, since it is ours to fix.
"""

from __future__ import annotations

import sqlite3

from sqlalchemy import exc as sa_exc

# SQLSTATE classes and codes that mean "not now" rather than "wrong": connection
# exceptions (08), shutdown and start-up (57P01-57P03), too many connections (53300).
_PG_UNAVAILABLE_PREFIXES = ("08", "57P01", "57P02", "57P03", "53300")
_SQLITE_UNAVAILABLE = ("database is locked", "unable to open database", "disk i/o error")


def _one_unavailable(exc: BaseException) -> bool:
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, (sa_exc.TimeoutError, sa_exc.DisconnectionError)):
        return True  # the pool waited in vain for a connection, or lost it
    if isinstance(exc, OSError):
        return True  # refused, reset, unreachable, timed out: no server to talk to
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and sqlstate.startswith(_PG_UNAVAILABLE_PREFIXES):
        return True
    if type(exc).__name__ == "ConnectionDoesNotExistError":  # asyncpg, without its import
        return True
    if isinstance(exc, sqlite3.OperationalError):
        return str(exc).lower().startswith(_SQLITE_UNAVAILABLE)
    return False


def database_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) says the database cannot be reached now."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _one_unavailable(current):
            return True
        orig = getattr(current, "orig", None)  # SQLAlchemy's wrapped DBAPI error
        if isinstance(orig, BaseException) and _one_unavailable(orig):
            return True
        current = current.__cause__ or current.__context__
    return False
