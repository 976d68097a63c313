"""The live projection: each process keeps every active project's live sessions in memory,
current from the event log by offset.

The database stays the truth. A ``LiveProject`` holds the sessions that are not ended
(what presence, the snapshot, the conflict detector and the ready list need), the
conflict detector's index over them, and the offset of the last event it applied. To be
current it reads only the events after that offset: inside the project lock for writes
(so a decision in ``block`` mode sees every other process's check-ins), and after a cheap
look at the project's last offset for reads. A process that starts, or falls behind the
kept history (pruned events), rebuilds the project from the database.

Heartbeats are not events; their times come from ``services/liveness/`` at read time.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import anyio.to_thread
import msgspec
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.domain import range_claims
from agentlanes.domain.conflicts import (
    Conflict,
    ConflictDetector,
    Scope,
    SearchTooLong,
    work_clock,
)
from agentlanes.services import line_claims
from agentlanes.services.liveness import Liveness
from agentlanes.services.long_work import run_long
from agentlanes.services.views import LiveFields, entry_view, session_view
from agentlanes.store import queries
from agentlanes.store.models import AgentSession

T = TypeVar("T")

# The longest turn one search takes on its project's detector (work seconds); a search
# that needs more goes on alone (LiveProject.search).
TURN_SECONDS = 0.1


def search_size(patterns: Sequence[str], paths: Sequence[str] = ()) -> int:
    """What a search costs, roughly: the characters it compares."""
    return sum(map(len, patterns)) + sum(map(len, paths))


# Events read per round trip while catching up.
PAGE = 1000
# Events that change the live set (the others leave it alone).
_ENDS = frozenset({"agent.checkout", "agent.timeout"})
# Events that end a wait for a lane (SPEC "Waiting for a lane").
_WAIT_ENDS = frozenset({"queue.left", "claim.granted"})
# Release requests kept per project for the news (the oldest go first).
ASKED_KEPT = 1_000


@dataclass(slots=True)
class LiveSession(LiveFields):
    """What is known of a live session: the fields ``session_view`` shows
    (``LiveFields``, declared beside it) and the projection's own bookkeeping."""

    # The session as presence shows it, encoded once (again only when a beat moves it).
    encoded: bytes | None = field(default=None, compare=False, repr=False)
    # When each pattern joined the claims; a pattern missing here counts from started_at.
    claimed_at: dict[str, datetime] = field(default_factory=dict, compare=False, repr=False)

    def since(self, pattern: str) -> datetime:
        """When ``pattern`` joined this session's claims."""
        return self.claimed_at.get(pattern, self.started_at)

    def json(self) -> bytes:
        if self.encoded is None:
            self.encoded = msgspec.json.encode(session_view(self))
        return self.encoded

    @classmethod
    def of_row(cls, row: AgentSession) -> LiveSession:
        return cls(
            id=row.id,
            agent_name=row.agent_name,
            display_name=row.display_name,
            declared_area=row.declared_area,
            declared_files=list(row.declared_files or []),
            status_text=row.status_text,
            meta=dict(row.meta or {}),
            started_at=row.started_at,
            last_heartbeat_at=row.last_heartbeat_at,
            expires_at=row.expires_at,
            claimed_at={p: _when(t) for p, t in (row.claimed_at or {}).items()},
            edits=line_claims.of_stored(row.edits),
            claims=line_claims.claims_of(row.claims),
        )

    @classmethod
    def of_view(cls, view: dict[str, Any]) -> LiveSession:
        """From the session an ``agent.checkin`` / ``agent.status`` event carries."""
        return cls(
            id=view["session_id"],
            agent_name=view["agent_name"],
            display_name=view.get("display_name"),
            declared_area=view.get("declared_area"),
            declared_files=list(view.get("declared_files") or []),
            status_text=view.get("status_text"),
            meta=dict(view.get("meta") or {}),
            started_at=_when(view["started_at"]),
            last_heartbeat_at=_when(view["last_heartbeat_at"]),
            expires_at=_when(view["expires_at"]),
            edits=line_claims.of_wire(view.get("edits")),
            claims=line_claims.claims_of(view.get("claims")),
        )

    def scope(self) -> Scope:
        return Scope(
            session_id=self.id,
            agent_name=self.agent_name,
            declared_area=self.declared_area,
            # Each file claimed by range is held too (graded by lines when found).
            patterns=tuple(line_claims.claimed_paths_joined(self.declared_files, self.claims)),
        )

    def claim_paths(self) -> list[str]:
        """The files claimed by range that no declared pattern names as they are."""
        return [p for p in range_claims.paths(self.claims) if p not in self.declared_files]


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)


