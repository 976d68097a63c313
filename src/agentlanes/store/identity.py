"""Which database a URL names: a label to print, and a fingerprint to compare.

The CLI says which database it acted on (the label hides any password); the server
publishes the fingerprint so that a CLI can tell whether the database it would write to
directly is the one the running server uses (see cli/admin_route.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from sqlalchemy.engine import make_url


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for PostgreSQL or an in-memory database)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if not database or database == ":memory:":
        return None
    return Path(database).expanduser().resolve()


def database_label(url: str) -> str:
    """The URL as a person should read it: SQLite with its absolute path, no password."""
    path = sqlite_path(url)
    if path is not None:
        return f"sqlite:///{path}"
    parsed = make_url(url)
    parsed = parsed.set(drivername=parsed.get_backend_name())
    return parsed.render_as_string(hide_password=True)


def database_fingerprint(url: str) -> str:
    """A short hash of the label: equal for two processes that use one database."""
    return hashlib.sha256(database_label(url).encode()).hexdigest()[:16]
