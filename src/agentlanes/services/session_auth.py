"""Who acts: the session behind a session token, read inside the caller's transaction.

Shared by the session use cases (heartbeat, status, checkout) and every coordination
feature (tasks, leases, messages, checkpoints, consensus)."""

from __future__ import annotations

from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes import tokens
from agentlanes.clock import utcnow
from agentlanes.errors import InvalidInput, SessionEnded, SessionNotFound
from agentlanes.store import queries
from agentlanes.store.models import AgentSession, Project


def check_token(token: str | None) -> str:
    """A well-formed session token; a 400 naming ``session_token`` otherwise."""
    if not token:
        raise InvalidInput(
            "session_token", "required: send the X-Session-Token header or a session_token field"
        )
    if not tokens.is_session_token(token):
        raise InvalidInput("session_token", "must be 64 lowercase hexadecimal characters")
    return token


async def active_session(
    db: AsyncSession, project: Project, token: str | None, *, within_ttl: bool = False
) -> AgentSession:
    """The token's active session: 400 if the token is malformed, 404 unknown, 410 ended.

    ``within_ttl``: a session past its TTL counts as ended here (``timed_out``) even
    before the expiry job has run; the job ends it (and releases its claims) within
    ``expiry_check_seconds``. The session use cases leave it off: they ask the liveness
    store, which knows of heartbeats not yet written through."""
    token = check_token(token)
    assert project.id is not None
    session = await queries.session_by_token_hash(db, project.id, tokens.hash_secret(token))
    if session is None:
        raise SessionNotFound("no session with this token in this project")
    if session.status != "active":
        raise SessionEnded(session.id, session.status)
    if within_ttl and session.expires_at <= utcnow():
        raise SessionEnded(session.id, "timed_out")
    return session


def is_live(session: AgentSession | None) -> bool:
    """Whether a session is active and within its TTL right now."""
    return session is not None and session.status == "active" and session.expires_at > utcnow()
