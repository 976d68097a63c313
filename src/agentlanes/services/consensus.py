"""Consensus: peer votes before a sensitive action.

Rules (each tested in tests/api/test_consensus.py):
- eligible voters are the agent names of the sessions live at creation, other than the
  requester, fixed for the life of the request;
- a vote comes from a live session of an eligible agent, once per agent;
- approved as soon as approvals are a strict majority of the eligible voters
  (``2 * approvals > n``); rejected as soon as that is out of reach
  (``2 * (approvals + not yet voted) <= n``) — so with no eligible voter at all a request is
  rejected at once: nobody can approve it;
- still pending at ``expires_at``: expired (on read, and recorded by the job).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.clock import iso, utcnow
from agentlanes.errors import Conflict, InvalidInput, NotFound
from agentlanes.services import checks
from agentlanes.services.acting import acting_session
from agentlanes.services.context import ProjectTx, ServiceContext
from agentlanes.store import queries
from agentlanes.store.coordination import ConsensusRequest, ConsensusVote
from agentlanes.store.models import Project

STATUSES = ("pending", "approved", "rejected", "expired")
VOTES = ("approve", "reject")
MAX_ACTION_CHARS = 200
MAX_SUBJECT_CHARS = 500
MAX_REASON_CHARS = 10_000
MAX_COMMENT_CHARS = 2_000


@dataclass(frozen=True)
class ConsensusInput:
    action: str | None = None
    subject: str | None = None
    reason: str | None = None
    timeout_seconds: int | None = None


def tally(eligible: int, approvals: int, rejections: int) -> str:
    """The outcome so far: ``approved``, ``rejected`` or ``pending``."""
    if 2 * approvals > eligible:
        return "approved"
    outstanding = eligible - approvals - rejections
    if 2 * (approvals + outstanding) <= eligible:
        return "rejected"
    return "pending"


def _vote_view(v: ConsensusVote) -> dict[str, Any]:
    return {
        "agent_name": v.agent_name,
        "vote": v.vote,
        "comment": v.comment,
        "created_at": iso(v.created_at),
    }


def request_view(
    r: ConsensusRequest, votes: list[ConsensusVote], now: datetime | None = None
) -> dict[str, Any]:
    now = now or utcnow()
    status = r.status
    if status == "pending" and r.expires_at <= now:
        status = "expired"  # past its time; the job records it
    approvals = sum(1 for v in votes if v.vote == "approve")
    rejections = sum(1 for v in votes if v.vote == "reject")
    n = len(r.eligible_voters or [])
    return {
        "consensus_id": r.id,
        "action": r.action,
        "subject": r.subject,
        "reason": r.reason,
        "requester": r.requester,
        "requester_session_id": r.requester_session_id,
        "eligible_voters": list(r.eligible_voters or []),
        "required_approvals": n // 2 + 1,
        "approvals": approvals,
        "rejections": rejections,
        "votes": [_vote_view(v) for v in votes],
        "status": status,
        "timeout_seconds": r.timeout_seconds,
        "created_at": iso(r.created_at),
        "expires_at": iso(r.expires_at),
        "resolved_at": iso(r.resolved_at),
    }


async def _votes(db: AsyncSession, request_id: str) -> list[ConsensusVote]:
    stmt = (
        select(ConsensusVote)
        .where(ConsensusVote.request_id == request_id)
        .order_by(col(ConsensusVote.id))
    )
    return list((await db.exec(stmt)).all())


async def _request(db: AsyncSession, project_id: int, request_id: str) -> ConsensusRequest:
    r = await db.get(ConsensusRequest, request_id)
    if r is None or r.project_id != project_id:
        raise NotFound(f"no consensus request {request_id!r} in this project")
    return r


async def _resolve(
    tx: ProjectTx, r: ConsensusRequest, status: str, votes: list[ConsensusVote], now: datetime
) -> dict[str, Any]:
    r.status = status
    r.resolved_at = now
    tx.session.add(r)
    view = request_view(r, votes, now)
    await tx.emit(f"consensus.{status}", {"consensus": view})
    return view


async def create(
    ctx: ServiceContext, project: Project, data: ConsensusInput, token: str | None
) -> dict[str, Any]:
    """Open a vote among the other live agents (``consensus.created``, then at once
    ``consensus.rejected`` when there is nobody to approve it)."""
    action = checks.text(
        data.action, "action", max_chars=MAX_ACTION_CHARS, required=True, single_line=True
    )
    subject = checks.text(data.subject, "subject", max_chars=MAX_SUBJECT_CHARS)
    reason = checks.text(data.reason, "reason", max_chars=MAX_REASON_CHARS, required=True)
    timeout = data.timeout_seconds
    if timeout is None:
        timeout = ctx.settings.consensus_default_timeout_seconds
    elif not 1 <= timeout <= ctx.settings.consensus_max_timeout_seconds:
        raise InvalidInput(
            "timeout_seconds", f"must be 1-{ctx.settings.consensus_max_timeout_seconds}"
        )
    assert action is not None and reason is not None and project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await acting_session(tx.session, project, token)
        now = utcnow()
        current = await ctx.projections.current(tx.session, project.id)
        live = await current.live(ctx.liveness, now)
        voters = sorted({s.agent_name for s in live if s.agent_name != session.agent_name})
        r = ConsensusRequest(
            id=checks.new_id("cns"),
            project_id=project.id,
            action=action,
            subject=subject,
            reason=reason,
            requester=session.agent_name,
            requester_session_id=session.id,
            eligible_voters=voters,
            status="pending",
            timeout_seconds=timeout,
            created_at=now,
            expires_at=now + timedelta(seconds=timeout),
        )
        tx.session.add(r)
        view = request_view(r, [], now)
        await tx.emit("consensus.created", {"consensus": view})
        outcome = tally(len(voters), 0, 0)
        if outcome != "pending":
            view = await _resolve(tx, r, outcome, [], now)
    return view


async def vote(
    ctx: ServiceContext,
    project: Project,
    request_id: str,
    choice: str | None,
    token: str | None,
    *,
    comment: str | None = None,
) -> dict[str, Any]:
    """Record the caller's agent's vote; resolve the request when the vote decides it."""
    if choice is None:
        raise InvalidInput("vote", "required: approve or reject")
    if choice not in VOTES:
        raise InvalidInput("vote", "must be approve or reject")
    comment = checks.text(comment, "comment", max_chars=MAX_COMMENT_CHARS)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await acting_session(tx.session, project, token)
        r = await _request(tx.session, project.id, request_id)
        now = utcnow()
        votes = await _votes(tx.session, r.id)
        if r.status == "pending" and r.expires_at <= now:
            # Too late; the expiry job records the expiry (this transaction is refused).
            raise Conflict(
                f"consensus {r.id} expired at {iso(r.expires_at)}",
                consensus_id=r.id,
                status="expired",
            )
        if r.status != "pending":
            raise Conflict(
                f"consensus {r.id} is already {r.status}", consensus_id=r.id, status=r.status
            )
        agent = session.agent_name
        if agent not in (r.eligible_voters or []):
            raise Conflict(
                f"{agent} is not an eligible voter on {r.id} "
                f"(eligible: {', '.join(r.eligible_voters or []) or 'nobody'})",
                consensus_id=r.id,
                eligible_voters=list(r.eligible_voters or []),
            )
        if any(v.agent_name == agent for v in votes):
            raise Conflict(f"{agent} has voted on {r.id} already", consensus_id=r.id)
        ballot = ConsensusVote(
            request_id=r.id, agent_name=agent, vote=choice, comment=comment, created_at=now
        )
        tx.session.add(ballot)
        await tx.session.flush()
        votes.append(ballot)
        view = request_view(r, votes, now)
        await tx.emit(
            "consensus.vote",
            {
                "consensus_id": r.id,
                "agent_name": agent,
                "vote": choice,
                "comment": comment,
                "approvals": view["approvals"],
                "rejections": view["rejections"],
            },
        )
        approvals, rejections = view["approvals"], view["rejections"]
        outcome = tally(len(r.eligible_voters or []), approvals, rejections)
        if outcome != "pending":
            view = await _resolve(tx, r, outcome, votes, now)
    return view


async def get(ctx: ServiceContext, project: Project, request_id: str) -> dict[str, Any]:
    assert project.id is not None
    async with ctx.db.read() as db:
        r = await _request(db, project.id, request_id)
        return request_view(r, await _votes(db, r.id))


async def list_requests(
    ctx: ServiceContext,
    project: Project,
    *,
    status: str | None = None,
    limit: int | None = None,
    offset: int | None = None,
) -> dict[str, Any]:
    """Requests, newest first. ``status=pending`` leaves out those past their time."""
    checks.one_of(status, "status", STATUSES)
    limit, offset = checks.page(limit, offset)
    assert project.id is not None
    now = utcnow()
    conditions: list[Any] = [ConsensusRequest.project_id == project.id]
    if status == "pending":
        conditions += [ConsensusRequest.status == "pending", col(ConsensusRequest.expires_at) > now]
    elif status == "expired":
        conditions.append(
            (ConsensusRequest.status == "expired")
            | ((ConsensusRequest.status == "pending") & (col(ConsensusRequest.expires_at) <= now))
        )
    elif status is not None:
        conditions.append(ConsensusRequest.status == status)
    order = (col(ConsensusRequest.created_at).desc(), col(ConsensusRequest.id))
    async with ctx.db.read() as db:
        rows, total = await queries.page_of(db, ConsensusRequest, conditions, order, limit, offset)
        views = [request_view(r, await _votes(db, r.id), now) for r in rows]
    return {"requests": views, "total": total, "limit": limit, "offset": offset}


async def expire_project_requests(ctx: ServiceContext, project_id: int) -> int:
    async with ctx.project_tx(project_id) as tx:
        now = utcnow()
        stmt = select(ConsensusRequest).where(
            ConsensusRequest.project_id == project_id,
            ConsensusRequest.status == "pending",
            col(ConsensusRequest.expires_at) <= now,
        )
        overdue = (await tx.session.exec(stmt)).all()
        for r in overdue:
            await _resolve(tx, r, "expired", await _votes(tx.session, r.id), now)
        return len(overdue)


async def expire_overdue(ctx: ServiceContext) -> int:
    """The scheduled job: expire pending requests past their time, once each."""
    async with ctx.db.read() as db:
        stmt = (
            select(ConsensusRequest.project_id)
            .where(
                ConsensusRequest.status == "pending", col(ConsensusRequest.expires_at) <= utcnow()
            )
            .distinct()
        )
        project_ids = list((await db.exec(stmt)).all())
    total = 0
    for project_id in project_ids:
        total += await expire_project_requests(ctx, project_id)
    return total
