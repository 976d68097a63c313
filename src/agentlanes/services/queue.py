"""Waiting for a lane (SPEC "Waiting for a lane"): a session queues for paths other
sessions hold, and is granted them in the transaction that frees them.

Order, per path: urgency (``low`` < ``normal`` < ``high``), then arrival; a wait older than
``queue_age_boost_seconds`` counts one level higher, so nobody starves. A wait is granted
when every one of its paths is free for it: no other live session holds it for certain
(as block mode would refuse it) and no wait ahead of it in that order wants it.

Granting is pushed, never polled. Every transaction that may free paths (a status change
that narrows or releases, a checkout, a timeout, a supersede, the post-commit hook's
narrowing — all status changes or session ends), and every wait that ends, asks for a
*grant pass* (``ProjectTx.before_commit``), which runs in that same transaction under the
project's lock: the paths go from the holder to the waiter atomically, so block mode stays
exact across processes (a check-in racing the release sees the path held either way).
The pass reads the live projection (caught up in the lock, before the transaction wrote
anything) with this transaction's own events laid on top (``Lanes``). Each grant writes
``agent.status`` (the waiter's claims) and ``claim.granted``; the hub pushes both to every
process, and the news turns ``claim.granted`` into an item (and a socket frame) for the
waiter.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import col, select

from agentlanes.clock import iso, utcnow
from agentlanes.domain.conflicts import Conflict, ConflictDetector, SearchTooLong, work_clock
from agentlanes.domain.globs import overlap
from agentlanes.errors import InvalidInput, NotFound, StateConflict
from agentlanes.services import hotspots, line_claims, names, validation
from agentlanes.services.claim_age import claim_times
from agentlanes.services.context import ServiceContext
from agentlanes.services.current import current_projection
from agentlanes.services.expiry import expire_in_each_project
from agentlanes.services.project_tx import ProjectTx
from agentlanes.services.projection import LiveProject, LiveSession
from agentlanes.services.session_auth import active_session
from agentlanes.services.views import entry_view, session_view, shown_name
from agentlanes.settings import LIMITS
from agentlanes.store.models import AgentSession, Project, QueueEntry

log = logging.getLogger("agentlanes.queue")

URGENCIES = ("low", "normal", "high")
LEVEL = {"low": 0, "normal": 1, "high": 2}
WAITING = "waiting"
GRANT_PASS = "queue.grant"
WILDCARDS = frozenset("*?[{")


@dataclass(frozen=True)
class WaitInput:
    paths: list[str] | None = None
    timeout_seconds: int | None = None
    urgency: str | None = None


# -- order -------------------------------------------------------------------------------------


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def priority(entry: dict[str, Any], now: datetime, boost: float) -> tuple[int, str, str]:
    """The sort key of a wait: more urgent first (one level more once older than
    ``boost`` seconds), then earlier, then by id (a total order)."""
    level = LEVEL.get(entry["urgency"], 1)
    if (now - _when(entry["created_at"])).total_seconds() >= boost:
        level += 1
    return (-level, entry["created_at"], entry["queue_id"])


def in_order(
    waiting: Iterable[dict[str, Any]], now: datetime, boost: float
) -> list[dict[str, Any]]:
    return sorted(waiting, key=lambda e: priority(e, now, boost))


def _literal(pattern: str) -> bool:
    return not pattern.endswith("/") and not (WILDCARDS & set(pattern))


def paths_meet(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two waits want a path in common for certain (two literal paths: the same
    string; otherwise the exact overlap of the patterns)."""
    for x in a:
        for y in b:
            if x == y:
                return True
            if _literal(x) and _literal(y):
                continue
            o = overlap(x, y)
            if o is not None and o.certain:
                return True
    return False


# -- the project as a transaction leaves it ----------------------------------------------------


