"""Which agents live in this working tree: the local sessions under its git directory
(``sessions/<agent>.json``, see ``client/config.py``) whose agent still runs.

A working tree is *shared* when another live agent keeps a session in it: then each
agent's edits are the lines its own tool calls changed (``agent/ledger.py``), never the
tree's ``git diff``. A linked worktree has its own git directory, so its agents are its
own. Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentlanes.client.config import LocalConfig


def is_live(session: dict[str, Any]) -> bool:
    """A local session whose agent process still runs; one that recorded no process
    (``lanes checkin`` from a terminal) counts as live: nothing says it is not."""
    pid = session.get("agent_pid")
    if not isinstance(pid, int):
        return True
    from agentlanes.client.identity import is_alive

    return is_alive(pid, session.get("agent_started"))


def live_agents(cfg: LocalConfig) -> set[str]:
    """The names of the live agents with a session in this working tree."""
    from agentlanes.client.config import list_sessions

    return {
        str(s["agent_name"])
        for s in list_sessions(cfg)
        if isinstance(s.get("agent_name"), str) and is_live(s)
    }


def others(cfg: LocalConfig, agent: str | None) -> set[str]:
    """The live agents of this working tree other than ``agent``."""
    return live_agents(cfg) - {agent} if agent else live_agents(cfg)


def ledger_of(cfg: LocalConfig) -> Any:
    """The working tree's ledger (``agent/ledger.py``), or None outside a repository."""
    if cfg.root is None or cfg.state_dir is None:
        return None
    from agentlanes.agent.ledger import Ledger

    return Ledger(cfg.state_dir, cfg.root)
