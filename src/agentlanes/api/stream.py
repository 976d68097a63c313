"""One subscriber socket: initial snapshot or replay, then live events without gaps.

Live events come from the hub; offsets must arrive in order and exactly once, so the
socket remembers the last offset it sent, skips anything at or below it, and reads any
gap (or a poke from the hub) from the event log before sending what came after.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from litestar import WebSocket

from agentlanes.errors import AgentlanesError, InvalidInput
from agentlanes.hub import POLL, Subscriber
from agentlanes.services import presence as presence_service
from agentlanes.services import sessions
from agentlanes.services.context import ServiceContext
from agentlanes.services.views import event_view
from agentlanes.store import queries
from agentlanes.store.models import Project

log = logging.getLogger("agentlanes.stream")

CLOSE_TOO_SLOW = 4008
PAGE = 500


class EventStream:
    def __init__(
        self, ctx: ServiceContext, socket: WebSocket[Any, Any, Any], project: Project
    ) -> None:
        assert project.id is not None
        self.ctx = ctx
        self.socket = socket
        self.project = project
        self.project_id = project.id
        self.last_sent = 0
        self.subscriber: Subscriber | None = None
        self.attached: dict[str, None] = {}
        self._send_lock = asyncio.Lock()

    async def send(self, frame: dict[str, Any]) -> None:
        async with self._send_lock:
            await self.socket.send_text(json.dumps(frame, separators=(",", ":")))

    # -- start ---------------------------------------------------------------------------
    async def snapshot(self) -> int:
        snap = await presence_service.presence(self.ctx, self.project)
        await self.send(
            {
                "type": "presence.snapshot",
                "offset": snap["offset"],
                "data": {"sessions": snap["sessions"]},
            }
        )
        return int(snap["offset"])

    async def start(self, since: int | None) -> None:
        """Subscribe first (so nothing committed from now on is missed), then catch up."""
        self.subscriber = self.ctx.hub.subscribe(
            self.project_id, self.ctx.settings.subscriber_queue_size
        )
        if since is None:
            self.last_sent = await self.snapshot()
            return
        async with self.ctx.db.read() as db:
            last = await queries.last_offset(db, self.project_id)
            oldest = await queries.oldest_offset(db, self.project_id)
        if (
            since > last
            or (oldest is None and since < last)
            or (oldest is not None and oldest > since + 1)
        ):
            # Older than the kept history (or from another history): start afresh.
            self.last_sent = await self.snapshot()
            await self.send(
                {"type": "replay.complete", "recovered": False, "offset": self.last_sent}
            )
            return
        self.last_sent = since
        await self.read_log(upto=last)
        await self.send({"type": "replay.complete", "recovered": True, "offset": self.last_sent})

    async def read_log(self, upto: int | None = None) -> None:
        """Send every logged event after ``last_sent`` (up to ``upto``), in order."""
        while True:
            async with self.ctx.db.read() as db:
                rows = await queries.events_after(db, self.project_id, self.last_sent, PAGE, upto)
            for row in rows:
                await self.send(event_view(row))
                self.last_sent = row.offset
            if len(rows) < PAGE:
                return

    # -- live ----------------------------------------------------------------------------
    async def pump(self) -> None:
        assert self.subscriber is not None
        queue = self.subscriber.queue
        while True:
            frame = await queue.get()
            if frame is POLL:
                await self.read_log()
                continue
            offset = int(frame["offset"])
            if offset <= self.last_sent:
                continue
            if offset > self.last_sent + 1:
                await self.read_log(upto=offset)
                if self.last_sent < offset:
                    # The gap was pruned from history meanwhile; go on from here.
                    self.last_sent = offset - 1
                if offset <= self.last_sent:
                    continue
            await self.send(frame)
            self.last_sent = offset

    async def watch_overflow(self, pump: asyncio.Task[None]) -> None:
        assert self.subscriber is not None
        await self.subscriber.overflowed.wait()
        pump.cancel()
        reason = f"too slow: resume with since={self.last_sent}"
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.socket.close(code=CLOSE_TOO_SLOW, reason=reason), timeout=2)

    # -- client frames -------------------------------------------------------------------
    async def handle(self, raw: str) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            await self.error("VALIDATION_ERROR", "frame is not JSON", field="frame")
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "ping":
            await self.send({"type": "pong"})
        elif kind == "attach":
            token = message.get("session_token")
            try:
                if not isinstance(token, str):
                    raise InvalidInput("session_token", "required, a string")
                attached = await sessions.attach(self.ctx, self.project, token)
            except AgentlanesError as exc:
                await self.send({"type": "error", **exc.body()})
                return
            self.attached[attached["session_id"]] = None
            await self.send({"type": "attached", **attached})
        else:
            await self.error("VALIDATION_ERROR", "type must be ping or attach", field="type")

    async def error(self, code: str, message: str, **extra: Any) -> None:
        await self.send({"type": "error", "error": {"code": code, "message": message}, **extra})

    async def keep_attached_alive(self) -> None:
        """While the socket is open, heartbeat the sessions attached to it."""
        interval = min(
            self.ctx.settings.attach_refresh_seconds, self.project.heartbeat_ttl_seconds / 3
        )
        while True:
            await asyncio.sleep(interval)
            if self.attached:
                try:
                    await sessions.touch(self.ctx, self.project, list(self.attached))
                except Exception as exc:  # a database hiccup must not kill the socket
                    log.warning("attach refresh failed: %s", exc)

    async def close(self) -> None:
        if self.subscriber is not None:
            self.ctx.hub.unsubscribe(self.subscriber)
        if self.attached:
            # The TTL runs from the moment the socket closes.
            with contextlib.suppress(Exception):
                await sessions.touch(self.ctx, self.project, list(self.attached))