class Lanes:
    """Live sessions and waits as this transaction leaves them: the projection (caught up
    to the transaction's start) with the transaction's own events laid on top."""

    def __init__(
        self, current: LiveProject, live: Sequence[LiveSession], events: Sequence[dict[str, Any]]
    ) -> None:
        self.current = current
        changed: dict[str, LiveSession | None] = {}
        waiting = dict(current.waiting)
        for event in events:
            kind, data = event["type"], event["data"]
            if kind in ("agent.checkin", "agent.status"):
                session = LiveSession.of_view(data["session"])
                changed[session.id] = session
            elif kind in ("agent.checkout", "agent.timeout"):
                changed[data["session_id"]] = None
            elif kind == "queue.joined":
                waiting[data["entry"]["queue_id"]] = data["entry"]
            elif kind in ("queue.left", "claim.granted"):
                waiting.pop(data["entry"]["queue_id"], None)
        self.unchanged = [s for s in live if s.id not in changed]
        self.also = ConflictDetector()
        for now_live in changed.values():
            if now_live is not None:
                self.also.add(now_live.scope())
        self.sessions = {s.id: s for s in self.unchanged} | {
            k: s for k, s in changed.items() if s is not None
        }
        self.waiting = waiting

    def holders(
        self, entry: dict[str, Any], project: Project, *, deadline: float, max_files: int
    ) -> list[Conflict]:
        """The live sessions holding some path of ``entry`` for certain, as block mode
        would refuse it (SPEC); its own agent's sessions do not count."""
        waiter = self.sessions.get(entry["session_id"])
        found = self.current.find(
            self.unchanged,
            patterns=entry["paths"],
            exclude_session_id=entry["session_id"],
            exclude_agent_name=entry["agent_name"],
            deadline=deadline,
            max_files=max_files,
            edits=waiter.edits if waiter is not None else None,
            margin=project.line_margin,
            also=self.also,
        )
        return [c for c in found if c.certain and line_claims.refuses(c, project.block_on)]


@dataclass
class Standing:
    """Where one wait stands: its place in line for its paths (1: first), who holds them."""

    entry: dict[str, Any]
    position: int
    holders: list[Conflict]

    @property
    def free(self) -> bool:
        return self.position == 1 and not self.holders


def standings(
    lanes: Lanes,
    project: Project,
    order: list[dict[str, Any]],
    *,
    wanted: set[str] | None,
    deadline: float,
    max_files: int,
) -> list[Standing]:
    """The place in line and the holders of each wait in ``order`` (or of the ones in
    ``wanted``): position 1 + the waits ahead of it that want one of its paths. Runs on a
    worker thread (LiveProject.in_thread): it reads the detector."""
    out = []
    for i, entry in enumerate(order):
        if wanted is not None and entry["queue_id"] not in wanted:
            continue
        ahead = sum(1 for e in order[:i] if paths_meet(e["paths"], entry["paths"]))
        out.append(
            Standing(
                entry,
                1 + ahead,
                lanes.holders(entry, project, deadline=deadline, max_files=max_files),
            )
        )
    return out


def holder_views(lanes: Lanes, holders: Sequence[Conflict]) -> list[dict[str, Any]]:
    """``[{"agent_name", "display_name", "session_id", "paths"}]``: who holds what."""
    out = []
    for c in holders:
        session = lanes.sessions.get(c.session_id)
        out.append(
            {
                "session_id": c.session_id,
                "agent_name": c.agent_name,
                "display_name": shown_name(session) if session is not None else c.agent_name,
                "paths": sorted({f.their_pattern for f in c.overlapping_files if f.certain}),
            }
        )
    return out


# -- the grant pass ----------------------------------------------------------------------------


def ask_for_grants(ctx: ServiceContext, tx: ProjectTx) -> None:
    """Run the grant pass in ``tx`` before it commits (once, however often asked)."""

    async def run() -> None:
        await grant_pass(ctx, tx)

    tx.before_commit(GRANT_PASS, run)


async def _lanes(ctx: ServiceContext, tx: ProjectTx) -> Lanes:
    """The project as ``tx`` leaves it. Every caller has brought the projection up to the
    transaction's start before writing (it is then the first event's offset minus one);
    should one not have, the state is read afresh from the database (what the transaction
    wrote included), never applied to the kept projection."""
    now = utcnow()
    if not tx.events:
        current = await ctx.projections.current(tx.db, tx.project_id)
        return Lanes(current, await current.live(ctx.liveness, now), [])
    kept = ctx.projections.peek(tx.project_id)
    if kept is not None and kept.offset == int(tx.events[0]["offset"]) - 1:
        return Lanes(kept, await kept.live(ctx.liveness, now), tx.events)
    log.warning("grant pass: projection not at the transaction's start; reading it afresh")
    await tx.settle()
    fresh = await ctx.projections.detached(tx.db, tx.project_id)
    return Lanes(fresh, await fresh.live(ctx.liveness, now), [])


