"""Check-in, heartbeat, status, checkout: the life of one agent session."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agentlanes import tokens
from agentlanes.clock import iso, utcnow
from agentlanes.domain import range_claims
from agentlanes.domain.conflicts import Conflict, SearchTooLong
from agentlanes.domain.edits import LINES
from agentlanes.errors import InvalidInput, SessionEnded, SessionNotFound, StateConflict
from agentlanes.services import hotspots, line_claims, queue, validation
from agentlanes.services.checkin_decisions import Admitted, Wanted, decide, too_long
from agentlanes.services.claim_age import claim_times, earlier_claims
from agentlanes.services.context import ServiceContext
from agentlanes.services.current import current_projection
from agentlanes.services.lifecycle import end_session, expire_project_sessions
from agentlanes.services.project_tx import ProjectTx
from agentlanes.services.projection import LiveProject, LiveSession
from agentlanes.services.refusals import refusal_text
from agentlanes.services.session_auth import active_session, check_token
from agentlanes.services.views import (
    bounded_conflicts,
    conflict_event,
    conflict_view,
    session_view,
    shown_name,
)
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.models import AgentSession, Project

OUTCOMES = ("completed", "partial", "failed")


@dataclass(frozen=True)
class CheckinInput:
    agent_name: str | None = None
    declared_area: str | None = None
    declared_files: list[str] | None = None
    meta: dict[str, Any] | None = None
    # Range claims (SPEC "Line-level claims"): [{"path", "base", "ranges", "symbol"?}].
    claims: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class StatusInput:
    declared_area: str | None = None
    declared_files: list[str] | None = None
    status_text: str | None = None
    # What the agent changed (SPEC "Line-level claims"): [{"path", "base", "ranges"}].
    edits: list[dict[str, Any]] | None = None
    # Range claims: replace the session's when sent ([] drops them).
    claims: list[dict[str, Any]] | None = None
    # Which of the optional fields were sent (None in a field can mean "clear it").
    sent: frozenset[str] = frozenset()


def _ttl(project: Project) -> timedelta:
    return timedelta(seconds=project.heartbeat_ttl_seconds)


async def checkin(ctx: ServiceContext, project: Project, data: CheckinInput) -> dict[str, Any]:
    """Start a session; report (or, in block mode, refuse on) overlaps with live sessions.

    The request is checked here; deciding and writing it happen in the project's next
    batch of check-ins (services/checkin_batch.py): one transaction under the project's
    lock for every check-in waiting, each decided against the state that includes every
    earlier one, answered once the batch is committed."""
    name = validation.check_agent_name(data.agent_name)
    area = validation.check_area(data.declared_area)
    started = time.monotonic()
    files = await validation.check_patterns_off_loop(
        data.declared_files, ctx.settings, "declared_files"
    )
    spent = time.monotonic() - started
    meta = validation.check_meta(data.meta)
    claims = line_claims.check_claims(data.claims, ctx.settings)
    assert project.id is not None
    wanted = Wanted(project, name, area, files, meta, spent, claims)
    admitted: Admitted = await ctx.checkins.submit(project.id, wanted, lambda b: decide(ctx, b))
    if admitted.previous:
        await ctx.liveness.forget(admitted.previous)
    session = admitted.session
    if admitted.token is None:
        refusing = [c for c in admitted.bounded["conflicts"] if c["certain"]]
        await hotspots.record_refusal(
            ctx, project.id, session.agent_name, hotspots.refused_paths(refusing)
        )
        current = ctx.projections.peek(project.id)

        def shown(session_id: str, agent_name: str) -> str:
            known = current.sessions.get(session_id) if current is not None else None
            return shown_name(known) if known is not None else agent_name

        raise StateConflict(
            refusal_text("check-in", refusing, shown, has_session=False, total=admitted.certain),
            outcome_status="blocked",
            session_id=session.id,
            **admitted.bounded,
        )
    assert admitted.token_hash is not None
    ctx.remember_token(project.id, admitted.token_hash, session.id)
    return {
        "session_id": session.id,
        "session_token": admitted.token,
        "agent_name": session.agent_name,
        "display_name": shown_name(session),
        "declared_area": area,
        "declared_files": files,
        "claims": line_claims.claims_wire(claims),
        "meta": meta,
        "status": "active",
        "heartbeat_interval_seconds": project.heartbeat_interval_seconds,
        "heartbeat_ttl_seconds": project.heartbeat_ttl_seconds,
        "started_at": iso(session.started_at),
        "expires_at": iso(session.expires_at),
        **admitted.bounded,
    }


async def search(
    ctx: ServiceContext,
    current: LiveProject,
    live: list[LiveSession],
    field: str,
    *,
    spent: float = 0.0,
    **scope: Any,
) -> list[Conflict]:
    """The conflicts of a scope with the live sessions, found in a worker thread within
    ``conflict_search_seconds`` of work (``spent``: what checking the request's patterns
    took already; waiting for the project's lock is not counted), each with at most
    ``answer_max_files``
    overlapping files; past that, a 400 naming ``field``: the work one request may
    cause is bounded, and nobody else waits for it (SPEC "One agent cannot hurt
    another")."""
    budget = ctx.settings.conflict_search_seconds
    try:
        return await current.search(
            live,
            budget=max(budget - spent, 0.0),
            max_files=ctx.settings.answer_max_files,
            **scope,
        )
    except SearchTooLong:
        raise too_long(field, len(live), budget) from None


async def live_sessions(
    ctx: ServiceContext, project_id: int, now: datetime
) -> tuple[LiveProject, list[LiveSession]]:
    """The project's projection and its live sessions (oldest first, counting heartbeats
    not yet written through). No query when the projection has every event the hub
    brought and was compared with the database within ``hub_catch_up_seconds`` (the
    bound on a lost notification); else one small query, and the events after its
    offset when it is behind."""
    current = await current_projection(ctx, project_id)
    return current, await current.live(ctx.liveness, now)


async def _overdue(ctx: ServiceContext, session: AgentSession, now: datetime) -> bool:
    """Past its TTL, counting a heartbeat not yet written through."""
    if session.expires_at > now:
        return False
    beat = (await ctx.liveness.beats([session.id])).get(session.id)
    return beat is None or beat.expires_at <= now


async def _ensure_alive(ctx: ServiceContext, project: Project, session: AgentSession) -> None:
    """An active session past its TTL is dead even before the job runs: end it now."""
    if await _overdue(ctx, session, utcnow()):
        assert project.id is not None
        await expire_project_sessions(ctx, project.id)
        raise SessionEnded(session.id, "timed_out")


async def heartbeat(ctx: ServiceContext, project: Project, token: str) -> dict[str, Any]:
    """Keep a session alive: a beat in memory or Redis, written through in batches
    (services/liveness/). A session this process knows to be live needs no database
    read; any other is looked up once."""
    token = check_token(token)
    assert project.id is not None
    token_hash = tokens.hash_secret(token)
    now = utcnow()
    session_id = ctx.known_token(project.id, token_hash)
    current = ctx.projections.peek(project.id)
    known = current.sessions.get(session_id) if current and session_id else None
    if known is not None:
        outcome = await ctx.liveness.beat(
            project.id, known.id, project.heartbeat_ttl_seconds, floor=known.expires_at, now=now
        )
        if outcome != "ok":
            # Overdue by what this process knows, or ended meanwhile: ask the database.
            await _heartbeat_from_row(ctx, project, token_hash, now)
    else:
        session_id = await _heartbeat_from_row(ctx, project, token_hash, now)
        ctx.remember_token(project.id, token_hash, session_id)
    return {
        "session_id": session_id,
        "status": "active",
        "last_heartbeat_at": iso(now),
        "expires_at": iso(now + _ttl(project)),
    }


async def _heartbeat_from_row(
    ctx: ServiceContext, project: Project, token_hash: str, now: datetime
) -> str:
    """The heartbeat with the session's row read (SQLAlchemy Core, a cached statement)."""
    assert project.id is not None
    async with ctx.db.read_conn() as conn:
        row = await queries.session_state(conn, project.id, token_hash)
    if row is None:
        raise SessionNotFound("no session with this token in this project")
    session_id, status, expires_at = row
    if status != "active":
        raise SessionEnded(session_id, status)
    outcome = await ctx.liveness.beat(
        project.id, session_id, project.heartbeat_ttl_seconds, floor=expires_at, now=now
    )
    if outcome == "overdue":
        # Dead even before the job runs: end it now (once, under the project lock).
        await expire_project_sessions(ctx, project.id)
    if outcome != "ok":
        raise SessionEnded(session_id, "timed_out")
    return str(session_id)


async def update_status(
    ctx: ServiceContext, project: Project, token: str, data: StatusInput
) -> dict[str, Any]:
    """Change a session's scope or status text; counts as a heartbeat."""
    token = check_token(token)
    area = validation.check_area(data.declared_area) if "declared_area" in data.sent else None
    started = time.monotonic()
    files = (
        await validation.check_patterns_off_loop(
            data.declared_files, ctx.settings, "declared_files"
        )
        if "declared_files" in data.sent
        else None
    )
    spent = time.monotonic() - started
    text = validation.check_status_text(data.status_text)
    given = line_claims.check_edits(data.edits, ctx.settings) if "edits" in data.sent else {}
    claims = line_claims.check_claims(data.claims, ctx.settings) if "claims" in data.sent else None
    assert project.id is not None
    expired = False
    refusal: StateConflict | None = None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token)
        now = utcnow()
        if await _overdue(ctx, session, now):
            expired = True
        else:
            new_area = area if "declared_area" in data.sent else session.declared_area
            new_files = files if files is not None else list(session.declared_files or [])
            # A refusal below concerns the declared scope only: an edit is already made,
            # so its report is always kept, and its path joins the claims (SPEC
            # "Line-level claims"; it joins now, so the older claim still stands).
            old_claims = line_claims.claims_of(session.claims)
            new_claims = old_claims if claims is None else claims
            declared_changed = (new_area, new_files, new_claims) != (
                session.declared_area,
                list(session.declared_files or []),
                old_claims,
            )
            edits = line_claims.merged(line_claims.of_stored(session.edits), given)
            new_files = line_claims.with_edited_paths(
                new_files,
                {**_unclaimed(edits, old_claims, new_claims), **given},
                ctx.settings,
                range_claims.paths(new_claims),
            )
            held = line_claims.claimed_paths_joined(new_files, new_claims)
            current = await ctx.projections.current(tx.db, project.id)
            live = await current.live(ctx.liveness, now)
            found = await search(
                ctx,
                current,
                live,
                "declared_files",
                spent=spent,
                declared_area=new_area,
                patterns=held,
                exclude_session_id=session.id,
                edits=edits,
                margin=project.line_margin,
                claims=range_claims.by_path(new_claims),
            )
            bounded = bounded_conflicts(found, ctx.settings.answer_max_conflicts)
            conflicts = bounded["conflicts"]
            scope_changed = declared_changed or new_files != list(session.declared_files or [])
            # As check-in: certain overlaps only, and only with a session that claimed
            # the path earlier (the older claim stands: a claim gained under warn never
            # locks out the earlier claimant).
            had = list(session.declared_files or [])
            times = claim_times(session.claimed_at, had, new_files, session.started_at, now)
            me = current.sessions.get(session.id)
            refusing = earlier_claims(
                [
                    conflict_view(c)
                    for c in found
                    if c.certain and line_claims.refuses(c, project.block_on)
                ],
                current.sessions,
                lambda p: datetime.fromisoformat(times.get(p) or iso(now) or ""),
                now if new_area != session.declared_area or me is None else me.started_at,
            )
            if refusing and declared_changed and project.conflict_mode == "block":
                # The old scope stays; the refusal is counted (hotspots) and, with
                # auto_queue on, the refused paths are queued for the session, both in
                # this transaction (it commits; the 409 is raised after).
                refusal = await _refuse_scope(
                    ctx, tx, project, current, session, refusing, had, bounded, now
                )
        if refusal is None and not expired:
            # Paths it lets go of (narrowed, released) go to the next in line now.
            if set(session.declared_files or []) - set(new_files) or (
                new_area != session.declared_area
            ):
                queue.ask_for_grants(ctx, tx)
            session.declared_area = new_area
            session.declared_files = new_files
            session.claimed_at = times
            if "edits" in data.sent:
                session.edits = line_claims.to_stored(edits)
            if claims is not None:
                session.claims = line_claims.claims_wire(claims)
            if "status_text" in data.sent:
                session.status_text = text
            session.last_heartbeat_at = now
            session.expires_at = now + _ttl(project)
            tx.db.add(session)
            view = session_view(session)
            await tx.emit("agent.status", {"session": view, "conflicts_total": len(found)})
            # A new overlap, or edits that now meet: the others hear it.
            meeting = "edits" in data.sent and any(c.grade == LINES for c in found)
            if conflicts and (scope_changed or meeting):
                await tx.emit(
                    "agent.conflict",
                    conflict_event(
                        session_id=session.id,
                        agent_name=session.agent_name,
                        declared_area=new_area,
                        declared_files=new_files,
                        blocked=False,
                        conflicts=conflicts,
                        max_conflicts=ctx.settings.event_max_conflicts,
                        total=len(found),
                    ),
                )
    if expired:
        await _ensure_alive(ctx, project, session)
    if refusal is not None:
        raise refusal
    return {**view, "status": "active", **bounded}


async def _refuse_scope(
    ctx: ServiceContext,
    tx: ProjectTx,
    project: Project,
    current: LiveProject,
    session: AgentSession,
    refusing: list[dict[str, Any]],
    had: list[str],
    bounded: dict[str, Any],
    now: datetime,
) -> StateConflict:
    """A scope change refused in block mode: its paths counted as refused (hotspots);
    with auto_queue on, the refused patterns queued for the session (the 409 carries the
    wait: ``queue``); the 409 naming the holders and the ways on (services/refusals.py)."""
    hotspots.note_refusal(tx, session.agent_name, hotspots.refused_paths(refusing), now)
    queued: dict[str, Any] | None = None
    if project.auto_queue:
        wanted = [
            f["pattern"]
            for c in refusing
            for f in c.get("overlapping_files") or []
            if f.get("certain", True)
        ]
        fresh = [p for p in dict.fromkeys(wanted) if p not in had]
        queued, _ = await queue.enqueue(
            ctx,
            tx,
            project,
            current,
            session,
            (fresh or list(dict.fromkeys(wanted)))[: LIMITS.queue_paths],
            LIMITS.queue_timeout_default_seconds,
            "normal",
            auto=True,
        )

    def shown(session_id: str, agent_name: str) -> str:
        known = current.sessions.get(session_id)
        return shown_name(known) if known is not None else agent_name

    return StateConflict(
        refusal_text("scope change", refusing, shown, queued=queued),
        outcome_status="blocked",
        session_id=session.id,
        **({"queue": queued} if queued is not None else {}),
        **bounded,
    )


def _unclaimed(
    edits: line_claims.Edits,
    old: tuple[range_claims.RangeClaim, ...],
    new: tuple[range_claims.RangeClaim, ...],
) -> dict[str, Any]:
    """The edited files a status change stops claiming by range: their paths join the
    claims as an edit's path does (an edit stays claimed)."""
    dropped = set(range_claims.paths(old)) - set(range_claims.paths(new))
    return {p: e for p, e in edits.items() if p in dropped}


async def checkout(
    ctx: ServiceContext,
    project: Project,
    token: str,
    *,
    outcome_status: str | None,
    work_summary: str | None,
    files_touched: list[str] | None,
) -> dict[str, Any]:
    token = check_token(token)
    outcome = outcome_status or "completed"
    if outcome not in OUTCOMES:
        raise InvalidInput("outcome_status", f"must be one of {', '.join(OUTCOMES)}")
    if work_summary is not None and len(work_summary) > ctx.settings.max_work_summary_chars:
        raise InvalidInput(
            "work_summary", f"must be at most {ctx.settings.max_work_summary_chars} characters"
        )
    touched = validation.check_paths(files_touched, ctx.settings, "files_touched")
    assert project.id is not None
    expired = False
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token)
        now = utcnow()
        if await _overdue(ctx, session, now):
            expired = True
        else:
            # The projection at this transaction's start: what ends with the session (its
            # waits, the grants of what it held) reads it (services/queue.py).
            await ctx.projections.current(tx.db, project.id)
            session.work_summary = work_summary
            session.files_touched = touched
            await end_session(
                tx,
                session,
                "checked_out",
                outcome_status=outcome,
                extra={"work_summary": work_summary, "files_touched": touched},
                now=now,
            )
    if expired:
        await _ensure_alive(ctx, project, session)
    await ctx.liveness.forget([session.id])
    return {
        "session_id": session.id,
        "status": "checked_out",
        "outcome_status": outcome,
        "ended_at": iso(session.ended_at),
    }


async def attach(ctx: ServiceContext, project: Project, token: str) -> dict[str, Any]:
    """Tie a session's liveness to a socket: validate the token and heartbeat once."""
    result = await heartbeat(ctx, project, token)
    return {"session_id": result["session_id"], "expires_at": result["expires_at"]}


async def touch(ctx: ServiceContext, project: Project, session_ids: list[str]) -> None:
    """Heartbeat sessions held by an open socket (and once more as it closes, so the TTL
    runs from that moment): beats in memory or Redis, written through in batches. A
    session the expiry job ended is refused there and left alone."""
    assert project.id is not None
    now = utcnow()
    for session_id in session_ids:
        await ctx.liveness.beat(
            project.id, session_id, project.heartbeat_ttl_seconds, floor=None, now=now
        )
