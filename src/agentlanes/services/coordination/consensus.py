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
from agentlanes.errors import InvalidInput, StateConflict
from agentlanes.services import names, validation
from agentlanes.services.context import ServiceContext
from agentlanes.services.expiry import expire_rows
from agentlanes.services.paging import FIRST_PAGE, PageRequest
from agentlanes.services.project_tx import ProjectTx
from agentlanes.services.session_auth import active_session
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.coordination import ConsensusRequest, ConsensusVote
from agentlanes.store.models import Project

STATUSES = ("pending", "approved", "rejected", "expired")
VOTES = ("approve", "reject")


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
    return await queries.get_in_project(
        db, ConsensusRequest, project_id, request_id, "consensus request"
    )


async def _resolve(
    tx: ProjectTx, r: ConsensusRequest, status: str, votes: list[ConsensusVote], now: datetime
) -> dict[str, Any]:
    r.status = status
    r.resolved_at = now
    tx.db.add(r)
    view = request_view(r, votes, now)
    await tx.emit(f"consensus.{status}", {"consensus": view})
    return view


async def create(
    ctx: ServiceContext, project: Project, data: ConsensusInput, token: str | None
) -> dict[str, Any]:
    """Open a vote among the other live agents (``consensus.created``, then at once
    ``consensus.rejected`` when there is nobody to approve it)."""
    action = validation.check_text(
        data.action,
        "action",
        max_chars=LIMITS.consensus_action_chars,
        required=True,
        single_line=True,
    )
    subject = validation.check_text(
        data.subject, "subject", max_chars=LIMITS.consensus_subject_chars
    )
    reason = validation.check_text(
        data.reason, "reason", max_chars=LIMITS.consensus_reason_chars, required=True
    )
    timeout = data.timeout_seconds
    if timeout is None:
        timeout = ctx.settings.consensus_default_timeout_seconds
    elif not 1 <= timeout <= ctx.settings.consensus_max_timeout_seconds:
        raise InvalidInput(
            "timeout_seconds", f"must be 1-{ctx.settings.consensus_max_timeout_seconds}"
        )
    assert action is not None and reason is not None and project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token, within_ttl=True)
        now = utcnow()
        current = await ctx.projections.current(tx.db, project.id)
        live = await current.live(ctx.liveness, now)
        voters = sorted({s.agent_name for s in live if s.agent_name != session.agent_name})
        r = ConsensusRequest(
            id=names.new_id("cns"),
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
        tx.db.add(r)
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
    comment = validation.check_text(comment, "comment", max_chars=LIMITS.consensus_comment_chars)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token, within_ttl=True)
        r = await _request(tx.db, project.id, request_id)
        now = utcnow()
        votes = await _votes(tx.db, r.id)
        if r.status == "pending" and r.expires_at <= now:
            # Too late; the expiry job records the expiry (this transaction is refused).
            raise StateConflict(
                f"consensus {r.id} expired at {iso(r.expires_at)}",
                consensus_id=r.id,
                status="expired",
            )
        if r.status != "pending":
            raise StateConflict(
                f"consensus {r.id} is already {r.status}", consensus_id=r.id, status=r.status
            )
        agent = session.agent_name
        if agent not in (r.eligible_voters or []):
            raise StateConflict(
                f"{agent} is not an eligible voter on {r.id} "
                f"(eligible: {', '.join(r.eligible_voters or []) or 'nobody'})",
                consensus_id=r.id,
                eligible_voters=list(r.eligible_voters or []),
            )
        if any(v.agent_name == agent for v in votes):
            raise StateConflict(f"{agent} has voted on {r.id} already", consensus_id=r.id)
        ballot = ConsensusVote(
            request_id=r.id, agent_name=agent, vote=choice, comment=comment, created_at=now
        )
        tx.db.add(ballot)
        await tx.db.flush()
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
    page: PageRequest = FIRST_PAGE,
) -> dict[str, Any]:
    """Requests, newest first. ``status=pending`` leaves out those past their time."""
    validation.check_choice(status, "status", STATUSES)
    assert project.id is not None
    now = utcnow()
    conditions: list[Any] = [ConsensusRequest.project_id == project.id]
    if status == "pending":
        conditions += [ConsensusRequest.status == "pending", col(ConsensusRequest.expires_at) > now]
    elif status == "expired":
        conditions.append(
            (col(ConsensusRequest.status) == "expired")
            | (
                (col(ConsensusRequest.status) == "pending")
                & (col(ConsensusRequest.expires_at) <= now)
            )
        )
    elif status is not None:
        conditions.append(ConsensusRequest.status == status)
    order = (col(ConsensusRequest.created_at).desc(), col(ConsensusRequest.id))
    async with ctx.db.read() as db:
        found = await page.read(db, ConsensusRequest, conditions, order)
        votes = {r.id: await _votes(db, r.id) for r in found.rows}
    return found.answer("requests", lambda r: request_view(r, votes[r.id], now))


async def _expire(tx: ProjectTx, r: ConsensusRequest, now: datetime) -> None:
    await _resolve(tx, r, "expired", await _votes(tx.db, r.id), now)


async def expire_overdue(ctx: ServiceContext) -> int:
    """The scheduled job: expire pending requests past their time, once each."""
    return await expire_rows(ctx, ConsensusRequest, status="pending", end=_expire)
