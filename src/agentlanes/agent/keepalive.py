"""The keepalive process of an agent's session: where its pid is kept, whether it runs,
starting it (watching the agent's process) and stopping it.

The process itself is ``lanes keepalive`` (``agentlanes.cli.keepalive``): it holds the
session's socket, writes the agent's news locally, and checks the session out once the
agent's process ends. Session-start hooks start it; check-outs stop it. Standard library
only (the hooks import this).
"""

from __future__ import annotations

import os
import signal
import sys

from agentlanes.client.identity import running_keepalive

__all__ = ["running_keepalive"]  # hooks/news.py and the CLI ask it here

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PID_SUFFIX = ".keepalive.pid"


def pid_file(cfg: Any, agent: str | None) -> str | None:
    """``sessions/<agent>.keepalive.pid`` beside the agent's session file."""
    if agent is None:
        return None
    session_file = cfg.session_file(agent)
    return None if session_file is None else session_file[: -len(".json")] + PID_SUFFIX


def news_file(pid_path: str) -> str:
    """``sessions/<agent>.news.jsonl`` (hooks/news.py), beside the pid file."""
    return pid_path[: -len(PID_SUFFIX)] + ".news.jsonl"


def start_for_agent(cfg: Any, agent: str, pid: int | None, started: str | None) -> int | None:
    """Start ``lanes keepalive --socket`` for a local agent's session, in the background,
    watching the agent's process ``pid`` when known (session-start hooks call this). The
    pid of the keepalive, or None when one already runs."""
    path = pid_file(cfg, agent)
    if path is None or running_keepalive(path):
        return None
    command = [sys.executable, "-m", "agentlanes", "keepalive", "--agent", agent, "--socket"]
    if pid:
        command += ["--watch-pid", str(pid)]
        if started:
            command += ["--watch-started", started]
    return spawn(cfg, path, command)


def restart_for_agent(cfg: Any, agent: str) -> int | None:
    """After a new check-in by an agent whose session start recorded its process (its MCP
    server's ``checkin``, ``lanes checkin`` from its shell): the keepalive holding the old
    session is stopped and one for the new session starts, watching the same process."""
    from agentlanes.client.config import read_session

    session = read_session(cfg, {}, agent=agent) or {}
    pid = session.get("agent_pid")
    if not isinstance(pid, int):
        return None
    stop_keepalive(cfg, agent)
    return start_for_agent(cfg, agent, pid, session.get("agent_started"))


def spawn(cfg: Any, path: str, command: list[str]) -> int:
    """Run ``command`` detached (its own process session: it survives the shell, and the
    agent's tool call, that started it), logging beside ``path``, its pid written there."""
    import subprocess

    from agentlanes.client.private_files import private_open

    log_path = path[: -len(".pid")] + ".log"
    with os.fdopen(private_open(log_path, "ab"), "ab") as log:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            cwd=cfg.root,
        )
    with os.fdopen(private_open(path, "w"), "w", encoding="utf-8") as fh:
        fh.write(str(proc.pid))
    return proc.pid


def stop_keepalive(cfg: Any, agent: str | None) -> int | None:
    """Stop the agent's keepalive (SIGTERM; not this process itself) and drop its files;
    its pid, or None when none ran."""
    path = pid_file(cfg, agent)
    if path is None or not os.path.exists(path):
        return None
    pid = running_keepalive(path)
    if pid is not None and pid != os.getpid():
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pid = None
    _unlink(path)
    _unlink(news_file(path))  # nobody writes it any more
    return pid


def drop_own_files(cfg: Any, agent: str | None) -> None:
    """The keepalive ending: its pid file and news file go, if they are still its own."""
    path = pid_file(cfg, agent)
    if path is not None and running_keepalive(path) == os.getpid():
        _unlink(path)
        _unlink(news_file(path))


def _unlink(path: str) -> None:
    try:  # noqa: SIM105 - contextlib is one more import on every hook
        os.unlink(path)
    except OSError:
        pass
