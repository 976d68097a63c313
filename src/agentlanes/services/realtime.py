"""Short-lived browser tokens for the event socket, and the event log over HTTP."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlmodel import col, delete, select

from agentlanes import tokens
from agentlanes.clock import iso, utcnow
from agentlanes.errors import InvalidInput, Unauthorized
from agentlanes.services.context import ServiceContext
from agentlanes.services.open_sockets import key_state
from agentlanes.services.views import event_view
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.models import Project, RealtimeToken


async def issue_token(
    ctx: ServiceContext, project: Project, api_key: str | None = None
) -> dict[str, Any]:
    """A token for ``/api/v1/events?token=``, reusable until it expires (for reconnects).

    It lives no longer than the key that minted it (``api_key``): a replaced key in its
    grace mints tokens that end with the grace, and revoking the key ends them at once."""
    assert project.id is not None
    token = tokens.new_realtime_token()
    now = utcnow()
    expires = now + timedelta(seconds=ctx.settings.realtime_token_ttl_seconds)
    key_hash = tokens.hash_secret(api_key) if api_key else None
    until = key_state(project, key_hash, now).until
    if until is not None:
        expires = min(expires, until)
    async with ctx.db.write() as db:
        await db.exec(delete(RealtimeToken).where(col(RealtimeToken.expires_at) < now))
        db.add(
            RealtimeToken(
                token_hash=tokens.hash_secret(token),
                project_id=project.id,
                expires_at=expires,
                api_key_hash=key_hash,
            )
        )
    return {"token": token, "expires_at": iso(expires)}


async def project_for_realtime_token(ctx: ServiceContext, token: str) -> tuple[Project, str | None]:
    """The project a browser token opens, and the hash of the key that minted it; 401
    for an unknown or expired token, or one whose key no longer opens the project."""
    async with ctx.db.read() as db:
        row = (
            await db.exec(
                select(RealtimeToken).where(RealtimeToken.token_hash == tokens.hash_secret(token))
            )
        ).first()
        if row is None or row.expires_at <= utcnow():
            raise Unauthorized("unknown or expired realtime token")
        project = await db.get(Project, row.project_id)
    if project is None:
        raise Unauthorized("unknown or expired realtime token")
    refused = key_state(project, row.api_key_hash, utcnow()).refused
    if refused:
        raise Unauthorized(f"the key that made this realtime token no longer works: {refused}")
    return project, row.api_key_hash


def resumable(
    *, since: int, epoch: str | None, current_epoch: str, last: int, oldest: int | None
) -> bool:
    """Whether the events after ``since`` can be served as asked (SPEC, Events): ``since``
    of this history (epoch), not newer than the last offset, and not older than the kept
    history."""
    if epoch is not None and epoch != current_epoch:
        return False
    if since > last:
        return False
    if since == last:
        return True
    return oldest is not None and oldest <= since + 1


async def event_log(
    ctx: ServiceContext,
    project: Project,
    *,
    since: int | None,
    limit: int | None,
    epoch: str | None = None,
) -> dict[str, Any]:
    """Events after ``since``. When they cannot be served as asked (``since`` too old,
    newer than the last offset, or of another epoch) the answer says ``recovered: false``
    and starts from the oldest kept event of the current history instead."""
    if since is not None and since < 0:
        raise InvalidInput("since", "must be a non-negative offset")
    if limit is not None and not 1 <= limit <= LIMITS.event_log_limit:
        raise InvalidInput("limit", f"must be 1-{LIMITS.event_log_limit}")
    if epoch is not None and not 1 <= len(epoch) <= 32:
        raise InvalidInput("epoch", "must be 1-32 characters")
    assert project.id is not None
    after = since or 0
    async with ctx.db.read() as db:
        last = await queries.last_offset(db, project.id)
        oldest = await queries.oldest_offset(db, project.id)
        recovered = resumable(
            since=after, epoch=epoch, current_epoch=project.epoch, last=last, oldest=oldest
        )
        if not recovered:
            after = 0
        rows = await queries.events_after(db, project.id, after, limit or 100)
    return {
        "events": [event_view(e) for e in rows],
        "offset": rows[-1].offset if rows else (after if recovered else last),
        "last_offset": last,
        "epoch": project.epoch,
        "recovered": recovered,
    }
