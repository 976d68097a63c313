"""The agent side's files are its own (SPEC "One agent cannot hurt another"): session
files, news files, edits state, the keepalive's pid and log are created ``0600`` in
``0700`` folders. A news file holds other agents' private messages; a session file, a
token. Standard library only (the hooks write through it)."""

from __future__ import annotations

import os

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: str) -> None:
    """Make the folder ``path`` (and its missing parents) ``0700``; one made earlier
    with a wider mode is narrowed."""
    os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    try:
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, DIR_MODE)
    except OSError:
        pass  # not ours to change: the file modes below still hold


def private_fd(path: str, flags: int) -> int:
    """``os.open(path, flags)`` of a file made ``0600`` in a ``0700`` folder (one made
    earlier with a wider mode is narrowed)."""
    folder = os.path.dirname(path)
    if folder:  # the files live in the agent's sessions folder, never the working dir
        private_dir(folder)
    fd = os.open(path, flags | os.O_CREAT, FILE_MODE)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, FILE_MODE)
    except OSError:
        pass
    return fd


def private_open(path: str, mode: str) -> int:
    """The fd of ``path`` opened for ``mode`` (``"w"``, ``"a"``, ``"ab"``, ``"r+"``) as a
    private file; wrap it with ``os.fdopen(fd, mode, ...)``."""
    flags = {
        "w": os.O_WRONLY | os.O_TRUNC,
        "a": os.O_WRONLY | os.O_APPEND,
        "ab": os.O_WRONLY | os.O_APPEND,
        "r+": os.O_RDWR,
    }[mode]
    return private_fd(path, flags)
