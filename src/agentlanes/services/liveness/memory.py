"""Beats kept in this process's memory: one process, no Redis."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from .base import ENDED_MARK_SECONDS, Beat, Liveness


class MemoryLiveness(Liveness):
    """One process: the beats in a dict. Every step is synchronous, so atomic."""

    def __init__(self, flush_seconds: float, attach_refresh_seconds: float = 5.0) -> None:
        super().__init__(flush_seconds, attach_refresh_seconds)
        self._beats: dict[str, Beat] = {}
        self._ended: dict[str, float] = {}

    async def _record(
        self, session_id: str, beat: Beat, floor: datetime | None, now: datetime
    ) -> str:
        if session_id in self._ended:
            return "ended"
        if floor is not None and floor <= now:
            last = self._beats.get(session_id)
            if last is None or last.expires_at <= now:
                return "overdue"
        self._beats[session_id] = beat
        return "ok"

    async def beats(self, session_ids: Sequence[str]) -> dict[str, Beat]:
        found = {}
        for session_id in session_ids:
            beat = self._beats.get(session_id)
            if beat is not None:
                found[session_id] = beat
        return found

    async def claim_overdue(
        self, due: Sequence[str], now: datetime
    ) -> tuple[list[str], dict[str, Beat]]:
        overdue: list[str] = []
        fresh: dict[str, Beat] = {}
        for session_id in due:
            beat = self._beats.get(session_id)
            if beat is not None and beat.expires_at > now:
                fresh[session_id] = beat
            else:
                overdue.append(session_id)
                self._beats.pop(session_id, None)
                self._dirty.pop(session_id, None)
                self._ended[session_id] = time.monotonic() + ENDED_MARK_SECONDS
        return overdue, fresh

    def _sessions_of(self, project_id: int) -> set[str]:
        kept = {s for s, beat in self._beats.items() if beat.project_id == project_id}
        return super()._sessions_of(project_id) | kept

    async def forget(self, session_ids: Iterable[str]) -> None:
        until = time.monotonic() + ENDED_MARK_SECONDS
        for session_id in session_ids:
            self._beats.pop(session_id, None)
            self._dirty.pop(session_id, None)
            self._ended[session_id] = until

    def _sweep(self, now: datetime) -> None:
        """Drop ended marks past their time, and beats long past their TTL (their session
        was ended elsewhere, or its row says more)."""
        clock = time.monotonic()
        for session_id in [s for s, until in self._ended.items() if until <= clock]:
            del self._ended[session_id]
        stale = now - timedelta(seconds=ENDED_MARK_SECONDS)
        for session_id in [s for s, b in self._beats.items() if b.expires_at < stale]:
            del self._beats[session_id]
