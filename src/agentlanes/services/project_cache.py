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

    def put(self, key_hash: str, project: Any) -> None:
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key_hash] = (time.monotonic() + self.ttl, project)
