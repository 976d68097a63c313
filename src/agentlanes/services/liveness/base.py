"""Liveness without a database write per heartbeat (SPEC, Sessions → Liveness).

A heartbeat (or a socket holding a session attached) is recorded here: in memory for one
process, in Redis for several (``liveness/redis.py``). A background task writes the beats
through to the database every ``liveness_flush_seconds``, as one batched UPDATE, so a
crash loses at most that much heartbeat time, and 1,000 idle attached sockets cost one
write per flush instead of 1,000.

A session's effective expiry is the later of its row's ``expires_at`` and its last
recorded beat plus its TTL. The expiry job (``lifecycle.expire_project_sessions``) asks
``claim_overdue`` under the project lock: a session with a fresh beat is written through
and kept; one without is marked ended here, in the same atomic step, so a beat that
arrives afterwards is refused. That is what keeps "a session that heartbeats within its
TTL is never timed out" and "a 200 is never undone" true without a write per beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, update

from agentlanes.clock import utcnow
from agentlanes.store.database import Database
from agentlanes.store.models import AgentSession

log = logging.getLogger("agentlanes.liveness")

# How long a "this session has ended" mark is kept, so a late beat is refused.
ENDED_MARK_SECONDS = 600.0


@dataclass(frozen=True, slots=True)
class Beat:
    """The newest heartbeat of one session known here."""

    project_id: int
    at: datetime
    ttl_seconds: int

    @property
    def expires_at(self) -> datetime:
        return self.at + timedelta(seconds=self.ttl_seconds)


class Liveness(ABC):
    """Heartbeats kept off the database, written through in batches."""

    def __init__(self, flush_seconds: float, attach_refresh_seconds: float = 5.0) -> None:
        self.flush_seconds = flush_seconds
        self.attach_refresh_seconds = attach_refresh_seconds
        # Beats this process received and has not written yet (newest per session).
        self._dirty: dict[str, Beat] = {}
        # Sessions held by this process's open sockets: session id -> [project id, TTL,
        # sockets holding it, when its next beat is due (time.monotonic())].
        self._held: dict[str, list[Any]] = {}
        self._task: asyncio.Task[None] | None = None
        self._db: Database | None = None
        self.flushes = 0

    # -- what a backend keeps ---------------------------------------------------------
    @abstractmethod
    async def _record(
        self, session_id: str, beat: Beat, floor: datetime | None, now: datetime
    ) -> str:
        """Record ``beat`` unless the session was marked ended ("ended") or is past both
        ``floor`` (its row's expiry; None: known alive) and its last beat ("overdue").
        Atomic against ``claim_overdue``. Returns "ok", "ended" or "overdue"."""

    @abstractmethod
    async def beats(self, session_ids: Sequence[str]) -> dict[str, Beat]:
        """The newest recorded beat of each of these sessions that has one."""

    @abstractmethod
    async def claim_overdue(
        self, due: Sequence[str], now: datetime
    ) -> tuple[list[str], dict[str, Beat]]:
        """Split sessions the database thinks overdue into those truly overdue (marked
        ended here, atomically, so no later beat is accepted) and those kept alive by a
        fresh beat (with that beat, to write through)."""

    @abstractmethod
    async def forget(self, session_ids: Iterable[str]) -> None:
        """Sessions that ended (checkout, supersede): drop their beats, and refuse any
        later one (a process that has not seen the end yet asks the database instead)."""

    def _sessions_of(self, project_id: int) -> set[str]:
        """Sessions of the project this process keeps anything for."""
        dirty = {s for s, beat in self._dirty.items() if beat.project_id == project_id}
        return dirty | {s for s, held in self._held.items() if held[0] == project_id}

    async def forget_project(self, project_id: int) -> None:
        """The project was deleted: drop its sessions' beats and holds."""
        sessions = self._sessions_of(project_id)
        for session_id in sessions:
            self._held.pop(session_id, None)
        if sessions:
            await self.forget(sessions)

    def _sweep(self, now: datetime) -> None:  # noqa: B027  (optional for backends)
        """Drop what is kept past any use (a backend with its own expiry needs nothing)."""

    async def _start_backend(self) -> None:  # noqa: B027  (optional for backends)
        """Connect, if the backend needs to."""

    async def _stop_backend(self) -> None:  # noqa: B027
        """Disconnect, if the backend needs to."""

    # -- the use cases ----------------------------------------------------------------
    async def beat(
        self,
        project_id: int,
        session_id: str,
        ttl_seconds: int,
        *,
        floor: datetime | None,
        now: datetime | None = None,
    ) -> str:
        """A heartbeat of ``session_id`` at ``now``: "ok", "ended" or "overdue"."""
        now = now or utcnow()
        beat = Beat(project_id, now, ttl_seconds)
        outcome = await self._record(session_id, beat, floor, now)
        if outcome == "ok":
            self._dirty[session_id] = beat
        return outcome

    # Whether reading every beat is cheap (a dict here, a round trip to Redis there).
    overlays_all = True

    async def overlay(self, rows: Sequence[Any], now: datetime) -> list[Any]:
        """The rows (sessions with ``id``, ``expires_at``, ``last_heartbeat_at``) that are
        alive at ``now`` counting recorded beats, with those beats shown on them. Where
        beats are remote, only rows the database thinks overdue are looked up (the others'
        times lag by at most a flush)."""
        wanted = rows if self.overlays_all else [r for r in rows if r.expires_at <= now]
        known = await self.beats([r.id for r in wanted]) if wanted else {}
        alive = []
        for row in rows:
            beat = known.get(row.id)
            if beat is not None and beat.at > row.last_heartbeat_at:
                row.last_heartbeat_at = beat.at
                row.expires_at = max(row.expires_at, beat.expires_at)
            if row.expires_at > now:
                alive.append(row)
        return alive

    # -- writing through ----------------------------------------------------------------
    async def start(self, db: Database) -> None:
        self._db = db
        await self._start_backend()
        self._task = asyncio.create_task(self._flush_loop(), name="liveness-flush")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._db is not None:
            with contextlib.suppress(Exception):
                await self.flush(self._db)
        await self._stop_backend()

    # -- sessions held by sockets ------------------------------------------------------
    def _interval(self, ttl_seconds: int) -> float:
        return min(self.attach_refresh_seconds, ttl_seconds / 3)

    def hold(self, project_id: int, session_id: str, ttl_seconds: int) -> None:
        """A socket attached the session: beat it every refresh interval while held.

        Due times sit on a grid of the interval, so the sessions of every socket beat in
        the same tick and reach the database in one batch: 1,000 idle attached sockets
        cost one write per interval, not one per flush."""
        held = self._held.get(session_id)
        if held is not None:
            held[2] += 1
            return
        interval = self._interval(ttl_seconds)
        due = (time.monotonic() // interval + 1) * interval
        self._held[session_id] = [project_id, ttl_seconds, 1, due]

    def release(self, session_id: str) -> None:
        """A socket holding the session closed (the caller beats it once more)."""
        held = self._held.get(session_id)
        if held is not None:
            held[2] -= 1
            if held[2] <= 0:
                del self._held[session_id]

    async def _beat_held(self) -> None:
        """Beat the held sessions that are due; a session ended meanwhile is let go."""
        clock = time.monotonic()
        now = utcnow()
        for session_id, held in list(self._held.items()):
            project_id, ttl, _, due = held
            if due > clock:
                continue
            interval = self._interval(ttl)
            held[3] = (clock // interval + 1) * interval
            if await self.beat(project_id, session_id, ttl, floor=None, now=now) == "ended":
                self._held.pop(session_id, None)

    def _tick(self) -> float:
        """How long the loop may sleep: a flush interval, or less for a due held beat."""
        if not self._held:
            return self.flush_seconds
        first = min(held[3] for held in self._held.values())
        return max(0.01, min(self.flush_seconds, first - time.monotonic()))

    async def _flush_loop(self) -> None:
        assert self._db is not None
        while True:
            try:
                await self._beat_held()
                await self.flush(self._db)
                self._sweep(utcnow())
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the beats are kept and written next time
                log.warning("writing heartbeats through failed: %s", exc)
            await asyncio.sleep(self._tick())

    async def flush(self, db: Database) -> int:
        """Write the beats received since the last flush, as one batched UPDATE in one
        transaction. Conditional: an ended session stays ended, an expiry never moves
        back. Returns how many beats were written."""
        if not self._dirty:
            return 0
        batch, self._dirty = self._dirty, {}
        params = [
            {"sid": session_id, "beat_at": beat.at, "new_expires": beat.expires_at}
            for session_id, beat in batch.items()
        ]
        try:
            async with db.write() as session:
                conn = await session.connection()
                await conn.execute(_WRITE_THROUGH, params)
        except BaseException:
            # Keep them for the next flush, unless a newer beat came meanwhile.
            for session_id, beat in batch.items():
                newer = self._dirty.get(session_id)
                if newer is None or newer.at < beat.at:
                    self._dirty[session_id] = beat
            raise
        self.flushes += 1
        return len(params)

    def written_through(self, session_ids: Iterable[str]) -> None:
        """These sessions' beats were written by someone else (the expiry job)."""
        for session_id in session_ids:
            self._dirty.pop(session_id, None)


_sessions = AgentSession.__table__  # type: ignore[attr-defined]
# One statement, executed with many parameter sets (executemany): a flush is one round
# trip on PostgreSQL (asyncpg) and one transaction on SQLite.
_WRITE_THROUGH = (
    update(_sessions)
    .where(
        _sessions.c.id == bindparam("sid"),
        _sessions.c.status == "active",
        _sessions.c.expires_at < bindparam("new_expires"),
    )
    .values(last_heartbeat_at=bindparam("beat_at"), expires_at=bindparam("new_expires"))
)
