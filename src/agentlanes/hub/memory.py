"""In-process hub: one server process, no backend."""

from __future__ import annotations

from typing import Any

from agentlanes.hub.base import Hub


class MemoryHub(Hub):
    """There are no other processes: ``publish`` already delivered to every subscriber."""

    name = "memory"

    async def send_to_others(self, project_id: int, events: list[dict[str, Any]]) -> None:
        return None
