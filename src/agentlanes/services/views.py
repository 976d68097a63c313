"""The wire shapes of stored rows (no tokens, no hashes)."""

from __future__ import annotations

from typing import Any

from agentlanes.clock import iso
from agentlanes.domain.conflicts import Conflict
from agentlanes.store.models import AgentSession, Event, Project


def session_view(s: AgentSession) -> dict[str, Any]:
    """A session as presence shows it."""
    return {
        "session_id": s.id,
        "agent_name": s.agent_name,
        "declared_area": s.declared_area,
        "declared_files": list(s.declared_files or []),
        "status_text": s.status_text,
        "meta": dict(s.meta or {}),
        "started_at": iso(s.started_at),
        "last_heartbeat_at": iso(s.last_heartbeat_at),
        "expires_at": iso(s.expires_at),
    }


def conflict_view(c: Conflict) -> dict[str, Any]:
    return {
        "session_id": c.session_id,
        "agent_name": c.agent_name,
        "declared_area": c.declared_area,
        "overlapping_area": c.overlapping_area,
        "certain": c.certain,
        "overlapping_files": [f._asdict() for f in c.overlapping_files],
    }


def event_view(e: Event) -> dict[str, Any]:
    return {"offset": e.offset, "type": e.type, "ts": iso(e.ts), "data": e.data}


def project_view(p: Project) -> dict[str, Any]:
    return {
        "slug": p.slug,
        "name": p.name,
        "conflict_mode": p.conflict_mode,
        "heartbeat_interval_seconds": p.heartbeat_interval_seconds,
        "heartbeat_ttl_seconds": p.heartbeat_ttl_seconds,
        "agent_config_keys": list(p.agent_config_keys or []),
        "created_at": iso(p.created_at),
    }
