"""How a session ends (checkout, supersede, timeout), and what ends with it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentlanes.clock import iso, utcnow
from agentlanes.services.context import ServiceContext
from agentlanes.services.expiry import expire_in_each_project, overdue_in_project
from agentlanes.services.project_tx import ProjectTx
from agentlanes.store.models import AgentSession

# Ended statuses and the event each one writes.
END_EVENTS = {
    "checked_out": "agent.checkout",
    "superseded": "agent.checkout",
    "timed_out": "agent.timeout",
}


async def release_session_claims(tx: ProjectTx, session: AgentSession, reason: str) -> None:
    """Release what a session held as it ends: each listener registered on the context
    (``ServiceContext.on_session_end``: leases, task claims) writes its own events in
    ``tx``."""
    for listener in tx.session_end_listeners:
        await listener(tx, session, reason)


async def end_session(
    tx: ProjectTx,
    session: AgentSession,
    status: str,
    *,
    outcome_status: str | None = None,
    extra: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Mark an active session ended, write its event, release its claims."""
    now = now or utcnow()
    session.status = status
    session.outcome_status = outcome_status or status
    session.ended_at = now
    tx.db.add(session)
    data = {
        "session_id": session.id,
        "agent_name": session.agent_name,
        "display_name": session.display_name or session.agent_name,
        "declared_area": session.declared_area,
        "status": status,
        "outcome_status": session.outcome_status,
        "ended_at": iso(now),
        **(extra or {}),
    }
    event = await tx.emit(END_EVENTS[status], data)
    await release_session_claims(tx, session, status)
    return event


async def expire_project_sessions(ctx: ServiceContext, project_id: int) -> int:
    """End the project's overdue sessions as ``timed_out``; return how many ended here.

    Runs under the project lock and re-reads inside it, so with several processes
    (or a heartbeat racing the job) each session times out exactly once. Heartbeats not
    yet written through are consulted first (``Liveness.claim_overdue``): a session with
    a fresh one is written through and kept, and one without is marked ended there in
    the same step, so no heartbeat is accepted for it afterwards."""
    async with ctx.project_tx(project_id) as tx:
        now = utcnow()
        stmt = overdue_in_project(AgentSession, project_id, status="active", now=now)
        # Lock the rows: a racing checkout or status change waits, then finds them ended.
        due = (await tx.db.exec(stmt.with_for_update())).all()
        if not due:
            return 0
        # The projection at this transaction's start: what ends with the sessions (their
        # waits, the grants of what they held) reads it (services/queue.py).
        await ctx.projections.current(tx.db, project_id)
        overdue, fresh = await ctx.liveness.claim_overdue([s.id for s in due], now)
        ended = set(overdue)
        for session in due:
            beat = fresh.get(session.id)
            if beat is not None:
                session.last_heartbeat_at = beat.at
                session.expires_at = beat.expires_at
                tx.db.add(session)
            elif session.id in ended:
                await end_session(tx, session, "timed_out", now=now)
        return len(ended)


async def expire_overdue(ctx: ServiceContext) -> int:
    """The scheduled job: time out every overdue session of every project."""
    return await expire_in_each_project(ctx, AgentSession, expire_project_sessions, status="active")
