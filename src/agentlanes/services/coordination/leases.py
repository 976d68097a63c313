"""Leases: exclusive, expiring holds on any resource key, with fencing tokens.

A grant takes the resource's counter row up by one, so fencing tokens strictly increase per
resource across releases, expiries and restarts. A lease past ``expires_at`` is treated as
expired on every read, and the expiry job records it (``lease.expired``). A session's
leases end with it (``lease.released`` with the session's end reason).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.clock import iso, utcnow
from agentlanes.errors import InvalidInput, LeaseConflict, StateConflict
from agentlanes.services import names
from agentlanes.services.context import ServiceContext
from agentlanes.services.expiry import expire_rows
from agentlanes.services.paging import FIRST_PAGE, PageRequest
from agentlanes.services.project_tx import ProjectTx
from agentlanes.services.session_auth import active_session
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.coordination import Lease, LeaseCounter
from agentlanes.store.models import AgentSession, Project

# Control characters (Unicode category Cc): the one thing a resource key may not hold. A
# regex, not str.isprintable(), so that the OpenAPI document can state the same rule.
RESOURCE_FORBIDDEN = "[\\x00-\\x1f\\x7f-\\x9f]"


def resource_key(value: str | None, field: str = "resource") -> str:
    """1-256 printable characters, taken as sent (no trimming: keys are compared exactly)."""
    if value is None:
        raise InvalidInput(field, "required: a resource key such as deploy:prod")
    if not 1 <= len(value) <= LIMITS.lease_resource_chars:
        raise InvalidInput(field, f"must be 1-{LIMITS.lease_resource_chars} characters")
    if re.search(RESOURCE_FORBIDDEN, value):
        raise InvalidInput(field, "must not contain control characters")
    return value


def _ttl(ctx: ServiceContext, ttl_seconds: int | None) -> int:
    if ttl_seconds is None:
        return ctx.settings.lease_default_seconds
    if not 1 <= ttl_seconds <= ctx.settings.lease_max_seconds:
        raise InvalidInput("ttl_seconds", f"must be 1-{ctx.settings.lease_max_seconds}")
    return ttl_seconds


def lease_view(lease: Lease, now: datetime | None = None) -> dict[str, Any]:
    now = now or utcnow()
    status = lease.status
    if status == "active" and lease.expires_at <= now:
        status = "expired"  # past its time; the job has not recorded it yet
    return {
        "lease_id": lease.id,
        "resource": lease.resource,
        "session_id": lease.session_id,
        "agent_name": lease.agent_name,
        "fencing_token": lease.fencing_token,
        "ttl_seconds": lease.ttl_seconds,
        "status": status,
        "acquired_at": iso(lease.acquired_at),
        "renewed_at": iso(lease.renewed_at),
        "expires_at": iso(lease.expires_at),
        "ended_at": iso(lease.ended_at),
        "end_reason": lease.end_reason,
    }


def _holder(lease: Lease) -> dict[str, Any]:
    return {
        "session_id": lease.session_id,
        "agent_name": lease.agent_name,
        "expires_at": iso(lease.expires_at),
        "lease_id": lease.id,
    }


async def _active_on(db: AsyncSession, project_id: int, resource: str) -> Lease | None:
    stmt = select(Lease).where(
        Lease.project_id == project_id, Lease.resource == resource, Lease.status == "active"
    )
    return (await db.exec(stmt)).first()


async def _end(tx: ProjectTx, lease: Lease, status: str, reason: str, now: datetime) -> None:
    lease.status = status
    lease.ended_at = now
    lease.end_reason = reason
    tx.db.add(lease)
    await tx.db.flush()
    event = "lease.expired" if status == "expired" else "lease.released"
    await tx.emit(event, {"lease": lease_view(lease, now), "reason": reason})


async def _next_token(db: AsyncSession, project_id: int, resource: str) -> int:
    counter = await db.get(LeaseCounter, (project_id, resource))
    if counter is None:
        counter = LeaseCounter(project_id=project_id, resource=resource, last_token=0)
    counter.last_token += 1
    db.add(counter)
    return counter.last_token


async def acquire(
    ctx: ServiceContext,
    project: Project,
    resource: str | None,
    token: str | None,
    *,
    ttl_seconds: int | None = None,
) -> tuple[dict[str, Any], bool]:
    """Grant the caller's session an exclusive lease on ``resource``; return (lease, new).

    Held by another live lease: 409 ``LEASE_CONFLICT`` naming the holder. Held by the same
    session already: that lease is extended and returned (``new`` False, same token)."""
    key = resource_key(resource)
    ttl = _ttl(ctx, ttl_seconds)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token, within_ttl=True)
        now = utcnow()
        current = await _active_on(tx.db, project.id, key)
        if current is not None and current.expires_at <= now:
            await _end(tx, current, "expired", "ttl", now)
            current = None
        if current is not None and current.session_id == session.id:
            current.expires_at = now + timedelta(seconds=ttl)
            current.ttl_seconds = ttl
            current.renewed_at = now
            tx.db.add(current)
            view = lease_view(current, now)
            await tx.emit("lease.renewed", {"lease": view})
            return view, False
        if current is not None:
            # News: lease.free on the first release or expiry after this.
            at = await queries.last_offset(tx.db, project.id)
            ctx.lease_refusals.note(project.id, key, session.id, at)
            raise LeaseConflict(
                f"{key!r} is leased by {current.agent_name} until {iso(current.expires_at)}",
                conflict=True,
                resource=key,
                lease_holder=_holder(current),
            )
        lease = Lease(
            id=names.new_id("lease"),
            project_id=project.id,
            resource=key,
            session_id=session.id,
            agent_name=session.agent_name,
            fencing_token=await _next_token(tx.db, project.id, key),
            ttl_seconds=ttl,
            status="active",
            acquired_at=now,
            expires_at=now + timedelta(seconds=ttl),
        )
        tx.db.add(lease)
        view = lease_view(lease, now)
        await tx.emit("lease.acquired", {"lease": view})
    return view, True


async def _own_active_lease(
    tx: ProjectTx, project: Project, lease_id: str, token: str | None, now: datetime, hint: str
) -> Lease:
    """The caller's lease, still active; an overdue one ends as expired first, and an
    ended one is a 409 ``CONFLICT`` naming its status (``hint`` says what to do instead)."""
    lease = await _own_lease(tx, project, lease_id, token)
    if lease.status == "active" and lease.expires_at <= now:
        await _end(tx, lease, "expired", "ttl", now)
    if lease.status != "active":
        raise StateConflict(
            f"lease {lease.id} has ended ({lease.status}){hint}",
            lease_id=lease.id,
            status=lease.status,
        )
    return lease


async def _own_lease(tx: ProjectTx, project: Project, lease_id: str, token: str | None) -> Lease:
    assert project.id is not None
    session = await active_session(tx.db, project, token, within_ttl=True)
    lease = await queries.get_in_project(tx.db, Lease, project.id, lease_id, "lease")
    if lease.session_id != session.id:
        raise LeaseConflict(
            f"lease {lease.id} belongs to {lease.agent_name}, not to this session",
            conflict=True,
            resource=lease.resource,
            lease_holder=_holder(lease),
        )
    return lease


async def renew(
    ctx: ServiceContext,
    project: Project,
    lease_id: str,
    token: str | None,
    *,
    ttl_seconds: int | None = None,
) -> dict[str, Any]:
    """Extend the caller's active lease by ``ttl_seconds`` (default: its own TTL) from now.
    An ended or expired lease cannot be renewed (409 ``CONFLICT``; acquire again)."""
    if ttl_seconds is not None:
        _ttl(ctx, ttl_seconds)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        now = utcnow()
        lease = await _own_active_lease(tx, project, lease_id, token, now, "; acquire it again")
        ttl = ttl_seconds or lease.ttl_seconds
        lease.ttl_seconds = ttl
        lease.expires_at = now + timedelta(seconds=ttl)
        lease.renewed_at = now
        tx.db.add(lease)
        view = lease_view(lease, now)
        await tx.emit("lease.renewed", {"lease": view})
    return view


async def release(
    ctx: ServiceContext, project: Project, lease_id: str, token: str | None
) -> dict[str, Any]:
    """End the caller's lease now. Releasing an ended lease is a 409 ``CONFLICT``."""
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        now = utcnow()
        lease = await _own_active_lease(tx, project, lease_id, token, now, "")
        await _end(tx, lease, "released", "released", now)
        view = lease_view(lease, now)
    return view


