"""Queries the services share."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Row, bindparam, func, insert, update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.errors import NotFound
from agentlanes.store.models import AgentSession, Event, Project, QueueEntry

_Row = TypeVar("_Row")


async def live_sessions(db: AsyncSession, project_id: int, now: datetime) -> Sequence[AgentSession]:
    """Active sessions that are not overdue, oldest first."""
    stmt = (
        select(AgentSession)
        .where(
            AgentSession.project_id == project_id,
            AgentSession.status == "active",
            col(AgentSession.expires_at) > now,
        )
        .order_by(col(AgentSession.started_at), col(AgentSession.id))
    )
    return (await db.exec(stmt)).all()


async def waiting_entries(db: AsyncSession, project_id: int) -> Sequence[QueueEntry]:
    """The project's waits for a lane not ended, oldest first."""
    stmt = (
        select(QueueEntry)
        .where(QueueEntry.project_id == project_id, QueueEntry.status == "waiting")
        .order_by(col(QueueEntry.created_at), col(QueueEntry.id))
    )
    return (await db.exec(stmt)).all()


async def active_sessions(db: AsyncSession, project_id: int) -> Sequence[AgentSession]:
    """Sessions not yet ended, oldest first, including any past their row's expiry (the
    caller counts heartbeats not yet written through, see services/liveness/)."""
    stmt = (
        select(AgentSession)
        .where(AgentSession.project_id == project_id, AgentSession.status == "active")
        .order_by(col(AgentSession.started_at), col(AgentSession.id))
    )
    return (await db.exec(stmt)).all()


_sessions = AgentSession.__table__  # type: ignore[attr-defined]
# Built once: SQLAlchemy caches its compiled form, so the heartbeat pays no ORM work.
_SESSION_STATE = select(_sessions.c.id, _sessions.c.status, _sessions.c.expires_at).where(
    _sessions.c.token_hash == bindparam("token_hash"),
    _sessions.c.project_id == bindparam("project_id"),
)


async def session_state(
    conn: AsyncConnection, project_id: int, token_hash: str
) -> Row[str, str, datetime] | None:
    """``(id, status, expires_at)`` of the session with this token in this project."""
    result = await conn.execute(
        _SESSION_STATE, {"token_hash": token_hash, "project_id": project_id}
    )
    return result.first()


_projects = Project.__table__  # type: ignore[attr-defined]
_LAST_OFFSET = select(_projects.c.last_offset).where(_projects.c.id == bindparam("project_id"))


# The project's row in a write transaction: its lock, its next offset, its offset set.
LOCK_PROJECT = select(_projects.c.id).where(_projects.c.id == bindparam("project_id"))
NEXT_OFFSET = (
    update(_projects)
    .where(_projects.c.id == bindparam("project_id"))
    .values(last_offset=_projects.c.last_offset + 1)
    .returning(_projects.c.last_offset)
)
# Rows written many at a time (a batch of check-ins: services/project_tx.py).
INSERT_SESSIONS = insert(_sessions)
INSERT_EVENTS = insert(Event.__table__)  # type: ignore[attr-defined]
SET_OFFSET = (
    update(_projects)
    .where(_projects.c.id == bindparam("project_id"))
    .values(last_offset=bindparam("offset"))
)


async def last_offset_of(conn: AsyncConnection, project_id: int) -> int:
    """The project's newest event offset, in SQLAlchemy Core (a cached statement)."""
    result = await conn.execute(_LAST_OFFSET, {"project_id": project_id})
    return int(result.scalar_one())


async def session_by_token_hash(
    db: AsyncSession, project_id: int, token_hash: str
) -> AgentSession | None:
    stmt = select(AgentSession).where(
        AgentSession.token_hash == token_hash, AgentSession.project_id == project_id
    )
    return (await db.exec(stmt)).first()


async def events_after(
    db: AsyncSession, project_id: int, after: int, limit: int, upto: int | None = None
) -> Sequence[Event]:
    stmt = select(Event).where(Event.project_id == project_id, col(Event.offset) > after)
    if upto is not None:
        stmt = stmt.where(col(Event.offset) <= upto)
    stmt = stmt.order_by(col(Event.offset)).limit(limit)
    return (await db.exec(stmt)).all()


async def oldest_offset(db: AsyncSession, project_id: int) -> int | None:
    stmt = select(func.min(col(Event.offset))).where(Event.project_id == project_id)
    return (await db.exec(stmt)).one()


async def last_offset(db: AsyncSession, project_id: int) -> int:
    stmt = select(Project.last_offset).where(Project.id == project_id)
    return int((await db.exec(stmt)).one())


async def page_of(
    db: AsyncSession,
    model: type[_Row],
    conditions: Sequence[Any],
    order_by: Sequence[Any],
    limit: int,
    offset: int,
) -> tuple[Sequence[_Row], int]:
    """One page of ``model`` rows matching ``conditions`` in ``order_by`` order, and how
    many rows match in all."""
    total = (await db.exec(select(func.count()).select_from(model).where(*conditions))).one()
    stmt = select(model).where(*conditions).order_by(*order_by).limit(limit).offset(offset)
    return (await db.exec(stmt)).all(), int(total)


async def get_in_project(
    db: AsyncSession, model: type[_Row], project_id: int, row_id: Any, what: str
) -> _Row:
    """The ``model`` row ``row_id`` of this project; 404 naming ``what`` when there is none
    (a row of another project is not there, as far as this project's key can tell)."""
    row = await db.get(model, row_id)
    if row is None or getattr(row, "project_id", None) != project_id:
        raise NotFound(f"no {what} {row_id!r} in this project")
    return row