async def grant_pass(ctx: ServiceContext, tx: ProjectTx) -> list[str]:
    """Grant every wait whose paths are all free for it now, in this transaction; the
    queue ids granted."""
    kept = ctx.projections.peek(tx.project_id)
    joined = any(e["type"] == "queue.joined" for e in tx.events)
    if kept is not None and not kept.waiting and not joined and tx.events:
        return []  # nobody waits (the common case: no read, no search)
    if tx.local_offsets:  # a batch of check-ins: write what it kept back first
        await tx.settle()
        tx.local_offsets = False
    lanes = await _lanes(ctx, tx)
    if not lanes.waiting:
        return []
    project = await tx.db.get(Project, tx.project_id)
    assert project is not None
    now = utcnow()
    order = in_order(
        (e for e in lanes.waiting.values() if e["session_id"] in lanes.sessions),
        now,
        ctx.settings.queue_age_boost_seconds,
    )
    # Only a wait first in line for all its paths can be granted: the holders of those.
    heads = {
        e["queue_id"]
        for i, e in enumerate(order)
        if not any(paths_meet(o["paths"], e["paths"]) for o in order[:i])
    }
    if not heads:
        return []
    budget = ctx.settings.conflict_search_seconds
    try:
        found = await lanes.current.in_thread(
            lambda: standings(
                lanes,
                project,
                order,
                wanted=heads,
                deadline=work_clock() + budget,
                max_files=ctx.settings.answer_max_files,
            )
        )
    except SearchTooLong:
        log.warning("grant pass of project %s ran out of time", tx.project_id)
        return []
    granted = []
    for standing in found:
        if standing.free and await _grant(tx, standing.entry, now):
            granted.append(standing.entry["queue_id"])
    return granted


async def _grant(tx: ProjectTx, entry: dict[str, Any], now: datetime) -> bool:
    """The wait's paths join its session's claims; ``agent.status`` and ``claim.granted``."""
    row = await tx.db.get(QueueEntry, entry["queue_id"])
    session = await tx.db.get(AgentSession, entry["session_id"])
    if row is None or row.status != WAITING or session is None or session.status != "active":
        return False
    had = list(session.declared_files or [])
    files = had + [p for p in row.paths if p not in had]
    session.claimed_at = claim_times(session.claimed_at, had, files, session.started_at, now)
    session.declared_files = files
    tx.db.add(session)
    view = session_view(session)
    await tx.emit("agent.status", {"session": view, "conflicts_total": 0, "granted": row.id})
    waited = _end(tx, row, "granted", now)
    await tx.emit(
        "claim.granted",
        {"entry": entry_view(row), "waited_seconds": waited, "declared_files": files},
    )
    return True


def _end(tx: ProjectTx, row: QueueEntry, status: str, now: datetime) -> float:
    """Mark a wait ended; its paths count as waited for (hotspots). Seconds it waited."""
    row.status = status
    row.ended_at = now
    tx.db.add(row)
    waited = round(max((now - row.created_at).total_seconds(), 0.0), 3)
    hotspots.note_wait(tx, row, waited, status)
    return waited


# -- asking to wait ----------------------------------------------------------------------------


def check_wait(ctx: ServiceContext, data: WaitInput) -> tuple[list[str], int, str]:
    """The wait's patterns, timeout and urgency, checked (400 naming the field)."""
    paths = validation.check_patterns(data.paths, ctx.settings, "paths")
    if not paths:
        raise InvalidInput("paths", "required: the paths (or patterns) to wait for")
    if len(paths) > LIMITS.queue_paths:
        raise InvalidInput("paths", f"at most {LIMITS.queue_paths} paths per wait")
    timeout = data.timeout_seconds
    if timeout is None:
        timeout = LIMITS.queue_timeout_default_seconds
    elif not 1 <= timeout <= LIMITS.queue_timeout_max_seconds:
        raise InvalidInput(
            "timeout_seconds", f"must be 1-{LIMITS.queue_timeout_max_seconds} seconds"
        )
    urgency = validation.check_choice(data.urgency, "urgency", URGENCIES) or "normal"
    return paths, timeout, urgency


