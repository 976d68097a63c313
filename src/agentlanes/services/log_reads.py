"""Reads of the event log for the event sockets (``api/stream.py``), shared by the
sockets that need the same page at once. Held by the service context."""

from __future__ import annotations

import asyncio

from agentlanes.hub import Frame
from agentlanes.services.views import event_view
from agentlanes.store import queries
from agentlanes.store.database import Database

# Events per read.
PAGE = 500


class SharedLogReads:
    """Reads of the event log, shared by the sockets that need the same page at once.

    When a notification is late or lost, every socket of the project needs the same
    events (a gap, or a poke after a Redis outage): thousands of identical queries would
    exhaust the connection pool. Concurrent identical reads run once, and the events come
    back encoded once."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._inflight: dict[tuple[int, int, int | None], asyncio.Future[list[Frame]]] = {}

    async def read(self, project_id: int, after: int, upto: int | None) -> list[Frame]:
        key = (project_id, after, upto)
        future = self._inflight.get(key)
        if future is None:
            future = asyncio.ensure_future(self._fetch(project_id, after, upto))
            self._inflight[key] = future
            future.add_done_callback(lambda _: self._inflight.pop(key, None))
        # shield: one socket going away must not cancel the read the others wait for.
        return await asyncio.shield(future)

    async def _fetch(self, project_id: int, after: int, upto: int | None) -> list[Frame]:
        async with self.db.read() as db:
            rows = await queries.events_after(db, project_id, after, PAGE, upto)
        return [Frame.of(event_view(row)) for row in rows]
