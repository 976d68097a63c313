"""What the agents' commands share: the local configuration, a client, the session a
command acts on, and ``--files`` as sent."""

from __future__ import annotations

from typing import Any

from agentlanes.cli.errors import EXIT_NO_SESSION, EXIT_USAGE, CommandError
from agentlanes.cli.output import client_errors


def local_config() -> Any:
    from agentlanes.client.config import load_config

    with client_errors():
        return load_config()


def make_client(cfg: Any, token: str | None = None) -> Any:
    from agentlanes.client.sync import Client

    return Client(cfg.url, cfg.api_key, session_token=token, timeout=cfg.timeout)


def local_session(cfg: Any, agent: str | None = None) -> dict[str, Any]:
    """The session a command acts on; a clear error when there is none or no telling which."""
    from agentlanes.client.config import list_sessions, read_session

    with client_errors():
        session = read_session(cfg, agent=agent)
    if session is not None:
        return session
    agent = agent or cfg.agent_name
    if agent:
        message = f"no local session for agent {agent}: run `lanes checkin --agent {agent}`"
    else:
        names = [str(s.get("agent_name")) for s in list_sessions(cfg)]
        if names:
            # Sessions here, none of them this process's (several agents, or another
            # running agent's only session): say how to name the agent, not "no session".
            from agentlanes.client.identity import how_to_name

            raise CommandError(
                how_to_name(names),
                EXIT_USAGE,
                {"error": {"code": "AMBIGUOUS_SESSION", "message": "several local sessions"}},
            )
        message = "no local session: run `lanes checkin` (or set AGENTLANES_SESSION_TOKEN)"
    raise CommandError(
        message, EXIT_NO_SESSION, {"error": {"code": "NO_SESSION", "message": message}}
    )


def marked_files(cfg: Any, files: list[str] | None) -> tuple[list[str] | None, list[str]]:
    """``--files`` as sent: a literal naming an existing directory gets its trailing ``/``;
    blank values are left out, so ``--files ''`` claims nothing (``declared_files: []``)."""
    if files is None:
        return None, []
    files = [f for f in files if f.strip()]
    if not files:
        return [], []
    from agentlanes.client.worktree import mark_directories

    return mark_directories(files, cfg.root)