async def wait(
    ctx: ServiceContext, project: Project, token: str | None, data: WaitInput
) -> tuple[dict[str, Any], int]:
    """Queue the caller's session for ``paths``: 202 with its place and holders, or 200
    ``granted`` when nothing holds them (they join its claims at once)."""
    paths, timeout, urgency = check_wait(ctx, data)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token, within_ttl=True)
        current = await ctx.projections.current(tx.db, project.id)
        return await enqueue(ctx, tx, project, current, session, paths, timeout, urgency)


async def enqueue(
    ctx: ServiceContext,
    tx: ProjectTx,
    project: Project,
    current: LiveProject,
    session: AgentSession,
    paths: list[str],
    timeout: int,
    urgency: str,
    *,
    auto: bool = False,
) -> tuple[dict[str, Any], int]:
    """The wait, written in ``tx`` (the projection brought up to its start); granted at
    once when free. Also used for a refused scope change with auto_queue on."""
    mine = [w for w in current.waiting.values() if w["session_id"] == session.id]
    if len(mine) >= LIMITS.queue_waits_per_session:
        raise StateConflict(
            f"this session already waits {len(mine)} times (at most "
            f"{LIMITS.queue_waits_per_session}): cancel one (DELETE /api/v1/queue/ID)"
        )
    if len(current.waiting) >= LIMITS.queue_waits_per_project:
        raise StateConflict(
            f"the project's queue is full ({LIMITS.queue_waits_per_project} waits): try again later"
        )
    now = utcnow()
    row = QueueEntry(
        id=names.new_id("q"),
        project_id=tx.project_id,
        session_id=session.id,
        agent_name=session.agent_name,
        display_name=shown_name(session),
        paths=paths,
        urgency=urgency,
        status=WAITING,
        auto=auto,
        timeout_seconds=timeout,
        created_at=now,
        expires_at=now + timedelta(seconds=timeout),
    )
    tx.db.add(row)
    joined = await tx.emit("queue.joined", {"entry": entry_view(row)})
    granted = await grant_pass(ctx, tx)
    if row.id in granted:
        return {
            "granted": True,
            "queue_id": row.id,
            "session_id": session.id,
            "paths": paths,
            "declared_files": list(session.declared_files or []),
            "offset": tx.events[-1]["offset"],
        }, 200
    lanes = await _lanes(ctx, tx)
    order = in_order(lanes.waiting.values(), utcnow(), ctx.settings.queue_age_boost_seconds)
    [standing] = await lanes.current.in_thread(
        lambda: standings(
            lanes,
            project,
            order,
            wanted={row.id},
            deadline=work_clock() + ctx.settings.conflict_search_seconds,
            max_files=ctx.settings.answer_max_files,
        )
    )
    return {
        "granted": False,
        "queue_id": row.id,
        "session_id": session.id,
        "position": standing.position,
        "holders": holder_views(lanes, standing.holders),
        "paths": paths,
        "urgency": urgency,
        "expires_at": iso(row.expires_at),
        "offset": joined["offset"],
    }, 202


# -- the waits ---------------------------------------------------------------------------------


