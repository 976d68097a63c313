"""Pick the hub backend from the settings."""

from __future__ import annotations

from agentlanes.hub.base import Hub
from agentlanes.settings import Settings


def create_hub(settings: Settings) -> Hub:
    """The Redis hub when ``redis_url`` is set (several processes), else the memory hub."""
    if settings.redis_url:
        from agentlanes.hub.redis import RedisHub

        return RedisHub(settings.redis_url, prefix=settings.redis_channel_prefix)
    from agentlanes.hub.memory import MemoryHub

    return MemoryHub()