@dataclass(slots=True)
class Recent:
    """One applied event, kept for the agents' news (``services/news.py``), with the
    session it changed as it was before (to tell which overlaps ended)."""

    offset: int
    type: str
    ts: str | None
    data: dict[str, Any]
    before: LiveSession | None
    # What it holds, about: its data's JSON and the claims of ``before``.
    size: int = 0


class LiveProject:
    """One project's sessions that are not ended, oldest first, and their detector."""

    def __init__(
        self,
        project_id: int,
        offset: int,
        sessions: Iterable[LiveSession],
        recent_kept: int = 0,
        recent_bytes: int = 0,
    ) -> None:
        self.project_id = project_id
        self.offset = offset
        # The newest applied events (the news reads them): complete after recent_from.
        # At most recent_kept of them, and at most recent_bytes (0: no byte bound) in all:
        # one project's large claims cannot pin the process's memory.
        self.recent: deque[Recent] = deque()
        self.recent_kept = recent_kept
        self.recent_bytes = recent_bytes
        self.recent_size = 0
        self.recent_from = offset
        # When the offset was last compared with the database (time.monotonic()).
        self.verified_at = 0.0
        self.sessions: dict[str, LiveSession] = {}
        # The waits for a lane not ended, by queue id, as their queue.joined event showed
        # them (services/queue.py decides grants from these, inside the project lock).
        self.waiting: dict[str, dict[str, Any]] = {}
        # The latest release request of each asker to each holder (release.requested),
        # for the news to tell the asker when the holder lets go.
        self.asked: dict[tuple[str, str], dict[str, Any]] = {}
        self.detector = ConflictDetector()
        # While a search runs in a worker thread, changes to the detector's index wait
        # here (in order) and are made when it ends: the thread never reads an index
        # that changes under it. Searches of one project take turns.
        self._deferred: list[tuple[bool, Any]] | None = None
        self._search_lock = asyncio.Lock()
        for session in sessions:
            self._put(session)

    def _put(self, session: LiveSession) -> None:
        old = self.sessions.get(session.id)
        self.sessions[session.id] = session
        if old is None or old.scope() != session.scope():
            self._index(True, session.scope())

    def _drop(self, session_id: str) -> None:
        if self.sessions.pop(session_id, None) is not None:
            self._index(False, session_id)

    def _index(self, add: bool, what: Any) -> None:
        if self._deferred is not None:
            self._deferred.append((add, what))
        elif add:
            self.detector.add(what)
        else:
            self.detector.remove(what)

    def apply(self, event: dict[str, Any]) -> bool:
        """Apply the next event; False (nothing done) unless it is the next offset."""
        offset = int(event["offset"])
        if offset != self.offset + 1:
            return offset <= self.offset  # already applied: fine; a gap: not
        kind = event["type"]
        data = event["data"]
        before = None
        if kind in ("agent.checkin", "agent.status"):
            session = LiveSession.of_view(data["session"])
            before = self.sessions.get(session.id)
            if kind == "agent.status":
                # A pattern it had keeps its time; a new one joined with this change (the
                # service stores the same: the change's time is its heartbeat's).
                had = set(before.declared_files) if before else set()
                session.claimed_at = {
                    p: before.since(p) if before and p in had else session.last_heartbeat_at
                    for p in session.declared_files
                }
            self._put(session)
        elif kind in _ENDS:
            before = self.sessions.get(data["session_id"])
            self._drop(data["session_id"])
        elif kind == "queue.joined":
            self.waiting[data["entry"]["queue_id"]] = data["entry"]
        elif kind in _WAIT_ENDS:
            self.waiting.pop(data["entry"]["queue_id"], None)
        elif kind == "release.requested":
            key = (data["from_session_id"], data["to_session_id"])
            self.asked.pop(key, None)
            self.asked[key] = data  # newest last
            while len(self.asked) > ASKED_KEPT:
                del self.asked[next(iter(self.asked))]
        self.offset = offset
        if self.recent_kept:
            size = len(msgspec.json.encode(data))
            if before is not None:
                size += sum(map(len, before.declared_files))
            self.recent.append(Recent(offset, kind, event.get("ts"), data, before, size))
            self.recent_size += size
            cap = self.recent_bytes
            while len(self.recent) > self.recent_kept or (
                cap and self.recent_size > cap and len(self.recent) > 1
            ):
                dropped = self.recent.popleft()
                self.recent_size -= dropped.size
                self.recent_from = dropped.offset  # complete after it
        return True

    async def live(self, liveness: Liveness, now: datetime) -> list[LiveSession]:
        """The sessions alive at ``now``, counting heartbeats not yet written through,
        whose times are taken into the projection (they only move forward)."""
        sessions = list(self.sessions.values())
        wanted = sessions if liveness.overlays_all else [s for s in sessions if s.expires_at <= now]
        beats = await liveness.beats([s.id for s in wanted]) if wanted else {}
        alive = []
        for session in sessions:
            beat = beats.get(session.id)
            if beat is not None and beat.at > session.last_heartbeat_at:
                session.last_heartbeat_at = beat.at
                session.expires_at = max(session.expires_at, beat.expires_at)
                session.encoded = None
            if session.expires_at > now:
                alive.append(session)
        return alive

    def find(
        self,
        live: Sequence[LiveSession],
        *,
        declared_area: str | None = None,
        patterns: Sequence[str] = (),
        paths: Sequence[str] = (),
        exclude_session_id: str | None = None,
        exclude_agent_name: str | None = None,
        deadline: float | None = None,
        max_files: int | None = None,
        edits: line_claims.Edits | None = None,
        margin: int = 0,
        also: ConflictDetector | None = None,
        claims: line_claims.Edits | None = None,
        also_claims: Mapping[str, line_claims.Edits] | None = None,
        detector: ConflictDetector | None = None,
    ) -> list[Conflict]:
        """Conflicts with the ``live`` sessions (oldest first), each graded from the two
        sessions' edits and range claims (``edits``, ``claims``: the asking side's, per
        file; ``also_claims``: those of ``also``'s sessions; SPEC "Line-level claims"): the
        detector's index holds every session not ended, so overdue ones are filtered out of
        its answer. ``also``: sessions not applied yet, newer than all of these (the
        check-ins earlier in one batch, services/checkin_batch.py), searched after them.
        ``detector``: another index than the project's (one of ``live`` only,
        :meth:`find_alone`). On the calling thread: see :meth:`search` for the event
        loop."""
        index = self.detector if detector is None else detector
        alive = {s.id for s in live} if len(live) != len(index) else None
        asked = functools.partial(
            ConflictDetector.find,
            declared_area=declared_area,
            patterns=patterns,
            paths=paths,
            exclude_session_id=exclude_session_id,
            deadline=deadline,
            max_files=max_files,
        )
        found = [
            c
            for c in asked(index)
            if (alive is None or c.session_id in alive)
            and (exclude_agent_name is None or c.agent_name != exclude_agent_name)
        ]
        if also is not None:
            found += [
                c
                for c in asked(also)
                if exclude_agent_name is None or c.agent_name != exclude_agent_name
            ]
        return self._graded(
            found,
            edits or {},
            patterns,
            paths,
            deadline,
            max_files,
            margin,
            claims or {},
            also_claims or {},
        )

    def _graded(
        self,
        found: list[Conflict],
        mine: line_claims.Edits,
        patterns: Sequence[str],
        paths: Sequence[str],
        deadline: float | None,
        max_files: int | None,
        margin: int,
        my_claims: line_claims.Edits,
        also_claims: Mapping[str, line_claims.Edits],
    ) -> list[Conflict]:
        """Each conflict graded; one where neither side has edits nor range claims is left
        as found (its grade, ``claims``, is the view's default): no cost without them."""
        i_claim = line_claims.claimer(patterns, paths)
        out = []
        for c in found:
            theirs = self.sessions.get(c.session_id)
            their_claims = (
                range_claims.by_path(theirs.claims)
                if theirs is not None and theirs.claims
                else also_claims.get(c.session_id, {})
            )
            if not (mine or my_claims or their_claims) and not (theirs and theirs.edits):
                out.append(c)
                continue
            if deadline is not None and work_clock() > deadline:
                raise SearchTooLong(len(out))
            out.append(
                line_claims.graded(
                    c,
                    mine,
                    i_claim,
                    theirs.edits if theirs else {},
                    margin=margin,
                    max_files=max_files or 10,
                    my_claims=my_claims,
                    their_claims=their_claims,
                )
            )
        return out

    async def search(
        self,
        live: Sequence[LiveSession],
        *,
        budget: float,
        max_files: int,
        declared_area: str | None = None,
        patterns: Sequence[str] = (),
        paths: Sequence[str] = (),
        exclude_session_id: str | None = None,
        exclude_agent_name: str | None = None,
        edits: line_claims.Edits | None = None,
        margin: int = 0,
        also: ConflictDetector | None = None,
        claims: line_claims.Edits | None = None,
    ) -> list[Conflict]:
        """:meth:`find` in a worker thread, so that a long search (long patterns against
        many) never holds the event loop: other projects' requests go on meanwhile.
        ``budget`` (seconds) bounds it (``SearchTooLong``), counted from when the search
        starts: waiting for the project's lock, for an earlier search or for a worker
        thread is no work of this request's, and a burst of check-ins must not turn into
        refusals.

        The project's searches take turns on its detector, and one turn lasts at most
        ``TURN_SECONDS``: a search that needs more leaves the turn and goes on alone
        (:meth:`find_alone`, with what is left of its budget), so one agent's long search
        never makes the others of its project wait for it (SPEC "One agent cannot hurt
        another")."""
        if not (live or also is not None) or not (patterns or paths or declared_area):
            return []
        asked = functools.partial(
            self.find,
            live,
            declared_area=declared_area,
            patterns=patterns,
            paths=paths,
            exclude_session_id=exclude_session_id,
            exclude_agent_name=exclude_agent_name,
            max_files=max_files,
            edits=edits,
            margin=margin,
            also=also,
            claims=claims,
        )
        turn = min(budget, TURN_SECONDS)
        try:
            return await self.in_thread(lambda: asked(deadline=work_clock() + turn))
        except SearchTooLong:
            if budget <= turn:
                raise
        snapshot = list(live)
        alone = functools.partial(asked.func, snapshot, **asked.keywords)
        return await self.alone(
            lambda: self.find_alone(snapshot, alone, deadline=work_clock() + budget - turn),
            search_size(patterns, paths),
        )

    def find_alone(
        self, live: Sequence[LiveSession], asked: Callable[..., list[Conflict]], deadline: float
    ) -> list[Conflict]:
        """``asked`` (a :meth:`find` of ``live``) against a detector of its own, built
        from ``live`` within ``deadline`` (``SearchTooLong`` past it): it needs no turn
        of the project's detector, which may change meanwhile. On the calling thread."""
        own = ConflictDetector()
        for n, session in enumerate(live):
            if n % 64 == 0 and work_clock() > deadline:
                raise SearchTooLong(0)
            own.add(session.scope())
        return asked(deadline=deadline, detector=own)

    async def alone(self, work: Callable[[], T], size: int) -> T:
        """Run ``work`` (:meth:`find_alone`) in a worker thread beside the project's turns,
        as long work of the process: one at a time, the smallest (``size``: the characters
        searched) first, so that a colleague's ordinary search that merely met a cold
        cache never waits behind a hostile one (services/long_work.py)."""
        return await run_long(work, size)

    async def in_thread(self, work: Callable[[], T]) -> T:
        """Run ``work``, which reads the detector (:meth:`find`), in a worker thread;
        changes to the index wait until it ends. Such work of one project takes turns."""
        async with self._search_lock:
            self._deferred = []
            try:
                return await anyio.to_thread.run_sync(work)
            finally:
                deferred, self._deferred = self._deferred, None
                for add, what in deferred:
                    self._index(add, what)


