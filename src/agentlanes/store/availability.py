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

import errno
import logging
import socket
import sqlite3
import time

from sqlalchemy import exc as sa_exc

# SQLSTATE classes and codes that mean "not now" rather than "wrong": connection
# exceptions (08), shutdown and start-up (57P01-57P03), too many connections (53300).
_PG_UNAVAILABLE_PREFIXES = ("08", "57P01", "57P02", "57P03", "53300")
_UNREACHABLE = {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN, errno.ENETDOWN}
_SQLITE_UNAVAILABLE = ("database is locked", "unable to open database", "disk i/o error")


def _one_unavailable(exc: BaseException) -> bool:
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, (sa_exc.TimeoutError, sa_exc.DisconnectionError)):
        return True  # the pool waited in vain for a connection, or lost it
    if isinstance(exc, (ConnectionError, TimeoutError, socket.gaierror)):
        return True  # refused, reset, timed out, unknown host: no server to talk to
    if isinstance(exc, OSError) and (
        exc.errno in _UNREACHABLE or str(exc).startswith("Multiple exceptions")
    ):
        return True  # no route; or every address of the host failed (asyncpg)
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


class OutageLog:
    """One log line per ``every`` seconds while the database is away, not one per call
    (or per run of a one-second job), and no traceback: an outage is not a bug."""

    def __init__(self, log: logging.Logger, every: float = 10.0) -> None:
        self.log = log
        self.every = every
        self.last = float("-inf")
        self.quiet = 0

    def note(self, what: str, exc: BaseException) -> None:
        now = time.monotonic()
        if now - self.last < self.every:
            self.quiet += 1
            return
        more = f" ({self.quiet} more since the last line)" if self.quiet else ""
        self.log.warning("database unavailable (%s): %s: %s%s", what, type(exc).__name__, exc, more)
        self.last, self.quiet = now, 0


def report_job_failure(
    log: logging.Logger, job: str, exc: BaseException, outages: dict[str, OutageLog]
) -> None:
    """A scheduled job failed: a database outage is noted now and then (in ``outages``,
    by job: the app's own), anything else is logged with its traceback."""
    if database_unavailable(exc):
        outage = outages.get(job)
        if outage is None:
            outage = outages[job] = OutageLog(log)
        outage.note(job, exc)
    else:
        log.error("%s failed", job, exc_info=exc)