async def list_leases(
    ctx: ServiceContext,
    project: Project,
    *,
    resource: str | None = None,
    agent_name: str | None = None,
    include_ended: bool = False,
    page: PageRequest = FIRST_PAGE,
) -> dict[str, Any]:
    """Live leases (or, with ``include_ended``, every lease), newest first."""
    if resource is not None:
        resource_key(resource)
    assert project.id is not None
    now = utcnow()
    conditions: list[Any] = [Lease.project_id == project.id]
    if not include_ended:
        conditions += [Lease.status == "active", col(Lease.expires_at) > now]
    if resource is not None:
        conditions.append(Lease.resource == resource)
    if agent_name is not None:
        conditions.append(Lease.agent_name == agent_name)
    async with ctx.db.read() as db:
        order = (col(Lease.acquired_at).desc(), col(Lease.id))
        found = await page.read(db, Lease, conditions, order)
    return found.answer("leases", lambda x: lease_view(x, now))


async def validate(
    ctx: ServiceContext, project: Project, resource: str | None, fencing_token: int | None
) -> dict[str, Any]:
    """Is ``fencing_token`` the live grant on ``resource``? A storage system guarding the
    resource asks this before it accepts a write, and refuses stale holders."""
    key = resource_key(resource)
    if fencing_token is None:
        raise InvalidInput("fencing_token", "required: the token of the grant to check")
    if fencing_token < 1:
        raise InvalidInput("fencing_token", "must be a positive integer")
    assert project.id is not None
    now = utcnow()
    async with ctx.db.read() as db:
        current = await _active_on(db, project.id, key)
        if current is not None and current.expires_at <= now:
            current = None
        counter = await db.get(LeaseCounter, (project.id, key))
    latest = counter.last_token if counter else 0
    if current is not None and current.fencing_token == fencing_token:
        reason = "current"
    elif fencing_token > latest:
        reason = "unknown"
    elif current is None:
        reason = "no_active_lease"
    else:
        reason = "superseded"
    return {
        "valid": reason == "current",
        "reason": reason,
        "resource": key,
        "fencing_token": fencing_token,
        "latest_fencing_token": latest,
        "lease": lease_view(current, now) if current else None,
    }


# -- ends that the caller did not ask for -------------------------------------------------


async def release_session_leases(tx: ProjectTx, session: AgentSession, reason: str) -> None:
    """Session-end hook: every lease the session holds ends with it (``lease.released``)."""
    stmt = select(Lease).where(Lease.session_id == session.id, Lease.status == "active")
    now = utcnow()
    for lease in (await tx.db.exec(stmt)).all():
        await _end(tx, lease, "released", f"session_{reason}", now)


async def _expire(tx: ProjectTx, lease: Lease, now: datetime) -> None:
    await _end(tx, lease, "expired", "ttl", now)


async def expire_overdue(ctx: ServiceContext) -> int:
    """The scheduled job: expire overdue leases in every project, once each."""
    return await expire_rows(ctx, Lease, status="active", end=_expire)
