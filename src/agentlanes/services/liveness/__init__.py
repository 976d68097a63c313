"""Liveness without a database write per heartbeat: the interface and the write-through
(``base.py``, where the rules are told), one process's beats in memory (``memory.py``),
several processes' in Redis (``redis.py``), and ``create_liveness`` to pick one."""

from __future__ import annotations

from agentlanes.settings import Settings

from .base import ENDED_MARK_SECONDS, Beat, Liveness
from .memory import MemoryLiveness
from .redis import RedisLiveness

__all__ = [
    "ENDED_MARK_SECONDS",
    "Beat",
    "Liveness",
    "MemoryLiveness",
    "RedisLiveness",
    "create_liveness",
]


def create_liveness(settings: Settings) -> Liveness:
    """Redis when ``redis_url`` is set (several processes share the beats), else memory."""
    if settings.redis_url:
        return RedisLiveness(
            settings.redis_url,
            prefix=settings.redis_channel_prefix,
            flush_seconds=settings.liveness_flush_seconds,
            attach_refresh_seconds=settings.attach_refresh_seconds,
        )
    return MemoryLiveness(settings.liveness_flush_seconds, settings.attach_refresh_seconds)
