"""Projects found by API key hash, kept for a while so a hot request reads no project row."""

from __future__ import annotations

import time
from typing import Any

from cachetools import TTLCache


class RecentProjects:
    """Projects found by API key hash, kept for ``ttl`` seconds; at most ``size`` of
    them, the least recently used dropped first."""

    def __init__(self, ttl: float = 30.0, size: int = 1024) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: TTLCache[str, Any] = TTLCache(maxsize=size, ttl=ttl, timer=time.monotonic)

    def get(self, key_hash: str) -> Any | None:
        return self._entries.get(key_hash)

    def project_ids(self) -> set[int]:
        """The projects with an entry that has not expired."""
        return {project.id for project in self._entries.values()}

    def of_project(self, project_id: int) -> list[Any]:
        return [project for project in self._entries.values() if project.id == project_id]

    def forget_project(self, project_id: int) -> None:
        """Drop every entry of the project (it changed or is gone): the next request
        reads its row."""
        for key_hash in [k for k, p in self._entries.items() if p.id == project_id]:
            self._entries.pop(key_hash, None)

    def put(self, key_hash: str, project: Any) -> None:
        self._entries[key_hash] = project
