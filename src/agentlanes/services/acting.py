"""Who acts: the live session behind a session token, read inside the caller's transaction."""

from __future__ import annotations

from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes import secrets
from agentlanes.clock import utcnow
from agentlanes.errors import SessionEnded, SessionNotFound
from agentlanes.services.sessions import check_token
from agentlanes.store import queries
from agentlanes.store.models import AgentSession, Project


async def acting_session(db: AsyncSession, project: Project, token: str | None) -> AgentSession:
    """The active, unexpired session of ``token``: 400 if malformed, 404 unknown, 410 ended.

    A session past its TTL counts as ended here even before the expiry job has run; the
    job ends it (and releases its claims) within ``expiry_check_seconds``."""
    token = check_token(token)
    assert project.id is not None
    session = await queries.session_by_token_hash(db, project.id, secrets.hash_secret(token))
    if session is None:
        raise SessionNotFound("no session with this token in this project")
    if session.status != "active":
        raise SessionEnded(session.id, session.status)
    if session.expires_at <= utcnow():
        raise SessionEnded(session.id, "timed_out")
    return session


def is_live(session: AgentSession | None) -> bool:
    """Whether a session is active and within its TTL right now."""
    return session is not None and session.status == "active" and session.expires_at > utcnow()
