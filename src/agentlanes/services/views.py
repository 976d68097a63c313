"""The wire shapes of stored rows (no tokens, no hashes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from agentlanes.clock import iso
from agentlanes.domain.conflicts import Conflict
from agentlanes.domain.edits import CLAIMS, FileEdit
from agentlanes.domain.range_claims import RangeClaim
from agentlanes.services import line_claims
from agentlanes.settings import LIMITS
from agentlanes.store.models import AgentSession, Event, Project, QueueEntry


@dataclass(slots=True)
class LiveFields:
    """A live session's fields that presence shows (``session_view``), as the projection
    keeps them: its ``LiveSession`` adds only bookkeeping of its own. Declared here, with
    the view, so that this module needs nothing of the projection's. The documented shape
    is ``api.answers.SessionView``; tests/unit/test_session_shape.py holds this class,
    ``session_view`` and ``SessionView`` to one list of fields."""

    id: str
    agent_name: str
    # Its short name (``claude-1``); None: a session of an older release, shown under its
    # agent name (``shown_name``). Keyword-only: the fields after it have no default.
    display_name: str | None = field(default=None, kw_only=True)
    declared_area: str | None
    declared_files: list[str]
    status_text: str | None
    meta: dict[str, Any]
    started_at: datetime
    last_heartbeat_at: datetime
    expires_at: datetime
    # What it changed, per file (SPEC "Line-level claims").
    edits: dict[str, FileEdit] = field(default_factory=dict, compare=False, repr=False)
    # The lines it claims before editing them (SPEC "Line-level claims": range claims).
    claims: tuple[RangeClaim, ...] = field(default=(), compare=False, repr=False)


def shown_name(s: AgentSession | LiveFields) -> str:
    """The name people read for a session: its display name, else its agent name."""
    return s.display_name or s.agent_name


def session_view(s: AgentSession | LiveFields) -> dict[str, Any]:
    """A session as presence shows it."""
    return {
        "session_id": s.id,
        "agent_name": s.agent_name,
        "display_name": shown_name(s),
        "declared_area": s.declared_area,
        "declared_files": list(s.declared_files or []),
        "status_text": s.status_text,
        "meta": dict(s.meta or {}),
        "started_at": iso(s.started_at),
        "last_heartbeat_at": iso(s.last_heartbeat_at),
        "expires_at": iso(s.expires_at),
        "edits": line_claims.to_wire(
            line_claims.of_stored(s.edits) if isinstance(s, AgentSession) else s.edits
        ),
        "claims": list(s.claims or [])
        if isinstance(s, AgentSession)
        else line_claims.claims_wire(s.claims),
    }


def conflict_view(c: Conflict) -> dict[str, Any]:
    view = {
        "session_id": c.session_id,
        "agent_name": c.agent_name,
        "declared_area": c.declared_area,
        "overlapping_area": c.overlapping_area,
        "certain": c.certain,
        "overlapping_files": [f._asdict() for f in c.overlapping_files],
    }
    if c.files_truncated:
        view["files_truncated"] = True
    # Ungraded: neither side has edits, a claim overlap (SPEC "Line-level claims").
    view["grade"] = c.grade or CLAIMS
    view["edits"] = list(c.edits)
    if c.claims:  # range claims on either side (SPEC "Line-level claims")
        view["claims"] = list(c.claims)
    return view


def certain_first(found: Sequence[Conflict]) -> list[Conflict]:
    """Certain conflicts first, each group in the order found (oldest session first)."""
    return sorted(found, key=lambda c: not c.certain)


def bounded_conflicts(
    found: Sequence[Conflict], max_conflicts: int, *, start: int = 0
) -> dict[str, Any]:
    """An answer's conflict fields (SPEC "One agent cannot hurt another"): at most
    ``max_conflicts`` of ``found`` from ``start``, certain ones first (each already cut to
    the detector's ``max_files``), ``conflicts_total``, and ``truncated`` when some
    conflict or some overlapping file is left out."""
    ordered = certain_first(found)
    shown = ordered[start : start + max_conflicts]
    return {
        "conflicts": [conflict_view(c) for c in shown],
        "conflicts_total": len(found),
        "truncated": len(shown) < len(found) or any(c.files_truncated for c in shown),
    }


# Overlapping files kept per conflict in an agent.conflict event.
EVENT_FILES_PER_CONFLICT = 3


def conflict_event(
    *,
    session_id: str,
    agent_name: str,
    declared_area: str | None,
    declared_files: Sequence[str],
    blocked: bool,
    conflicts: Sequence[dict[str, Any]],
    max_conflicts: int,
    total: int | None = None,
) -> dict[str, Any]:
    """The data of an ``agent.conflict`` event: the first ``max_conflicts`` conflicts with
    at most 3 overlapping files each, and as many of those as fit the event's size limit
    (long patterns could make 20 of them big); the full list is on the session's
    conflicts endpoint. ``total``: how many conflicts there are when ``conflicts`` is
    already a bounded answer's list."""
    shown = [
        {
            **c,
            "overlapping_files": c["overlapping_files"][:EVENT_FILES_PER_CONFLICT],
            **({"edits": c["edits"][:EVENT_FILES_PER_CONFLICT]} if "edits" in c else {}),
        }
        for c in conflicts[:max_conflicts]
    ]
    data: dict[str, Any] = {
        "session_id": session_id,
        "agent_name": agent_name,
        "declared_area": declared_area,
        "declared_files": list(declared_files),
        "blocked": blocked,
        "conflicts": shown,
        "conflicts_total": len(conflicts) if total is None else total,
        "truncated": False,
    }
    # Room for the envelope (offset, type, ts) around the data.
    budget = LIMITS.event_bytes - 256
    while shown and len(msgspec.json.encode(data)) > budget:
        shown.pop()
    data["truncated"] = (
        len(shown) < data["conflicts_total"]
        or any(
            len(s["overlapping_files"]) < len(c["overlapping_files"])
            for s, c in zip(shown, conflicts, strict=False)
        )
        or any(s.get("files_truncated") for s in shown)
    )
    return data


def entry_view(e: QueueEntry) -> dict[str, Any]:
    """A wait for a lane as events and answers carry it (SPEC "Waiting for a lane")."""
    return {
        "queue_id": e.id,
        "session_id": e.session_id,
        "agent_name": e.agent_name,
        "display_name": e.display_name or e.agent_name,
        "paths": list(e.paths or []),
        "urgency": e.urgency,
        "status": e.status,
        "auto": e.auto,
        "timeout_seconds": e.timeout_seconds,
        "created_at": iso(e.created_at),
        "expires_at": iso(e.expires_at),
        "ended_at": iso(e.ended_at),
    }


def event_view(e: Event) -> dict[str, Any]:
    return {"offset": e.offset, "type": e.type, "ts": iso(e.ts), "data": e.data}


def project_view(p: Project) -> dict[str, Any]:
    return {
        "slug": p.slug,
        "name": p.name,
        "conflict_mode": p.conflict_mode,
        "block_on": p.block_on,
        "line_margin": p.line_margin,
        "heartbeat_interval_seconds": p.heartbeat_interval_seconds,
        "heartbeat_ttl_seconds": p.heartbeat_ttl_seconds,
        "agent_config_keys": list(p.agent_config_keys or []),
        "auto_queue": bool(p.auto_queue),
        "created_at": iso(p.created_at),
    }
