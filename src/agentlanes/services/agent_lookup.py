"""Which agent a name means: a live session's agent name or display name (``claude-1``),
else nobody (SPEC "Many agents, one working tree"). An agent name wins over another
session's display name that happens to be spelled the same."""

from __future__ import annotations

from collections.abc import Sequence

from agentlanes.errors import AgentNotFound
from agentlanes.services.views import LiveFields, shown_name

# Live agents an AGENT_NOT_FOUND names, at most (the rest are counted).
NAMED_MAX = 50


def live_session_named(live: Sequence[LiveFields], name: str) -> LiveFields | None:
    """The live session ``name`` means: the one with that agent name, else the one with
    that display name."""
    for s in live:
        if s.agent_name == name:
            return s
    for s in live:
        if s.display_name == name:
            return s
    return None


def live_agents(live: Sequence[LiveFields]) -> list[dict[str, str]]:
    """The live agents as an error names them, by display name."""
    return sorted(
        ({"display_name": shown_name(s), "agent_name": s.agent_name} for s in live),
        key=lambda a: (a["display_name"], a["agent_name"]),
    )


def not_found(name: str, live: Sequence[LiveFields], what: str = "agent") -> AgentNotFound:
    """The 404 for ``name``: the live agents named (at most NAMED_MAX, by display name)."""
    agents = live_agents(live)
    shown = ", ".join(a["display_name"] for a in agents[:10])
    more = f" and {len(agents) - 10} more" if len(agents) > 10 else ""
    listed = f"live agents: {shown}{more}" if agents else "no agent is live in this project"
    return AgentNotFound(
        f"no {what} named {name!r} in this project ({listed})",
        live_agents=agents[:NAMED_MAX],
        live_agents_total=len(agents),
    )
