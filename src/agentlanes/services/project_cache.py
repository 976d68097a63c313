"""Projects found by API key hash, kept for a while so a hot request reads no project row."""

from __future__ import annotations

import time
from typing import Any


class RecentProjects:
    """Projects found by API key hash, kept for ``ttl`` seconds (bounded)."""

    def __init__(self, ttl: float = 30.0, size: int = 1024) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: dict[str, tuple[float, Any]] = {}

    def get(self, key_hash: str) -> Any | None:
        entry = self._entries.get(key_hash)
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[1]

    def project_ids(self) -> set[int]:
        """The projects with a cached entry (expired ones included: still held)."""
        return {entry[1].id for entry in self._entries.values()}

    def of_project(self, project_id: int) -> list[Any]:
        return [entry[1] for entry in self._entries.values() if entry[1].id == project_id]

    def forget_project(self, project_id: int) -> None:
        """Drop every entry of the project (it changed or is gone): the next request
        reads its row."""
        for key_hash in [k for k, e in self._entries.items() if e[1].id == project_id]:
            del self._entries[key_hash]

    def put(self, key_hash: str, project: Any) -> None:
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key_hash] = (time.monotonic() + self.ttl, project)
