"""Which agent a Claude Code hook acts for (shared by the guard and the agent's sessions;
standard library only: the guard loads it before every edit)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not loaded at run time (the guard's import budget)
    from collections.abc import Mapping
    from typing import Any


def agent_for(payload: dict[str, Any], env: Mapping[str, str] | None = None) -> str | None:
    """The agent a hook acts for: ``AGENTLANES_AGENT_NAME`` when the agent was started
    with one, else ``claude-<Claude Code's session id>`` (None without either)."""
    environ: Mapping[str, str] = os.environ if env is None else env
    named = (environ.get("AGENTLANES_AGENT_NAME") or "").strip()
    if named:
        return named
    sid = payload.get("session_id")
    if not isinstance(sid, str) or not sid.strip():
        return None
    from agentlanes.domain.names import safe_name

    return safe_name(sid.strip(), "claude-")
