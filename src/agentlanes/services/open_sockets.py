"""The event sockets this process holds, by project, and what each was opened with.

A socket lives longer than the key that opened it may: revoking the key, a rotation
whose grace ends, or deleting the project closes it (SPEC, "One agent cannot hurt
another"). So each socket is registered with the hash of the API key behind its
credential (the key itself, or the key that minted its browser token), and the project
watch (``services/project_watch.py``) judges them again whenever the project changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from agentlanes.store.models import Project

CLOSE_UNAUTHORIZED = 4401
CLOSE_TOO_MANY = 4429


class OpenSocket(Protocol):
    """What the registry needs of a socket (``api/stream.EventStream`` is one)."""

    project: Project
    project_id: int
    key_hash: str | None

    async def close_with(self, code: int, reason: str) -> None: ...


@dataclass(frozen=True)
class KeyState:
    """Whether a key still opens its project: ``refused`` (with why), or valid, until
    ``until`` when it is a replaced key in its grace period."""

    refused: str | None = None
    until: datetime | None = None


def key_state(project: Project, key_hash: str | None, now: datetime) -> KeyState:
    """How the key with this hash stands with the project now. ``None`` (a browser
    token minted before tokens kept their key) stands while any key of the project does."""
    if project.key_revoked_at is not None:
        return KeyState(refused="the project's API keys were revoked")
    if key_hash is None or key_hash == project.api_key_hash:
        return KeyState()
    if (
        key_hash == project.previous_api_key_hash
        and project.previous_key_expires_at is not None
        and project.previous_key_expires_at > now
    ):
        return KeyState(until=project.previous_key_expires_at)
    return KeyState(refused="this API key was replaced and its grace period is over")


class OpenSockets:
    """This process's open event sockets by project (counted for the per-project cap),
    and when each must close because its key's grace ends."""

    def __init__(self) -> None:
        self._by_project: dict[int, dict[OpenSocket, None]] = {}
        self._deadlines: dict[OpenSocket, datetime] = {}

    def count(self, project_id: int) -> int:
        return len(self._by_project.get(project_id, ()))

    def total(self) -> int:
        return sum(len(s) for s in self._by_project.values())

    def add(self, socket: OpenSocket, limit: int) -> bool:
        """Register ``socket``; False (not registered) when its project has ``limit``."""
        sockets = self._by_project.setdefault(socket.project_id, {})
        if len(sockets) >= limit:
            if not sockets:
                del self._by_project[socket.project_id]
            return False
        sockets[socket] = None
        return True

    def remove(self, socket: OpenSocket) -> None:
        sockets = self._by_project.get(socket.project_id)
        if sockets is not None:
            sockets.pop(socket, None)
            if not sockets:
                del self._by_project[socket.project_id]
        self._deadlines.pop(socket, None)

    def of(self, project_id: int) -> list[OpenSocket]:
        return list(self._by_project.get(project_id, ()))

    def projects(self) -> list[int]:
        return list(self._by_project)

    def close_at(self, socket: OpenSocket, when: datetime | None) -> None:
        """Close ``socket`` at ``when`` (its key's grace ends); None: no deadline."""
        if when is None:
            self._deadlines.pop(socket, None)
        else:
            self._deadlines[socket] = when

    def due(self, now: datetime) -> list[OpenSocket]:
        """Sockets whose deadline has passed (taken off the deadline list)."""
        late = [s for s, when in self._deadlines.items() if when <= now]
        for socket in late:
            del self._deadlines[socket]
        return late
