"""One subscriber socket: initial snapshot or replay, then live events without gaps.

Live events come from the hub; offsets must arrive in order and exactly once, so the
socket remembers the last offset it sent, skips anything at or below it, and reads any
gap (or a poke from the hub) from the event log before sending what came after.

A socket whose queue overflows (it cannot keep up) is closed with 4008 and a reason that
names the offset to resume from; the hub never waits for it, so the others are not slowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from litestar import WebSocket
from litestar.exceptions import WebSocketDisconnect

from agentlanes.api import news_stream
from agentlanes.api.news_stream import NewsPush
from agentlanes.errors import AgentlanesError, InvalidInput
from agentlanes.hub import POLL, Frame, Subscriber
from agentlanes.server.wsprotocol import SEND_NOW
from agentlanes.services import presence as presence_service
from agentlanes.services import realtime, sessions
from agentlanes.services.context import ServiceContext
from agentlanes.services.log_reads import PAGE
from agentlanes.store import queries
from agentlanes.store.availability import database_unavailable
from agentlanes.store.models import Project

log = logging.getLogger("agentlanes.stream")

CLOSE_TOO_SLOW = 4008
CLOSE_SERVER_ERROR = 1011
CLOSE_TRY_AGAIN_LATER = 1013  # the database is away: reconnect with since= shortly
CLOSE_TOO_BIG = 1009
# How long a 4008 close may take before we stop waiting for it (the server protocol then
# aborts the connection itself; see server/wsprotocol.py).
CLOSE_WAIT_SECONDS = 2.0


def _dumps(frame: dict[str, Any]) -> str:
    return json.dumps(frame, separators=(",", ":"))


def parse_client_frame(raw: str) -> Any:
    """The JSON of one client frame; ValueError with a message for the client when it is
    not JSON or nested too deeply for the parser (1,500 ``[`` in a row would otherwise escape
    as a RecursionError and drop the socket without a close frame)."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("frame is nested too deeply") from None
    except ValueError:
        raise ValueError("frame is not JSON") from None


def client_frame_text(message: Mapping[str, Any], limit: int) -> str | None:
    """The text of a ``websocket.receive`` message (a binary frame is read as UTF-8), or
    None when there is none. Raises OverflowError past ``limit`` bytes: uvicorn stops such
    frames itself (``ws_max_size``, set by ``agentlanes serve``), this holds under any
    other server too."""
    data: str | bytes | None = message.get("text")
    if data is None:
        data = message.get("bytes")
    if data is None:
        return None
    size = len(data) if isinstance(data, bytes) or len(data) * 4 <= limit else len(data.encode())
    if size > limit:
        raise OverflowError(f"message too big: the limit is {limit} bytes")
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


class EventStream:
    """The life of one event socket, from the first frame to the last."""

    def __init__(
        self, ctx: ServiceContext, socket: WebSocket[Any, Any, Any], project: Project
    ) -> None:
        assert project.id is not None
        self.ctx = ctx
        self.socket = socket
        self.project = project
        self.project_id = project.id
        # The API key behind the credential (services/open_sockets.py); set on open.
        self.key_hash: str | None = None
        self.last_sent = 0
        self.subscriber: Subscriber | None = None
        self.attached: dict[str, None] = {}
        self.news: NewsPush | None = None  # the attached session's news (api/news_stream.py)
        self._pump: asyncio.Task[None] | None = None
        self._cutoff: asyncio.Task[None] | None = None
        # The server's way to write a frame at once (server/wsprotocol.py), if it has one;
        # used only while the pump waits with nothing queued (_waiting).
        extensions: dict[str, Any] = socket.scope.get("extensions") or {}
        self._send_now: Callable[[bytes], bool] | None = extensions.get(SEND_NOW)
        self._waiting = False

    async def send_text(self, text: str) -> None:
        # The raw ASGI message: no per-frame encoding work beyond what the hub did once.
        await self.socket.send({"type": "websocket.send", "bytes": None, "text": text})

    async def send(self, frame: dict[str, Any]) -> None:
        await self.send_text(_dumps(frame))

    # -- the whole socket ---------------------------------------------------------------
    async def run(self, since: int | None, epoch: str | None = None) -> None:
        """Start (snapshot or replay), then pump live events while reading client frames
        until the client goes away or is cut off."""
        # Should the start fail, the client is told to resume where it asked to.
        self.last_sent = since or 0
        try:
            await self.start(since, epoch)
            self._pump = asyncio.create_task(self.pump())
            limit = self.ctx.settings.max_body_bytes
            while True:
                message = await self.socket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = client_frame_text(message, limit)
                if raw is not None:
                    await self.handle(raw)
        except OverflowError as exc:
            await self.close_with(CLOSE_TOO_BIG, str(exc))
        except Exception as exc:
            await self.fail(exc)
        finally:
            await self.close()

    async def close_with(self, code: int, reason: str) -> None:
        """Close with ``code`` and ``reason``, whatever state the peer is in."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self.socket.close(code=code, reason=reason[:120]), timeout=CLOSE_WAIT_SECONDS
            )

    async def fail(self, exc: Exception) -> None:
        """Something went wrong on our side (the database is away, most likely): close
        with a code the client can act on, naming where to resume, not drop the socket."""
        resume = f"try again with since={self.last_sent}" if self.last_sent else "try again"
        if database_unavailable(exc):
            log.warning("event socket of project %s: database unavailable", self.project_id)
            await self.close_with(CLOSE_TRY_AGAIN_LATER, f"database unavailable: {resume}")
        elif isinstance(exc, (WebSocketDisconnect, RuntimeError, OSError)):
            # The client went away, most likely (uvicorn's ClientDisconnected is an
            # OSError): nothing to log; the close is for the rare peer still there.
            await self.close_with(CLOSE_SERVER_ERROR, f"server error: {resume}")
        else:
            log.exception("event socket of project %s failed", self.project_id, exc_info=exc)
            await self.close_with(CLOSE_SERVER_ERROR, f"server error: {resume}")

    # -- start ---------------------------------------------------------------------------
    async def snapshot(self) -> int:
        offset, sessions = await presence_service.live_json(self.ctx, self.project)
        epoch = json.dumps(self.project.epoch)
        await self.send_text(
            f'{{"type":"presence.snapshot","offset":{offset},"epoch":{epoch},'
            f'"data":{{"sessions":{sessions.decode()}}}}}'
        )
        return offset

    async def restart_from_snapshot(self) -> None:
        """History we need is gone (pruned): a fresh snapshot, ``recovered: false``."""
        self.last_sent = await self.snapshot()
        await self.send(
            {
                "type": "replay.complete",
                "recovered": False,
                "offset": self.last_sent,
                "epoch": self.project.epoch,
            }
        )

    async def start(self, since: int | None, epoch: str | None = None) -> None:
        """Subscribe first (so nothing committed from now on is missed), then catch up."""
        self.subscriber = self.ctx.hub.subscribe(
            self.project_id, self.ctx.settings.subscriber_queue_size
        )
        self.subscriber.on_overflow = self._overflowed
        if self._send_now is not None:
            self.subscriber.direct = self._direct
        if since is None:
            self.last_sent = await self.snapshot()
        else:
            async with self.ctx.db.read() as db:
                last = await queries.last_offset(db, self.project_id)
                oldest = await queries.oldest_offset(db, self.project_id)
            if not realtime.resumable(
                since=since,
                epoch=epoch,
                current_epoch=self.project.epoch,
                last=last,
                oldest=oldest,
            ):
                # Older than the kept history, newer than it, or from another history.
                await self.restart_from_snapshot()
            else:
                self.last_sent = since
                if await self.read_log(upto=last):
                    await self.send(
                        {
                            "type": "replay.complete",
                            "recovered": True,
                            "offset": self.last_sent,
                            "epoch": self.project.epoch,
                        }
                    )
                else:
                    await self.restart_from_snapshot()
        self.ctx.hub.mark_seen(self.project_id, self.last_sent)

    async def read_log(self, upto: int | None = None) -> bool:
        """Send every logged event after ``last_sent`` (up to ``upto``), in order.

        False when the next event is no longer in the log (pruned meanwhile)."""
        reads = self.ctx.log_reads
        while True:
            frames = await reads.read(self.project_id, self.last_sent, upto)
            for frame in frames:
                if frame.offset != self.last_sent + 1:
                    return False
                await self.send_text(frame.text)
                self.last_sent = frame.offset
            if len(frames) < PAGE:
                return True

    # -- live ----------------------------------------------------------------------------
    async def pump(self) -> None:
        """Send live events; if the log cannot be read (the database is away), close with
        1013 (1011 for anything else) naming the offset to resume from, rather than leave
        a socket that sends nothing."""
        try:
            await self._pump_frames()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if self.subscriber is not None:
                self.ctx.hub.unsubscribe(self.subscriber)
            await self.fail(exc)

    async def _pump_frames(self) -> None:
        assert self.subscriber is not None
        get = self.subscriber.get
        while True:
            self._waiting = True
            try:
                frame: Frame = await get()
            finally:
                self._waiting = False
            if frame is POLL:
                if not await self.read_log():
                    await self.restart_from_snapshot()
                continue
            offset = frame.offset
            if offset <= self.last_sent:
                continue  # already sent (read from the log to fill a gap)
            if offset > self.last_sent + 1:
                # Events committed before this one have not reached us yet (another
                # process's notification is late or lost): read them from the log.
                if not await self.read_log(upto=offset):
                    await self.restart_from_snapshot()
                if offset <= self.last_sent:
                    continue
            await self.send_text(frame.text)
            self.last_sent = offset
            if self.news is not None:
                await self.news.push()

    def _direct(self, frame: Frame) -> bool:
        """The hub's frame sent at once (True), when it is the next one and the pump is
        idle: everything before it is sent, and no news push follows it. Otherwise
        (False) it is queued for the pump, which waits for the socket."""
        if not self._waiting or self.news is not None or frame.offset != self.last_sent + 1:
            return False
        assert self._send_now is not None
        if not self._send_now(frame.wire()):
            return False
        self.last_sent = frame.offset
        return True

    def _overflowed(self) -> None:
        """Called by the hub (synchronously) when this socket's queue is full."""
        if self._cutoff is None:
            self._cutoff = asyncio.create_task(self.cut_off())

    async def cut_off(self) -> None:
        """Close with 4008, naming the offset to resume from. The hub has stopped queueing
        for this socket already, so nobody else waits on it."""
        if self.subscriber is not None:
            # Let go of it at once, whatever the close below does.
            self.ctx.hub.unsubscribe(self.subscriber)
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
        reason = f"too slow: resume with since={self.last_sent}"
        log.info("event socket of project %s cut off: %s", self.project_id, reason)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self.socket.close(code=CLOSE_TOO_SLOW, reason=reason), timeout=CLOSE_WAIT_SECONDS
            )

    # -- client frames -------------------------------------------------------------------
    async def handle(self, raw: str) -> None:
        try:
            message = parse_client_frame(raw)
        except ValueError as exc:
            await self.error("VALIDATION_ERROR", str(exc), field="frame")
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "ping":
            await self.send_text('{"type":"pong"}')
        elif kind == "attach":
            token = message.get("session_token")
            try:
                if not isinstance(token, str):
                    raise InvalidInput("session_token", "required, a string")
                attached = await sessions.attach(self.ctx, self.project, token)
            except AgentlanesError as exc:
                await self.send({"type": "error", **exc.body()})
                return
            if attached["session_id"] not in self.attached:
                self.attached[attached["session_id"]] = None
                # The process beats it while this socket holds it (services/liveness/).
                self.ctx.liveness.hold(
                    self.project_id, attached["session_id"], self.project.heartbeat_ttl_seconds
                )
            await self.send({"type": "attached", **attached})
        elif kind == "news":
            pushed = await news_stream.subscribe(
                self.ctx, self.project, self.attached, message, self.send
            )
            if pushed is not None:
                self.news = pushed
                # An event applied while the subscription started is sent now, not with
                # the next one.
                await pushed.push()
        else:
            await self.error("VALIDATION_ERROR", "type must be ping, attach or news", field="type")

    async def error(self, code: str, message: str, **extra: Any) -> None:
        await self.send({"type": "error", "error": {"code": code, "message": message}, **extra})

    async def close(self) -> None:
        """Stop everything this socket started; the TTL of attached sessions runs from now."""
        if self.subscriber is not None:
            self.ctx.hub.unsubscribe(self.subscriber)
        tasks = [t for t in (self._pump,) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.attached:
            for session_id in self.attached:
                self.ctx.liveness.release(session_id)
            with contextlib.suppress(Exception):
                await sessions.touch(self.ctx, self.project, list(self.attached))
