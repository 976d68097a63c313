"""Redis pub/sub hub (redis-py directly): every process publishes its committed events on
one channel and listens to it; each process hands what others published to its own
subscribers.

Redis is only the doorbell. The events are durable in the database, so when Redis is
away nothing is lost: publishing is dropped (logged once per outage), the listener
reconnects and pokes every local subscriber to re-read the log, and the periodic
catch-up job (``jobs.catch_up``) finds any notification that went missing meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from agentlanes.hub.base import Frame, Hub

log = logging.getLogger("agentlanes.hub")

# Outgoing messages waiting for the publisher task; beyond this they are dropped (the
# event log has them, and the catch-up finds them).
OUTBOX_LIMIT = 10_000
# Messages sent in one pipeline round trip.
BATCH = 256
RECONNECT_MIN, RECONNECT_MAX = 0.2, 2.0


class RedisHub(Hub):
    name = "redis"

    def __init__(self, url: str, *, prefix: str) -> None:
        super().__init__()
        self.url = url
        self.channel = f"{prefix}:events"
        # Tells this process's own messages apart: its subscribers already have them.
        self.node = secrets.token_hex(8)
        options: dict[str, Any] = {
            "socket_connect_timeout": 2,
            "health_check_interval": 10,
            # One immediate retry (a pooled connection may be stale after Redis restarted),
            # then fail fast and let our loops decide: redis-py's default retries with
            # backoff would hold a publish (or a readiness probe) for seconds.
            "retry": Retry(NoBackoff(), 1),
        }
        self._redis = aioredis.Redis.from_url(url, socket_timeout=5, **options)
        self._listen_redis = aioredis.Redis.from_url(url, **options)
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue(maxsize=OUTBOX_LIMIT)
        self._tasks: list[asyncio.Task[None]] = []
        self._listening = False
        # Outage bookkeeping: one line when Redis goes away, one when it is back, never
        # one per event.
        self._down: str | None = None

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._listen(), name="redis-hub-listener"),
            asyncio.create_task(self._publish_loop(), name="redis-hub-publisher"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for client in (self._redis, self._listen_redis):
            with contextlib.suppress(Exception):
                await client.aclose()

    # -- outage bookkeeping ---------------------------------------------------------------
    def _failed(self, part: str, exc: BaseException) -> None:
        """Redis failed us (publishing, listening or a probe): log it once per outage."""
        if self._down is None:
            self._down = f"{type(exc).__name__}: {exc}"
            log.warning(
                "redis unavailable (%s: %s); events stay in the database log and "
                "subscribers catch up when it returns",
                part,
                exc,
            )

    def _recovered(self) -> None:
        """Redis answered again: log it, and have every process re-read the log, since
        notifications sent meanwhile are lost."""
        if self._down is not None:
            self._down = None
            log.warning("redis available again")
            self.poke_all()
            with contextlib.suppress(asyncio.QueueFull):
                poke = {"node": self.node, "poke": True}
                self._outbox.put_nowait(json.dumps(poke).encode())

    # -- publishing -----------------------------------------------------------------------
    async def send_to_others(self, project_id: int, frames: list[Frame]) -> None:
        # The frames are JSON already: splice them in rather than encode them again.
        events = ",".join(frame.text for frame in frames)
        payload = f'{{"node":"{self.node}","project":{project_id},"events":[{events}]}}'.encode()
        try:
            self._outbox.put_nowait(payload)
        except asyncio.QueueFull:
            self._failed("publish", RuntimeError("outbox full"))

    async def _publish_loop(self) -> None:
        """Send queued messages in pipelined batches, off the request path."""
        while True:
            batch = [await self._outbox.get()]
            while len(batch) < BATCH and not self._outbox.empty():
                batch.append(self._outbox.get_nowait())
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for payload in batch:
                        pipe.publish(self.channel, payload)
                    await pipe.execute()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Dropped on purpose: the events are in the log, and the other processes
                # are told to re-read it when publishing works again.
                self._failed("publish", exc)
                await asyncio.sleep(RECONNECT_MIN)
                continue
            self._recovered()

    # -- listening ------------------------------------------------------------------------
    async def _listen(self) -> None:
        delay = RECONNECT_MIN
        while True:
            pubsub = self._listen_redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                self._listening = True
                self._recovered()
                delay = RECONNECT_MIN
                # Anything published while we were away (or before we subscribed) is in
                # the event log: every local subscriber re-reads it.
                self.poke_all()
                while True:
                    message = await pubsub.get_message(timeout=5.0)
                    if message is not None and message.get("type") == "message":
                        self._receive(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._listening = False
                self._failed("listen", exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX)
            finally:
                self._listening = False
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(pubsub.aclose(), timeout=1)

    def _receive(self, data: bytes) -> None:
        try:
            message = json.loads(data)
            if message.get("node") == self.node:
                return
            if message.get("poke"):
                self.poke_all()
                return
            project_id = int(message["project"])
            frames = [Frame.of(event) for event in message["events"]]
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignored a malformed hub message: %s", exc)
            return
        self.deliver_local(project_id, frames)

    # -- readiness ------------------------------------------------------------------------
    async def ready(self) -> tuple[bool, str]:
        try:
            await asyncio.wait_for(self._redis.ping(), timeout=2)
        except Exception as exc:
            self._failed("ping", exc)
            return False, f"unreachable: {type(exc).__name__}: {exc}"
        self._recovered()
        if not self._listening:
            return False, "unreachable: listener reconnecting"
        return True, "ok"
