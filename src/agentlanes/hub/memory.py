"""In-process hub: one server process, no backend."""

from __future__ import annotations

from typing import Any

from agentlanes.hub.base import Hub


class MemoryHub(Hub):
    async def publish(self, project_id: int, events: list[dict[str, Any]]) -> None:
        self.deliver_local(project_id, events)
