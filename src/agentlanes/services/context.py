"""What every use case needs: settings, database, hub, the live projections, liveness;
and the project transaction it opens (``project_tx``)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from cachetools import LRUCache

from agentlanes.errors import Unauthorized
from agentlanes.hub import Hub
from agentlanes.services.checkin_batch import CheckinBatches
from agentlanes.services.liveness import Liveness, create_liveness
from agentlanes.services.log_reads import SharedLogReads
from agentlanes.services.news_state import LeaseRefusals
from agentlanes.services.open_sockets import OpenSockets
from agentlanes.services.pair_index import ConflictPairs
from agentlanes.services.project_cache import RecentProjects
from agentlanes.services.project_tx import ProjectTx, SessionEndListener
from agentlanes.services.projection import Projections
from agentlanes.settings import LIMITS, Settings
from agentlanes.store.availability import OutageLog
from agentlanes.store.database import Database


@dataclass
class ServiceContext:
    settings: Settings
    db: Database
    hub: Hub
    projections: Projections = field(default_factory=Projections)
    # Token hash -> (project id, session id), learned at check-in and as heartbeats come
    # (the pair never changes), so a hot request needs no read to find its session. At
    # most LIMITS.token_ids_kept tokens, the least recently used go first.
    token_ids: LRUCache[str, tuple[int, str]] = field(
        default_factory=lambda: LRUCache(maxsize=LIMITS.token_ids_kept)
    )
    known_projects: RecentProjects = field(default_factory=RecentProjects)
    # Heartbeats off the database (memory, or Redis with several processes).
    liveness: Liveness = None  # type: ignore[assignment]
    # The event sockets this process holds, by project (services/open_sockets.py).
    sockets: OpenSockets = field(default_factory=OpenSockets)
    # What else ends with a session (the coordination features register theirs).
    session_end_listeners: list[SessionEndListener] = field(default_factory=list)
    # Who was refused which lease, for the agents' news (services/news.py).
    lease_refusals: LeaseRefusals = field(default_factory=lambda: LeaseRefusals())
    # The current conflicts' pair lists, by project (services/conflict_pairs.py).
    conflict_pairs: ConflictPairs = field(default_factory=ConflictPairs)
    # Requests failed by a database outage: a line now and then (api/errors.py).
    request_outages: OutageLog = field(
        default_factory=lambda: OutageLog(logging.getLogger("agentlanes.api"))
    )
    # Scheduled jobs failed by a database outage, by job (jobs.py).
    job_outages: dict[str, OutageLog] = field(default_factory=dict)
    # The event sockets' reads of the log, shared while in flight (services/log_reads.py).
    log_reads: SharedLogReads = field(init=False)
    # Check-ins waiting for their project's lock, decided in batches (services/checkin_batch.py).
    checkins: CheckinBatches = field(init=False)

    def __post_init__(self) -> None:
        if self.liveness is None:
            self.liveness = create_liveness(self.settings)
        self.log_reads = SharedLogReads(self.db)
        self.checkins = CheckinBatches(self.project_tx)
        # The news reads the events the projection applied (services/news.py).
        self.projections.recent_kept = self.settings.news_recent_events
        self.projections.recent_bytes = self.settings.news_recent_bytes

    def on_session_end(self, listener: SessionEndListener) -> None:
        """Run ``listener`` in the transaction that ends any session, after its event."""
        if listener not in self.session_end_listeners:
            self.session_end_listeners.append(listener)

    def known_token(self, project_id: int, token_hash: str) -> str | None:
        """The session id of a token seen before in this project, if any."""
        known = self.token_ids.get(token_hash)
        return known[1] if known is not None and known[0] == project_id else None

    def remember_token(self, project_id: int, token_hash: str, session_id: str) -> None:
        self.token_ids[token_hash] = (project_id, session_id)

    @contextlib.asynccontextmanager
    async def project_tx(self, project_id: int) -> AsyncIterator[ProjectTx]:
        """Lock the project, run the body, commit, then hand the events to the hub."""
        async with self.db.write() as db:
            if not await self.db.lock_project(db, project_id):
                # Deleted meanwhile (a key cached here a moment longer): as for any key
                # that opens nothing, 401, never a write to rows that are gone.
                raise Unauthorized("this API key's project was deleted")
            tx = ProjectTx(db, project_id, tuple(self.session_end_listeners))
            yield tx
            await tx.finish()
            await tx.settle()
            await db.flush()
        if tx.events:
            self.projections.applied(project_id, tx.events)
            await self.hub.publish(project_id, tx.events)
