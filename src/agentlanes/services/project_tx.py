"""One write transaction on one project: its state changes and their events, written
together under the project's lock (``ServiceContext.project_tx`` opens it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.clock import iso, utcnow
from agentlanes.store import queries
from agentlanes.store.models import AgentSession, Event


@dataclass
class ProjectTx:
    """One write transaction on one project: state changes plus their events.

    ``db`` is the database session (SQLModel's), not an agent's session."""

    db: AsyncSession
    project_id: int
    # What runs when a session ends in this transaction (ServiceContext.on_session_end).
    session_end_listeners: tuple[SessionEndListener, ...] = ()
    events: list[dict[str, Any]] = field(default_factory=list)
    # Offsets counted here rather than in the project's row, one statement per
    # transaction instead of one per event (a batch of check-ins: services/checkin_batch.py).
    # While on, the row's last_offset lags until settle(); whoever reads it in the
    # transaction must settle() first.
    local_offsets: bool = False
    _offset: int | None = None  # the last offset handed out
    _written: int | None = None  # the last offset the project's row holds
    # With local_offsets, rows inserted by settle(), many per statement: statement -> rows.
    _later: dict[Any, list[dict[str, Any]]] = field(default_factory=dict)
    # Work that follows from the transaction's changes, done in it once its body is
    # through (ServiceContext.project_tx calls finish()): each key once (the queue's grant
    # pass, services/queue.py: paths freed here go to their waiters in this transaction).
    _finishers: dict[str, Callable[[], Awaitable[None]]] = field(default_factory=dict)

    def before_commit(self, key: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` once this transaction's body is through, before it commits (the
        first one asked under ``key`` runs; it may write and emit)."""
        self._finishers.setdefault(key, work)

    async def finish(self) -> None:
        """Run the work asked with before_commit (and any it asks for in turn)."""
        while self._finishers:
            key = next(iter(self._finishers))
            work = self._finishers.pop(key)
            await work()

    async def emit(self, type_: str, data: dict[str, Any]) -> dict[str, Any]:
        """Write an event row with the project's next offset, in this transaction."""
        if self.local_offsets and self._offset is not None:
            offset = self._offset = self._offset + 1
        else:
            await self.settle()
            result = await self.db.exec(queries.NEXT_OFFSET, params={"project_id": self.project_id})
            offset = self._offset = self._written = int(result.scalar_one())
        now = utcnow()
        if self.local_offsets:
            row = {"project_id": self.project_id, "event_offset": offset, "type": type_}
            self.insert_later(queries.INSERT_EVENTS, {**row, "ts": now, "data": data})
        else:
            event = Event(project_id=self.project_id, offset=offset, type=type_, ts=now, data=data)
            self.db.add(event)
        frame = {"offset": offset, "type": type_, "ts": iso(now), "data": data}
        self.events.append(frame)
        return frame

    def insert_later(self, statement: Any, row: dict[str, Any]) -> None:
        """A row for ``statement`` (an INSERT), written by settle() with the others."""
        self._later.setdefault(statement, []).append(row)

    async def settle(self) -> None:
        """Write what local_offsets kept back: the rows for insert_later(), each
        statement's in one round trip, and the last offset handed out to the project's
        row."""
        later, self._later = self._later, {}
        for statement, rows in later.items():
            await self.db.exec(statement, params=rows)
        if self._offset is not None and self._offset != self._written:
            await self.db.exec(
                queries.SET_OFFSET, params={"offset": self._offset, "project_id": self.project_id}
            )
            self._written = self._offset


# ``async (tx, session, reason) -> None``, run as a session ends (``reason`` is its end
# status: checked_out, superseded, timed_out); each writes its own events in ``tx``.
SessionEndListener = Callable[[ProjectTx, AgentSession, str], Awaitable[None]]
