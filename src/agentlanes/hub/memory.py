"""In-process hub: one server process, no backend."""

from __future__ import annotations

from agentlanes.hub.base import Frame, Hub


class MemoryHub(Hub):
    """There are no other processes: ``publish`` already delivered to every subscriber."""

    name = "memory"

    async def send_to_others(self, project_id: int, frames: list[Frame]) -> None:
        return None
