"""Read-only views: who is live, and what a scope would collide with."""

from __future__ import annotations

import time
from typing import Any

import msgspec

from agentlanes import tokens
from agentlanes.clock import utcnow
from agentlanes.domain import range_claims
from agentlanes.errors import InvalidInput, SessionEnded, SessionNotFound
from agentlanes.services import line_claims, validation
from agentlanes.services.claim_age import with_claim_times
from agentlanes.services.context import ServiceContext
from agentlanes.services.session_auth import check_token
from agentlanes.services.sessions import live_sessions, search
from agentlanes.services.views import bounded_conflicts, session_view
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.models import AgentSession, Project


async def live_json(ctx: ServiceContext, project: Project) -> tuple[int, bytes]:
    """The offset the live sessions reflect, and those sessions as a JSON array, joined
    from each session's encoding kept in the projection: with 1,000 live sessions this
    is a join, not 1,000 views built and encoded anew."""
    assert project.id is not None
    current, sessions = await live_sessions(ctx, project.id, utcnow())
    return current.offset, b"[" + b",".join([s.json() for s in sessions]) + b"]"


async def presence_json(ctx: ServiceContext, project: Project) -> bytes:
    """``GET /presence`` as JSON bytes (the shape ``presence`` returns)."""
    offset, sessions = await live_json(ctx, project)
    epoch = msgspec.json.encode(project.epoch)
    return b'{"sessions":%s,"offset":%d,"epoch":%s}' % (sessions, offset, epoch)


async def presence(ctx: ServiceContext, project: Project) -> dict[str, Any]:
    """Live sessions, oldest first, and the event offset this snapshot reflects."""
    assert project.id is not None
    # The projection, brought up to the last committed offset: the snapshot reflects
    # exactly that offset (subscribe with since=offset to miss nothing).
    current, sessions = await live_sessions(ctx, project.id, utcnow())
    return {
        "sessions": [session_view(s) for s in sessions],
        "offset": current.offset,
        "epoch": project.epoch,
    }


async def check_conflicts(
    ctx: ServiceContext,
    project: Project,
    *,
    paths: list[str] | None,
    patterns: list[str] | None,
    declared_area: str | None,
    token: str | None,
    edits: list[dict[str, Any]] | None = None,
    claims: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What the given paths / patterns / area would collide with, each conflict graded
    by ``edits`` and ``claims`` (the asker's; by default its session's). Changes nothing."""
    given = line_claims.check_edits(edits, ctx.settings)
    claimed = line_claims.check_claims(claims, ctx.settings)
    started = time.monotonic()
    norm_paths = validation.check_paths(paths, ctx.settings, "paths")
    norm_patterns = await validation.check_patterns_off_loop(patterns, ctx.settings, "patterns")
    spent = time.monotonic() - started
    area = validation.check_area(declared_area)
    assert project.id is not None
    own_id = None
    if token:
        token_hash = tokens.hash_secret(check_token(token))
        own_id = ctx.known_token(project.id, token_hash)
        if own_id is None:
            async with ctx.db.read_conn() as conn:
                row = await queries.session_state(conn, project.id, token_hash)
            if row is None:
                raise SessionNotFound("no session with this token in this project")
            own_id = row.id
    current, live = await live_sessions(ctx, project.id, utcnow())
    own = current.sessions.get(own_id) if own_id else None
    mine = (
        {p: e for p, e in given.items() if e is not None}
        if edits is not None
        else (own.edits if own else {})
    )
    found = await search(
        ctx,
        current,
        live,
        "paths" if norm_paths and not norm_patterns else "patterns",
        spent=spent,
        declared_area=area,
        patterns=norm_patterns,
        paths=norm_paths,
        exclude_session_id=own_id,
        edits=mine,
        margin=project.line_margin,
        # The asker's range claims grade too: its lines of a file are its claim there.
        claims=range_claims.by_path(claimed if claims is not None else own.claims if own else ()),
    )
    answer = bounded_conflicts(found, ctx.settings.answer_max_conflicts)
    # Each overlapping file with when their pattern joined their claims: the guard and
    # the git hook let the older claim stand too.
    answer["conflicts"] = with_claim_times(answer["conflicts"], current.sessions)
    return answer


def _cursor(cursor: str | None) -> int:
    """A page cursor: opaque to clients; here the position in the ordered list."""
    if cursor is None:
        return 0
    # As the document says: 1-9 ASCII digits, nothing around them ('²' is a digit too).
    if not (cursor.isascii() and cursor.isdigit()) or len(cursor) > 9:
        raise InvalidInput("cursor", "must be a next_cursor this endpoint gave")
    return int(cursor)


async def session_conflicts(
    ctx: ServiceContext,
    project: Project,
    session_id: str,
    *,
    cursor: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """The current conflicts of one live session of the project, a page at a time
    (answers and events carry only the first ones): certain ones first, then oldest
    session first; at most ``limit`` (1-500; default, and at most, ``answer_max_conflicts``) from
    ``cursor``, each with at most ``answer_max_files`` overlapping files, and
    ``next_cursor`` (null on the last page). The list is decided anew on each call: a
    conflict that starts or ends between two pages can shift the rest by one."""
    most = ctx.settings.answer_max_conflicts
    if limit is not None and not 1 <= limit <= LIMITS.page_size:
        raise InvalidInput("limit", f"must be 1-{LIMITS.page_size}")
    limit = most if limit is None else min(limit, most)
    start = _cursor(cursor)
    assert project.id is not None
    now = utcnow()
    async with ctx.db.read() as db:
        session = await db.get(AgentSession, session_id)
        if session is None or session.project_id != project.id:
            raise SessionNotFound(f"no session {session_id} in this project")
    current, live = await live_sessions(ctx, project.id, now)
    if session.status != "active":
        raise SessionEnded(session.id, session.status)
    mine = next((s for s in live if s.id == session.id), None)
    if mine is None:
        raise SessionEnded(session.id, "timed_out")
    found = await search(
        ctx,
        current,
        live,
        "session_id",
        declared_area=mine.declared_area,
        patterns=mine.declared_files + mine.claim_paths(),
        exclude_session_id=session.id,
        exclude_agent_name=session.agent_name,
        edits=mine.edits,
        margin=project.line_margin,
        claims=range_claims.by_path(mine.claims),
    )
    page = bounded_conflicts(found, limit, start=start)
    following = start + limit
    page["truncated"] = start > 0 or page["truncated"]
    page["next_cursor"] = str(following) if following < len(found) else None
    return {"session_id": session.id, **page}