async def waits(
    ctx: ServiceContext,
    project: Project,
    *,
    session_id: str | None = None,
    limit: int | None = None,
    offset: int | None = None,
) -> dict[str, Any]:
    """The project's waits in line order, each with its position and holders."""
    limit, offset = validation.check_page(limit, offset)
    assert project.id is not None
    current = await current_projection(ctx, project.id)
    lanes = Lanes(current, await current.live(ctx.liveness, utcnow()), [])
    order = in_order(lanes.waiting.values(), utcnow(), ctx.settings.queue_age_boost_seconds)
    chosen = [e for e in order if session_id is None or e["session_id"] == session_id]
    page = chosen[offset : offset + limit]
    try:
        found = await current.in_thread(
            lambda: standings(
                lanes,
                project,
                order,
                wanted={e["queue_id"] for e in page},
                deadline=work_clock() + ctx.settings.conflict_search_seconds,
                max_files=ctx.settings.answer_max_files,
            )
        )
    except SearchTooLong:
        raise InvalidInput("limit", "too many waits to place in time: ask for fewer") from None
    return {
        "waits": [
            {**s.entry, "position": s.position, "holders": holder_views(lanes, s.holders)}
            for s in found
        ],
        "total": len(chosen),
        "limit": limit,
        "offset": offset,
    }


async def cancel(
    ctx: ServiceContext, project: Project, queue_id: str, token: str | None
) -> dict[str, Any]:
    """End the caller's own wait (``queue.left``, reason ``cancelled``); those behind it
    move up, and any now free is granted in the same transaction."""
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token, within_ttl=True)
        await ctx.projections.current(tx.db, project.id)
        row = await tx.db.get(QueueEntry, queue_id)
        if row is None or row.project_id != project.id or row.session_id != session.id:
            raise NotFound(f"no wait {queue_id!r} of this session")
        if row.status != WAITING:
            raise StateConflict(
                f"wait {queue_id} has ended ({row.status})", queue_id=row.id, status=row.status
            )
        await leave(ctx, tx, row, "cancelled", utcnow())
        return entry_view(row)


async def leave(
    ctx: ServiceContext, tx: ProjectTx, row: QueueEntry, reason: str, now: datetime
) -> None:
    """A wait ends without a grant (cancelled, timed_out, ended): ``queue.left``."""
    _end(tx, row, reason, now)
    await tx.emit("queue.left", {"entry": entry_view(row), "reason": reason})
    ask_for_grants(ctx, tx)


# -- what ends waits ---------------------------------------------------------------------------


def register(ctx: ServiceContext) -> None:
    """A session's waits end with it, and what it held goes to the next in line."""

    async def on_end(tx: ProjectTx, session: AgentSession, reason: str) -> None:
        rows = (
            await tx.db.exec(
                select(QueueEntry).where(
                    QueueEntry.session_id == session.id, QueueEntry.status == WAITING
                )
            )
        ).all()
        now = utcnow()
        for row in rows:
            _end(tx, row, "ended", now)
            await tx.emit("queue.left", {"entry": entry_view(row), "reason": "ended"})
        ask_for_grants(ctx, tx)

    ctx.on_session_end(on_end)


async def expire_overdue(ctx: ServiceContext) -> int:
    """The scheduled job: waits past their timeout end (``queue.left``, ``timed_out``:
    news to the waiter); and where a wait has just grown old enough to move up a level,
    a grant pass (the order changed)."""
    ended = await expire_in_each_project(ctx, QueueEntry, _expire_project, status=WAITING)
    boost = ctx.settings.queue_age_boost_seconds
    if boost > 0:
        now = utcnow()
        window = timedelta(seconds=2 * ctx.settings.expiry_check_seconds + 1)
        crossed = col(QueueEntry.created_at) <= now - timedelta(seconds=boost)
        async with ctx.db.read() as db:
            stmt = select(QueueEntry.project_id).where(
                QueueEntry.status == WAITING,
                crossed,
                col(QueueEntry.created_at) > now - timedelta(seconds=boost) - window,
            )
            projects = set((await db.exec(stmt.distinct())).all())
        for project_id in projects:
            async with ctx.project_tx(project_id) as tx:
                await grant_pass(ctx, tx)
    return ended


async def _expire_project(ctx: ServiceContext, project_id: int) -> int:
    async with ctx.project_tx(project_id) as tx:
        await ctx.projections.current(tx.db, project_id)
        now = utcnow()
        stmt = select(QueueEntry).where(
            QueueEntry.project_id == project_id,
            QueueEntry.status == WAITING,
            col(QueueEntry.expires_at) <= now,
        )
        rows = (await tx.db.exec(stmt)).all()
        for row in rows:
            await leave(ctx, tx, row, "timed_out", now)
        return len(rows)
