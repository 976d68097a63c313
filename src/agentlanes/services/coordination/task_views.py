"""How a task, a task note and the agent acting on them look on the wire (answers and the
``task.*`` events)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentlanes.clock import iso
from agentlanes.store.coordination import Task, TaskNote
from agentlanes.store.models import AgentSession


def task_view(t: Task, notes: Sequence[TaskNote] | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "task_id": t.id,
        "title": t.title,
        "description": t.description,
        "priority": t.priority,
        "status": t.status,
        "paths": list(t.paths or []),
        "depends_on": list(t.depends_on or []),
        "parent_id": t.parent_id,
        "created_by": t.created_by,
        "claimed_by": (
            {"session_id": t.claimed_session_id, "agent_name": t.claimed_agent_name}
            if t.claimed_session_id
            else None
        ),
        "claimed_at": iso(t.claimed_at),
        "stale_since": iso(t.stale_since),
        "created_at": iso(t.created_at),
        "updated_at": iso(t.updated_at),
    }
    if notes is not None:
        view["notes"] = [note_view(n) for n in notes]
    return view


def note_view(n: TaskNote) -> dict[str, Any]:
    return {
        "note_id": n.id,
        "task_id": n.task_id,
        "author": n.author,
        "kind": n.kind,
        "body": n.body,
        "created_at": iso(n.created_at),
    }


def actor_view(session: AgentSession | None) -> dict[str, Any]:
    """The session and agent behind a change (both ``None`` for a call without a token)."""
    return {
        "session_id": session.id if session else None,
        "agent_name": session.agent_name if session else None,
    }