class Projections:
    """This process's ``LiveProject`` per project (the most recently used, bounded)."""

    def __init__(
        self, max_projects: int = 1024, recent_kept: int = 0, recent_bytes: int = 0
    ) -> None:
        self.max_projects = max_projects
        # Events kept per project for the agents' news (settings news_recent_events and
        # news_recent_bytes).
        self.recent_kept = recent_kept
        self.recent_bytes = recent_bytes
        self._projects: dict[int, LiveProject] = {}
        self.rebuilds = 0

    def peek(self, project_id: int) -> LiveProject | None:
        """The project as last applied, without reading anything (may lag)."""
        return self._projects.get(project_id)

    def fresh(self, project_id: int, newest: int, within: float) -> LiveProject | None:
        """The project, if a read may use it without asking the database: it has applied
        every event the hub has brought (``newest``), and it was compared with the
        database less than ``within`` seconds ago (a notification can be lost)."""
        project = self._projects.get(project_id)
        if (
            project is None
            or project.offset < newest
            or time.monotonic() - project.verified_at > within
        ):
            return None
        return project

    async def current(
        self, db: AsyncSession, project_id: int, *, upto: int | None = None
    ) -> LiveProject:
        """The project with every event applied up to ``upto``, the project's last offset
        (read here when not given; inside the project lock that is every event)."""
        if upto is None:
            upto = await queries.last_offset(db, project_id)
        project = self._projects.get(project_id)
        if project is not None and project.offset < upto:
            await self._catch_up(db, project)
            if project.offset < upto:  # the log no longer has what it needs: pruned
                project = None
        if project is None:
            project = await self._rebuild(db, project_id)
        project.verified_at = time.monotonic()
        self._keep(project)
        return project

    def project_ids(self) -> list[int]:
        return list(self._projects)

    def forget(self, project_id: int) -> None:
        """Drop the project's projection (it was deleted)."""
        self._projects.pop(project_id, None)

    def applied(self, project_id: int, events: Sequence[dict[str, Any]]) -> None:
        """Events this process just committed: apply them if they are next (otherwise
        the next request catches up from the log)."""
        project = self._projects.get(project_id)
        if project is None:
            return
        for event in events:
            if not project.apply(event):
                return

    def _keep(self, project: LiveProject) -> None:
        self._projects.pop(project.project_id, None)
        self._projects[project.project_id] = project  # most recently used last
        if len(self._projects) > self.max_projects:
            del self._projects[next(iter(self._projects))]

    async def _catch_up(self, db: AsyncSession, project: LiveProject) -> None:
        """Apply the events after the project's offset, as far as the log has them in
        order (a pruned gap stops it; the caller then rebuilds)."""
        while True:
            rows = await queries.events_after(db, project.project_id, project.offset, PAGE)
            for row in rows:
                event = {"offset": row.offset, "type": row.type, "ts": row.ts, "data": row.data}
                if not project.apply(event):
                    return
            if len(rows) < PAGE:
                return

    async def detached(self, db: AsyncSession, project_id: int) -> LiveProject:
        """The project read afresh from ``db`` (in a write transaction: with what it wrote),
        not kept: nothing uncommitted ever reaches the kept projection."""
        offset = await queries.last_offset(db, project_id)
        rows = await queries.active_sessions(db, project_id)
        project = LiveProject(project_id, offset, (LiveSession.of_row(r) for r in rows))
        project.waiting = {
            w.id: entry_view(w) for w in await queries.waiting_entries(db, project_id)
        }
        return project

    async def _rebuild(self, db: AsyncSession, project_id: int) -> LiveProject:
        """From the database: the offset first, then the sessions, so any event committed
        in between is applied again on top (applying an event twice is harmless: each
        carries the session's whole state)."""
        self.rebuilds += 1
        offset = await queries.last_offset(db, project_id)
        rows = await queries.active_sessions(db, project_id)
        waits = await queries.waiting_entries(db, project_id)
        project = LiveProject(
            project_id,
            offset,
            (LiveSession.of_row(r) for r in rows),
            self.recent_kept,
            self.recent_bytes,
        )
        project.waiting = {w.id: entry_view(w) for w in waits}
        await self._catch_up(db, project)
        return project
