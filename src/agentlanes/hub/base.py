"""The hub interface every backend implements, and the per-socket subscriber queue.

A backend only has to carry committed events from the process that wrote them to every
other process (``publish``) and hand what arrives to ``deliver_local``. Everything else
(bounded queues, pokes, catch-up) lives here, once.
"""

from __future__ import annotations

import asyncio
import json
import struct
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from cachetools import LRUCache


class Frame:
    """One event as it goes out on every socket: encoded to JSON once, not once per socket,
    and framed for the wire once (``wire``)."""

    __slots__ = ("_wire", "offset", "text")

    def __init__(self, offset: int, text: str) -> None:
        self.offset = offset
        self.text = text
        self._wire: bytes | None = None

    def wire(self) -> bytes:
        """The WebSocket text frame a server sends (RFC 6455 section 5.2: final, unmasked,
        no extensions), made once for every socket."""
        if self._wire is None:
            payload = self.text.encode()
            n = len(payload)
            if n < 126:
                head = struct.pack("!BB", 0x81, n)
            elif n < 1 << 16:
                head = struct.pack("!BBH", 0x81, 126, n)
            else:
                head = struct.pack("!BBQ", 0x81, 127, n)
            self._wire = head + payload
        return self._wire

    @classmethod
    def of(cls, event: dict[str, Any]) -> Frame:
        return cls(int(event["offset"]), json.dumps(event, separators=(",", ":")))


# Projects whose newest offset is remembered (the least recently used are dropped first).
NEWEST_KEPT = 100_000
# Sockets one fan-out step offers an event to before it gives the event loop back (SPEC
# "One agent cannot hurt another": one event written to 10,000 sockets held the loop
# ~0.1 s in one stretch; a step of this many is a few milliseconds).
FANOUT_SLICE = 500

# An item in a subscriber's queue that means "look in the event log for anything newer".
POLL = Frame(-1, "")


class Subscriber:
    """One socket's bounded queue. When it would overflow, ``on_overflow`` fires once and
    nothing more is queued: the socket is cut off (close 4008), never silently thinned.

    A deque and one waiter future rather than an ``asyncio.Queue``: thousands of idle
    sockets each hold one, so it is kept small.
    """

    __slots__ = (
        "_items",
        "_waiter",
        "direct",
        "maxsize",
        "on_overflow",
        "overflowed",
        "project_id",
    )

    def __init__(self, project_id: int, maxsize: int) -> None:
        self.project_id = project_id
        self.maxsize = maxsize
        self.overflowed = False
        self.on_overflow: Callable[[], None] | None = None
        # Sends a frame at once, when its socket can (True) without waiting: then the
        # frame is not queued, and no task wakes for it (api/stream.py). One event to
        # thousands of idle sockets is thousands of writes, not thousands of task switches.
        self.direct: Callable[[Frame], bool] | None = None
        self._items: deque[Frame] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def __len__(self) -> int:
        return len(self._items)

    def offer(self, frame: Frame) -> None:
        """Queue a frame without waiting; a full queue marks the subscriber as too slow."""
        if self.overflowed:
            return
        if not self._items and self.direct is not None and self.direct(frame):
            return
        if len(self._items) >= self.maxsize:
            self.overflowed = True
            self._items.clear()
            if self.on_overflow is not None:
                self.on_overflow()
            return
        self._items.append(frame)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def poke(self) -> None:
        """Ask the socket to re-read the event log (after a lost or missed notification)."""
        if not self._items or self._items[-1] is not POLL:
            self.offer(POLL)

    async def get(self) -> Frame:
        """The next queued frame, waiting for one if the queue is empty."""
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._items.popleft()


