"""The hub interface every backend implements, and the per-socket subscriber queue."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import defaultdict
from typing import Any

# A frame in a subscriber's queue that means "look in the event log for anything newer".
POLL: dict[str, Any] = {"type": "__poll__"}


class Subscriber:
    """One socket's bounded queue. When it overflows the socket is cut off (close 4008)."""

    def __init__(self, project_id: int, maxsize: int) -> None:
        self.project_id = project_id
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=maxsize)
        self.overflowed = asyncio.Event()

    def offer(self, event: dict[str, Any]) -> None:
        """Queue an event without waiting; a full queue marks the subscriber as too slow."""
        if self.overflowed.is_set():
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overflowed.set()

    def poke(self) -> None:
        """Ask the socket to re-read the event log (after a lost or missed notification)."""
        if self.queue.empty():
            self.offer(POLL)


class Hub(ABC):
    """Local subscribers per project, and a way to reach the other processes' subscribers."""

    def __init__(self) -> None:
        self._subscribers: dict[int, set[Subscriber]] = defaultdict(set)

    async def start(self) -> None:  # noqa: B027  (optional for backends)
        """Connect to the backend, if any."""

    async def stop(self) -> None:  # noqa: B027
        """Disconnect from the backend, if any."""

    def subscribe(self, project_id: int, maxsize: int) -> Subscriber:
        subscriber = Subscriber(project_id, maxsize)
        self._subscribers[project_id].add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        subscribers = self._subscribers.get(subscriber.project_id)
        if subscribers is not None:
            subscribers.discard(subscriber)
            if not subscribers:
                # No empty entry per project kept forever.
                del self._subscribers[subscriber.project_id]

    def subscriber_count(self) -> int:
        return sum(len(s) for s in self._subscribers.values())

    def deliver_local(self, project_id: int, events: list[dict[str, Any]]) -> None:
        """Hand events to this process's subscribers of the project."""
        for subscriber in tuple(self._subscribers.get(project_id, ())):
            for item in events:
                subscriber.offer(item)

    def poke_all(self) -> None:
        for subscribers in tuple(self._subscribers.values()):
            for subscriber in tuple(subscribers):
                subscriber.poke()

    @abstractmethod
    async def publish(self, project_id: int, events: list[dict[str, Any]]) -> None:
        """Fan committed events out to every subscriber of every process."""

    async def ready(self) -> tuple[bool, str]:
        """Whether the backend is reachable, and a word on it for /readyz."""
        return True, "memory"
