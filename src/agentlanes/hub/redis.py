"""Redis pub/sub hub: every process publishes committed events to one channel per project
and listens on all of them with one pattern subscription."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import redis.asyncio as aioredis

from agentlanes.hub.base import Hub

log = logging.getLogger("agentlanes.hub")


class RedisHub(Hub):
    def __init__(self, url: str, *, prefix: str) -> None:
        super().__init__()
        self.url = url
        self.prefix = prefix
        self._redis = aioredis.from_url(url)
        self._listener: asyncio.Task[None] | None = None

    def _channel(self, project_id: int) -> str:
        return f"{self.prefix}:events:{project_id}"

    async def start(self) -> None:
        self._listener = asyncio.create_task(self._listen(), name="redis-hub-listener")

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
        await self._redis.aclose()

    async def publish(self, project_id: int, events: list[dict[str, Any]]) -> None:
        try:
            await self._redis.publish(self._channel(project_id), json.dumps(events))
        except Exception as exc:  # the event log keeps them; local subscribers still get them
            log.warning("redis publish failed: %s", exc)
            self.deliver_local(project_id, events)

    async def _listen(self) -> None:
        pattern = f"{self.prefix}:events:*"
        while True:
            try:
                pubsub = self._redis.pubsub()
                await pubsub.psubscribe(pattern)
                # Anything published while we were away is in the event log.
                self.poke_all()
                async for message in pubsub.listen():
                    if message.get("type") != "pmessage":
                        continue
                    channel = message["channel"].decode()
                    project_id = int(channel.rsplit(":", 1)[1])
                    self.deliver_local(project_id, json.loads(message["data"]))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("redis listener lost: %s; retrying", exc)
                await asyncio.sleep(1.0)

    async def ready(self) -> tuple[bool, str]:
        try:
            await asyncio.wait_for(self._redis.ping(), timeout=2)
        except Exception as exc:
            return False, f"redis unreachable: {exc}"
        return True, "redis"
