"""Deciding a batch of check-ins of one project (services/checkin_batch.py runs it, in the
project's transaction): first every check-in is judged, in arrival order, in one worker
thread (the conflict searches: each against the live sessions and the ones admitted
before it in the batch, which are not in the projection until the batch commits); then
each is written, in the same order, with its events.

One check-in's search takes turns of ``TURN_SECONDS`` (doubling) while nothing else waits
on its batch. Once others do (more check-ins in the batch, or queued behind it), one that
needs more leaves the batch, and its colleagues are answered without waiting for it. It
is searched alone against the live sessions as they are then, outside the transaction
and beside the project's other searches (``LiveProject.alone``: long work takes turns in
the process, the smallest first), with what is left of its own
``conflict_search_seconds``, and queues again; its next batch searches only the sessions
that changed since (new ones, changed claims, this batch's), which may send it alone once
more, until its budget is spent (a 400 naming ``declared_files``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agentlanes import tokens
from agentlanes.clock import utcnow
from agentlanes.domain import range_claims
from agentlanes.domain.conflicts import Conflict, ConflictDetector, Scope, SearchTooLong, work_clock
from agentlanes.domain.range_claims import RangeClaim
from agentlanes.errors import InvalidInput
from agentlanes.services import line_claims, names
from agentlanes.services.checkin_batch import CheckinBatch, Waiting
from agentlanes.services.claim_age import claim_times
from agentlanes.services.context import ServiceContext
from agentlanes.services.lifecycle import end_session
from agentlanes.services.project_tx import ProjectTx
from agentlanes.services.projection import TURN_SECONDS, LiveProject, LiveSession, search_size
from agentlanes.services.views import bounded_conflicts, conflict_event, session_view
from agentlanes.settings import Settings
from agentlanes.store import queries
from agentlanes.store.models import AgentSession, Project


@dataclass(frozen=True)
class Wanted:
    """A check-in, checked, waiting for its batch."""

    project: Project
    name: str | None
    area: str | None
    files: list[str]
    meta: dict[str, Any]
    spent: float  # seconds checking its patterns took (counted in its search budget)
    # Range claims (SPEC "Line-level claims"): each file claimed by range is held too.
    claims: tuple[RangeClaim, ...] = ()

    def patterns(self) -> list[str]:
        """What the detector holds for it: the declared patterns, then each file claimed
        by range that none of them names as it is."""
        return line_claims.claimed_paths_joined(self.files, self.claims)


@dataclass(frozen=True)
class Alone:
    """What a check-in's search alone found, and against which sessions (as they were:
    a session changed since is another object in the projection)."""

    found: list[Conflict]
    seen: dict[str, LiveSession]
    spent: float  # work seconds its searches have taken so far, in batches and alone


@dataclass(frozen=True)
class Leave:
    """A check-in whose search did not fit in its turn: searched alone, then again."""

    spent: float


@dataclass(frozen=True)
class Admitted:
    """What its batch decided: the session written, with its token unless refused."""

    session: LiveSession
    token: str | None
    token_hash: str | None
    bounded: dict[str, Any]
    certain: int
    previous: list[str]  # the agent's sessions it superseded


@dataclass(frozen=True)
class Judged:
    """A check-in judged, not yet written."""

    session_id: str
    name: str
    found: list[Conflict]
    blocked: bool
    previous: list[str]  # its agent's live sessions it supersedes
    earlier: str | None  # its agent's session admitted earlier in this batch, superseded
    display_name: str | None = None  # its short name (services/names.py), unless refused


def new_session_id() -> str:
    return names.new_id("ses")


def too_long(field: str, live: int, budget: float) -> InvalidInput:
    """The 400 of a search that ran out of ``conflict_search_seconds`` (SPEC "One agent
    cannot hurt another": the work one request may cause is bounded)."""
    return InvalidInput(
        field,
        f"deciding these against the {live} live session(s) takes longer than "
        f"conflict_search_seconds ({budget:g} s): send fewer or narrower patterns",
    )


async def decide(ctx: ServiceContext, batch: CheckinBatch[Wanted, Admitted]) -> None:
    """Judge the batch's check-ins in one worker thread, then write them, in order."""
    tx = batch.tx
    current = await ctx.projections.current(tx.db, tx.project_id)
    live = await current.live(ctx.liveness, utcnow())
    items = list(batch.waiting())
    judge = _Judge(ctx.settings, current, live, batch.crowded)
    judged = await current.in_thread(lambda: [judge(item.wanted, item.alone) for item in items])
    for item, verdict in zip(items, judged, strict=True):
        if isinstance(verdict, InvalidInput):  # refused before anything was written
            item.failed(verdict)
        elif isinstance(verdict, Leave):
            item.leave()
            spent = verdict.spent + (item.alone.spent if item.alone else 0.0)
            ctx.checkins.aside(tx.project_id, item, _search_alone(ctx, tx.project_id, item, spent))
        else:
            item.done(await _write(ctx, tx, item.wanted, verdict))


async def _search_alone(
    ctx: ServiceContext, project_id: int, item: Waiting[Wanted, Admitted], spent: float
) -> None:
    """Search a check-in that left its batch against the live sessions as they are now,
    alone, with what is left of its budget; ``item.alone`` keeps what it found."""
    wanted = item.wanted
    current = ctx.projections.peek(project_id)
    if current is None:  # dropped meanwhile (a project deleted): decided in a batch
        item.alone = None
        return
    live = await current.live(ctx.liveness, utcnow())
    budget = ctx.settings.conflict_search_seconds
    left = max(budget - wanted.spent - spent, 0.0)
    asked = functools.partial(
        current.find,
        live,
        declared_area=wanted.area,
        patterns=wanted.patterns(),
        exclude_agent_name=wanted.name,
        max_files=ctx.settings.answer_max_files,
        margin=wanted.project.line_margin,
        claims=range_claims.by_path(wanted.claims),
    )

    def search() -> tuple[list[Conflict], float]:
        started = work_clock()
        return current.find_alone(live, asked, work_clock() + left), work_clock() - started

    try:
        found, took = await current.alone(search, search_size(wanted.patterns()))
    except SearchTooLong:
        raise too_long("declared_files", len(live), budget) from None
    item.alone = Alone(found, {s.id: s for s in live}, spent + took)


class _Judge:
    """Judges one check-in after the other against the live sessions and the ones it
    admitted before (on the worker thread: reads the projection's detector, never the
    database)."""

    def __init__(
        self,
        settings: Settings,
        current: LiveProject,
        live: list[LiveSession],
        crowded: Callable[[], bool] = lambda: True,
    ) -> None:
        self.settings = settings
        self.crowded = crowded  # whether others wait now: a search then takes its turn only
        self.current = current
        self.live = live
        self.also = ConflictDetector()  # the sessions this batch admitted
        self.named: dict[str, list[str]] = {}  # the live sessions' ids, by agent name
        for s in live:
            self.named.setdefault(s.agent_name, []).append(s.id)
        self.mine: dict[str, str] = {}  # this batch's session ids, by agent name
        # The range claims of the sessions this batch admitted, per file (for grading).
        self.also_claims: dict[str, line_claims.Edits] = {}
        # Display names by agent name: the sessions not ended (overdue ones too, until
        # they time out) and the ones this batch admitted; a name in use here is not
        # given to another session (services/names.py).
        self.shown: dict[str, str] = {
            s.agent_name: s.display_name or s.agent_name for s in current.sessions.values()
        }

    def __call__(self, wanted: Wanted, alone: Alone | None = None) -> Judged | InvalidInput | Leave:
        project, area = wanted.project, wanted.area
        name = wanted.name or names.generated_agent_name(self.named.keys() | self.mine.keys())
        budget = self.settings.conflict_search_seconds
        left = max(budget - wanted.spent - (alone.spent if alone else 0.0), 0.0)
        found: list[Conflict] = []
        held = wanted.patterns()
        claimed = range_claims.by_path(wanted.claims)
        if held or area:
            started = work_clock()
            turn = TURN_SECONDS
            while True:
                try:
                    found = self._search(
                        wanted, name, held, claimed, alone, min(started + turn, started + left)
                    )
                    break
                except SearchTooLong:
                    if work_clock() - started >= left:
                        return too_long("declared_files", len(self.live), budget)
                    if self.crowded():
                        return Leave(work_clock() - started)
                # Nobody waits on the batch: go on, a longer turn (what the last one
                # decided is remembered by the pattern engine's caches).
                turn *= 2
        # Block mode refuses on certain overlaps and shared areas only (SPEC); overlaps
        # that hold only if a path is a directory are reported, never block. With
        # block_on = lines, only those where the other side has edits (a new session has
        # none yet).
        blocked = project.conflict_mode == "block" and any(
            c.certain and line_claims.refuses(c, project.block_on) for c in found
        )
        session_id = new_session_id()
        if blocked:
            return Judged(session_id, name, found, True, [], None)
        previous = self.named.pop(name, [])
        if previous:
            self.live[:] = [s for s in self.live if s.agent_name != name]
        earlier = self.mine.pop(name, None)
        if earlier is not None:
            self.also.remove(earlier)
        self.mine[name] = session_id
        # A session that supersedes its agent's keeps that one's display name.
        shown = self.shown.pop(name, None)
        if shown is None:
            taken = set(self.shown.values()) | set(self.shown)
            shown = names.display_name(name, taken)
        self.shown[name] = shown
        self.also.add(
            Scope(session_id=session_id, agent_name=name, declared_area=area, patterns=tuple(held))
        )
        if claimed:
            self.also_claims[session_id] = claimed
        return Judged(session_id, name, found, False, previous, earlier, shown)

    def _search(
        self,
        wanted: Wanted,
        name: str,
        held: list[str],
        claimed: line_claims.Edits,
        alone: Alone | None,
        deadline: float,
    ) -> list[Conflict]:
        """The check-in's conflicts within ``deadline``: a search of the live sessions
        and this batch's, or, after a search alone, that search's answer for the
        sessions unchanged since, and a search of the others only."""
        asked = functools.partial(
            self.current.find,
            declared_area=wanted.area,
            patterns=held,
            exclude_agent_name=name,
            max_files=self.settings.answer_max_files,
            margin=wanted.project.line_margin,
            also=self.also,
            claims=claimed,
            also_claims=self.also_claims,
        )
        if alone is None:
            return asked(self.live, deadline=deadline)
        changed = [s for s in self.live if alone.seen.get(s.id) is not s]
        kept = {s.id for s in self.live if alone.seen.get(s.id) is s}
        found = [c for c in alone.found if c.session_id in kept and c.agent_name != name]
        found += self.current.find_alone(changed, functools.partial(asked, changed), deadline)
        # Oldest first, as a search of them all would list them; this batch's last.
        order = {s.id: n for n, s in enumerate(self.live)}
        found.sort(key=lambda c: order.get(c.session_id, len(order)))
        return found


async def _write(ctx: ServiceContext, tx: ProjectTx, wanted: Wanted, judged: Judged) -> Admitted:
    """Write one judged check-in and its events (the rows go in with the batch's others,
    many per statement, when the transaction settles)."""
    project, area, files, name = wanted.project, wanted.area, wanted.files, judged.name
    found = judged.found
    now = utcnow()
    session = LiveSession(
        id=judged.session_id,
        agent_name=name,
        display_name=judged.display_name,
        declared_area=area,
        declared_files=files,
        status_text=None,
        meta=wanted.meta,
        started_at=now,
        last_heartbeat_at=now,
        expires_at=now + timedelta(seconds=project.heartbeat_ttl_seconds),
        claims=wanted.claims,
    )
    row: dict[str, Any] = {
        "id": session.id,
        "project_id": tx.project_id,
        "agent_name": name,
        "display_name": judged.display_name,
        "declared_area": area,
        "declared_files": files,
        "meta": wanted.meta,
        "status": "active",
        "outcome_status": None,
        "status_text": None,
        "work_summary": None,
        "files_touched": [],
        "claimed_at": claim_times(None, [], files, now, now),
        "edits": {},
        "claims": line_claims.claims_wire(wanted.claims),
        "started_at": now,
        "last_heartbeat_at": now,
        "expires_at": session.expires_at,
        "ended_at": None,
        "token_hash": None,
    }
    token = token_hash = None
    if judged.blocked:
        row.update(status="blocked", outcome_status="blocked", ended_at=now)
        tx.insert_later(queries.INSERT_SESSIONS, row)
    else:
        token = tokens.new_session_token()
        token_hash = row["token_hash"] = tokens.hash_secret(token)
        if judged.previous or judged.earlier:
            await _supersede(tx, judged, session.id, now)
        tx.insert_later(queries.INSERT_SESSIONS, row)
        view = session_view(session)
        await tx.emit("agent.checkin", {"session": view, "conflicts_total": len(found)})
    bounded = bounded_conflicts(found, ctx.settings.answer_max_conflicts)
    if bounded["conflicts"]:
        await tx.emit(
            "agent.conflict",
            conflict_event(
                session_id=session.id,
                agent_name=name,
                declared_area=area,
                declared_files=files,
                blocked=judged.blocked,
                conflicts=bounded["conflicts"],
                max_conflicts=ctx.settings.event_max_conflicts,
                total=len(found),
            ),
        )
    certain = sum(c.certain for c in found)
    return Admitted(session, token, token_hash, bounded, certain, judged.previous)


async def _supersede(tx: ProjectTx, judged: Judged, session_id: str, now: datetime) -> None:
    """End the agent's earlier sessions: live ones, and one checked in earlier in this
    batch. The rows kept back are written first (the earlier one among them), and the
    project's offset: what ends with a session may read it."""
    await tx.settle()
    earlier = [judged.earlier] if judged.earlier else []
    olds = [await tx.db.get(AgentSession, old_id) for old_id in judged.previous + earlier]
    tx.local_offsets = False
    for old in olds:
        if old is not None and old.status == "active":
            extra = {"superseded_by": session_id}
            await end_session(tx, old, "superseded", extra=extra, now=now)
    await tx.settle()
    tx.local_offsets = True
