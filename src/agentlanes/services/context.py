"""What every use case needs: settings, database, hub; and the project transaction."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.clock import iso, utcnow
from agentlanes.hub import Hub
from agentlanes.services.liveness import Liveness, create_liveness
from agentlanes.services.projection import Projections
from agentlanes.settings import Settings
from agentlanes.store.database import Database
from agentlanes.store.models import Event

# Token hashes remembered with their sessions before the map starts afresh.
TOKEN_IDS_KEPT = 100_000


@dataclass
class ProjectTx:
    """One write transaction on one project: state changes plus their events."""

    session: AsyncSession
    project_id: int
    events: list[dict[str, Any]] = field(default_factory=list)

    async def emit(self, type_: str, data: dict[str, Any]) -> dict[str, Any]:
        """Write an event row with the project's next offset, in this transaction."""
        result = await self.session.exec(
            text(
                "UPDATE projects SET last_offset = last_offset + 1 WHERE id = :id "
                "RETURNING last_offset"
            ),
            params={"id": self.project_id},
        )
        offset = int(result.scalar_one())
        now = utcnow()
        self.session.add(
            Event(project_id=self.project_id, offset=offset, type=type_, ts=now, data=data)
        )
        frame = {"offset": offset, "type": type_, "ts": iso(now), "data": data}
        self.events.append(frame)
        return frame


class RecentProjects:
    """Projects found by API key hash, kept for ``ttl`` seconds (bounded)."""

    def __init__(self, ttl: float = 30.0, size: int = 1024) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: dict[str, tuple[float, Any]] = {}

    def get(self, key_hash: str) -> Any | None:
        entry = self._entries.get(key_hash)
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[1]

    def put(self, key_hash: str, project: Any) -> None:
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key_hash] = (time.monotonic() + self.ttl, project)


@dataclass
class ServiceContext:
    settings: Settings
    db: Database
    hub: Hub
    projections: Projections = field(default_factory=Projections)
    # Token hash -> (project id, session id), learned at check-in and as heartbeats come
    # (the pair never changes), so a hot request needs no read to find its session.
    token_ids: dict[str, tuple[int, str]] = field(default_factory=dict)
    known_projects: RecentProjects = field(default_factory=RecentProjects)
    # Heartbeats off the database (memory, or Redis with several processes).
    liveness: Liveness = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.liveness is None:
            self.liveness = create_liveness(self.settings)

    def known_token(self, project_id: int, token_hash: str) -> str | None:
        """The session id of a token seen before in this project, if any."""
        known = self.token_ids.get(token_hash)
        return known[1] if known is not None and known[0] == project_id else None

    def remember_token(self, project_id: int, token_hash: str, session_id: str) -> None:
        if len(self.token_ids) >= TOKEN_IDS_KEPT:
            self.token_ids.clear()
        self.token_ids[token_hash] = (project_id, session_id)

    @contextlib.asynccontextmanager
    async def project_tx(self, project_id: int) -> AsyncIterator[ProjectTx]:
        """Lock the project, run the body, commit, then hand the events to the hub."""
        async with self.db.write() as session:
            await self.db.lock_project(session, project_id)
            tx = ProjectTx(session=session, project_id=project_id)
            yield tx
            await session.flush()
        if tx.events:
            self.projections.applied(project_id, tx.events)
            await self.hub.publish(project_id, tx.events)
