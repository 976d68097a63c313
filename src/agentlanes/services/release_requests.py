"""Asking a holder to let go (SPEC "Waiting for a lane"): ``POST /api/v1/release-requests``
``{to, paths, reason}`` writes ``release.requested``, which the news turns into an item
for the holder; the holder answers by releasing (``lanes release``: a status change that
narrows its claims, so the queue moves at once) or with a message. Either answer is news
to the asker (services/news.py: ``release.answered``, or the message itself)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentlanes.clock import iso, utcnow
from agentlanes.domain.globs import overlap
from agentlanes.errors import InvalidInput, StateConflict
from agentlanes.services import validation
from agentlanes.services.agent_lookup import live_session_named, not_found
from agentlanes.services.context import ServiceContext
from agentlanes.services.session_auth import active_session
from agentlanes.services.views import shown_name
from agentlanes.settings import LIMITS
from agentlanes.store.models import Project


@dataclass(frozen=True)
class AskInput:
    to: str | None = None
    paths: list[str] | None = None
    reason: str | None = None


def held_by(theirs: list[str], paths: list[str]) -> list[str]:
    """The patterns of ``theirs`` that claim some of ``paths`` for certain."""
    return [t for t in theirs if any((o := overlap(t, p)) is not None and o.certain for p in paths)]


async def ask(
    ctx: ServiceContext, project: Project, token: str | None, data: AskInput
) -> dict[str, Any]:
    """Ask the live agent ``to`` (agent name or display name) to release ``paths``."""
    if data.to is None:
        raise InvalidInput("to", "required: the holder's name or display name (claude-1)")
    if not validation.AGENT_NAME_RE.match(data.to):
        raise InvalidInput(
            "to", "must be an agent name or display name (1-64 of A-Z a-z 0-9 . _ -)"
        )
    paths = validation.check_patterns(data.paths, ctx.settings, "paths")
    if not paths:
        raise InvalidInput("paths", "required: the paths you ask them to release")
    if len(paths) > LIMITS.queue_paths:
        raise InvalidInput("paths", f"at most {LIMITS.queue_paths} paths per request")
    reason = validation.check_text(
        data.reason, "reason", max_chars=LIMITS.release_reason_chars, required=True
    )
    assert project.id is not None and reason is not None
    async with ctx.project_tx(project.id) as tx:
        asker = await active_session(tx.db, project, token, within_ttl=True)
        current = await ctx.projections.current(tx.db, project.id)
        live = await current.live(ctx.liveness, utcnow())
        holder = live_session_named(live, data.to)
        if holder is None:
            raise not_found(data.to, live)
        if holder.id == asker.id:
            raise InvalidInput("to", "that is your own session: lanes release PATH… instead")
        held = held_by(holder.declared_files, paths)
        if not held:
            raise StateConflict(
                f"{shown_name(holder)} claims none of these paths (its claims: "
                f"{', '.join(holder.declared_files[:5]) or 'none'})",
                holder={"agent_name": holder.agent_name, "display_name": shown_name(holder)},
            )
        data_out = {
            "from_session_id": asker.id,
            "from_agent_name": asker.agent_name,
            "from_display_name": shown_name(asker),
            "to_session_id": holder.id,
            "to_agent_name": holder.agent_name,
            "to_display_name": shown_name(holder),
            "paths": paths,
            "held": held,
            "reason": reason,
        }
        event = await tx.emit("release.requested", data_out)
    return {**data_out, "offset": event["offset"], "requested_at": iso(utcnow())}
