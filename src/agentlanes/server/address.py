"""Where a running server listens, recorded beside its database, so that the ``project``
commands (run with the same settings, hence the same database) find a server started on
another port (``agentlanes serve --port 9000``) without ``--server``.

The record is a small JSON file ``{"url", "pid"}``: ``<database file>.server.json`` for
SQLite; for another database, ``$XDG_STATE_HOME/agentlanes/server-<fingerprint>.json``
(``~/.local/state`` by default), the fingerprint being the one ``GET /server`` publishes.
``serve`` writes it before it listens and removes it when it stops; a record left by a
server that died is harmless (the command probes the address and checks the database).
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def record_path(database_url: str) -> Path:
    from agentlanes.store.identity import database_fingerprint, sqlite_path

    db_file = sqlite_path(database_url)
    if db_file is not None:
        return db_file.with_name(db_file.name + ".server.json")
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "agentlanes" / f"server-{database_fingerprint(database_url)}.json"


def record(database_url: str, url: str) -> Path | None:
    """Record that this process serves ``database_url`` at ``url``; None if it cannot."""
    path = record_path(database_url)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fd, 0o600)
            fh.write(json.dumps({"url": url, "pid": os.getpid()}) + "\n")
    except OSError:
        return None
    return path


def forget(path: Path | None) -> None:
    """Remove our record (only if it is still ours: another server may have taken over)."""
    if path is None:
        return
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass


def recorded(database_url: str) -> str | None:
    """The URL a server recorded for this database, or None. Only a record this user
    wrote counts: the `project` commands send the admin token where it points, and a
    database in a shared folder (/tmp) would let another user point them at a server of
    theirs that answers with the database's (computable) fingerprint."""
    path = record_path(database_url)
    try:
        st = os.stat(path)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    url = data.get("url") if isinstance(data, dict) else None
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None