class Hub(ABC):
    """Local subscribers per project, and a way to reach the other processes' subscribers."""

    name = "hub"

    def __init__(self) -> None:
        self._subscribers: dict[int, set[Subscriber]] = {}
        # The newest offset this process has seen per project with local subscribers;
        # the catch-up job compares it with the database to find lost notifications.
        self._seen: dict[int, int] = {}
        # The newest offset committed anywhere that reached this process, per project
        # (subscribers or not): tells the live projection when it is behind. At most
        # NEWEST_KEPT projects, the least recently used go first.
        self._newest: LRUCache[int, int] = LRUCache(maxsize=NEWEST_KEPT)
        # Projects whose events are being fanned out in steps: the batches still to go,
        # in order (a project's events reach each socket in the order they came).
        self._fanning: dict[int, deque[list[Frame]]] = {}
        self._fan_tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:  # noqa: B027  (optional for backends)
        """Connect to the backend, if any."""

    async def stop(self) -> None:  # noqa: B027
        """Disconnect from the backend, if any."""

    def subscribe(self, project_id: int, maxsize: int) -> Subscriber:
        """A new bounded queue that receives the project's events from now on."""
        subscriber = Subscriber(project_id, maxsize)
        self._subscribers.setdefault(project_id, set()).add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        subscribers = self._subscribers.get(subscriber.project_id)
        if subscribers is not None:
            subscribers.discard(subscriber)
            if not subscribers:
                # No entry kept per project once its last local subscriber left.
                del self._subscribers[subscriber.project_id]
                self._seen.pop(subscriber.project_id, None)

    def forget(self, project_id: int) -> None:
        """Drop what is kept for a deleted project (its sockets were closed)."""
        self._seen.pop(project_id, None)
        self._newest.pop(project_id, None)

    def subscriber_count(self) -> int:
        return sum(len(s) for s in self._subscribers.values())

    def subscribed_projects(self) -> list[int]:
        """Projects with at least one subscriber in this process."""
        return list(self._subscribers)

    def newest(self, project_id: int) -> int:
        """The newest offset of the project known to have been committed (0: none seen)."""
        return self._newest.get(project_id, 0)

    def deliver_local(self, project_id: int, frames: list[Frame]) -> None:
        """Hand events to this process's subscribers of the project."""
        if not frames:
            return
        newest = frames[-1].offset
        if newest > self._newest.get(project_id, 0):
            self._newest[project_id] = newest
        subscribers = self._subscribers.get(project_id)
        if not subscribers:
            return
        if newest > self._seen.get(project_id, 0):
            self._seen[project_id] = newest
        pending = self._fanning.get(project_id)
        if pending is not None:  # a fan-out of the project is under way: after it
            pending.append(frames)
            return
        if len(subscribers) <= FANOUT_SLICE:
            _offer(tuple(subscribers), frames)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop to give back (a synchronous caller)
            _offer(tuple(subscribers), frames)
            return
        self._fanning[project_id] = deque([frames])
        task = loop.create_task(self._fan_out(project_id))
        self._fan_tasks.add(task)
        task.add_done_callback(self._fan_tasks.discard)

    async def _fan_out(self, project_id: int) -> None:
        """Offer the project's pending events to its sockets, ``FANOUT_SLICE`` sockets a
        step, the event loop given back between steps."""
        pending = self._fanning[project_id]
        try:
            while pending:
                frames = pending.popleft()
                subscribers = tuple(self._subscribers.get(project_id, ()))
                for start in range(0, len(subscribers), FANOUT_SLICE):
                    _offer(subscribers[start : start + FANOUT_SLICE], frames)
                    await asyncio.sleep(0)
        finally:
            del self._fanning[project_id]

    def mark_seen(self, project_id: int, offset: int) -> None:
        """A socket of the project has read the log up to ``offset`` (on start)."""
        if project_id in self._subscribers and offset > self._seen.get(project_id, 0):
            self._seen[project_id] = offset

    def poke_all(self) -> None:
        """Every local subscriber re-reads the log (after the backend was away)."""
        for subscribers in tuple(self._subscribers.values()):
            for subscriber in tuple(subscribers):
                subscriber.poke()

    def catch_up(self, last_offsets: Iterable[tuple[int, int]]) -> int:
        """Given the database's newest offset per project, poke the local subscribers of
        every project whose newest event never reached this process (a notification lost
        to a backend outage). Returns how many projects were poked."""
        poked = 0
        for project_id, last in last_offsets:
            subscribers = self._subscribers.get(project_id)
            if not subscribers:
                continue
            if last > self._seen.get(project_id, 0):
                self._seen[project_id] = last
                for subscriber in tuple(subscribers):
                    subscriber.poke()
                poked += 1
        return poked

    async def publish(self, project_id: int, events: list[dict[str, Any]]) -> None:
        """Fan committed events out to every subscriber of every process.

        Local subscribers get them at once; the backend carries them to the others."""
        frames = [Frame.of(event) for event in events]
        self.deliver_local(project_id, frames)
        await self.send_to_others(project_id, frames)

    @abstractmethod
    async def send_to_others(self, project_id: int, frames: list[Frame]) -> None:
        """Carry events to the other processes (which call ``deliver_local``)."""

    async def ready(self) -> tuple[bool, str]:
        """Whether the backend is reachable, and a word on it for /readyz."""
        return True, "ok"


def _offer(subscribers: Iterable[Subscriber], frames: list[Frame]) -> None:
    for subscriber in subscribers:
        for frame in frames:
            subscriber.offer(frame)
