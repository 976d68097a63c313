"""Which agent a process acts for, in a working tree several agents share (stdlib only).

An agent (Claude Code, say) runs its hooks, its stdio MCP server and its shell commands
(and through them ``git commit`` and the git hook) as processes below its own. So the
agent's process is the common ancestor of everything it runs: its ``SessionStart`` hook
records that process (pid and start time, so a reused pid does not count) in the agent's
session file, and any later process whose ancestry contains it acts as that agent.

- ``agent_process()``: the agent's process, seen from one of its hooks: the nearest
  ancestor that is not a shell (hooks and shell commands run through ``sh -c``), or
  ``AGENTLANES_AGENT_PID`` when set.
- ``session_by_ancestry(sessions)``: of the local sessions, the one whose agent process is
  an ancestor of this process (None when none is).

Linux reads ``/proc``; elsewhere ``ps`` answers (slower, but only where several agents
share a tree and nothing else names the agent).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# What hooks and shell commands run through; never the agent itself.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "busybox"})
MAX_DEPTH = 64


def _proc_stat(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, command name, start time) from ``/proc/PID/stat``; None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    # "PID (comm) S PPID ...": comm may hold spaces and parentheses; it ends at the last ')'.
    left, right = raw.find("("), raw.rfind(")")
    if left < 0 or right < 0:
        return None
    fields = raw[right + 2 :].split()
    if fields[:1] in (["Z"], ["X"]):
        return None  # a zombie (ended, not yet reaped by its parent) runs no more
    try:
        return int(fields[1]), raw[left + 1 : right], fields[19]
    except (IndexError, ValueError):
        return None


def _ps_stat(pid: int) -> tuple[int, str, str] | None:
    import subprocess

    try:
        out = subprocess.run(
            ["ps", "-o", "ppid=,lstart=,comm=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    if len(out) < 7:
        return None
    try:
        return int(out[0]), os.path.basename(out[6]), " ".join(out[1:6])
    except ValueError:
        return None


def process_info(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, command name, start time) of a live process, or None."""
    if pid <= 0:
        return None
    if os.path.isdir("/proc/self"):
        return _proc_stat(pid)
    return _ps_stat(pid)


def is_alive(pid: int, started: str | None) -> bool:
    """The process ``pid`` still runs, and is the same one (same start time, when known)."""
    info = process_info(pid)
    return info is not None and (not started or info[2] == started)


def running_keepalive(pid_path: str, socket: bool = False) -> int | None:
    """The pid in ``pid_path`` (an agent's ``sessions/<agent>.keepalive.pid``) if that
    process is still a keepalive (pids get reused: its command line says so), one holding
    the socket (``--socket``) when ``socket``."""
    try:
        with open(pid_path, encoding="utf-8") as fh:
            pid = int(fh.read().strip())
    except (OSError, ValueError):
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            args = fh.read().split(b"\0")
    except OSError:
        if os.path.isdir("/proc/self"):
            return None  # no such process
        try:  # no /proc (macOS): trust the pid file if the process exists
            os.kill(pid, 0)
        except OSError:
            return None
        return pid
    if not any(b"keepalive" in a for a in args):
        return None
    return pid if not socket or b"--socket" in args else None


def ancestors(pid: int | None = None) -> list[tuple[int, str]]:
    """(pid, start time) of ``pid`` (default: this process) and every parent up to init."""
    chain: list[tuple[int, str]] = []
    here = os.getpid() if pid is None else pid
    while here > 1 and len(chain) < MAX_DEPTH:
        info = process_info(here)
        if info is None:
            break
        chain.append((here, info[2]))
        here = info[0]
    return chain


def agent_process(env: Mapping[str, str] | None = None) -> tuple[int, str] | None:
    """(pid, start time) of the agent that runs this hook: ``AGENTLANES_AGENT_PID``, else
    the nearest ancestor that is not a shell. None when it cannot be told."""
    env = os.environ if env is None else env
    given = (env.get("AGENTLANES_AGENT_PID") or "").strip()
    if given.isdigit():
        info = process_info(int(given))
        return (int(given), info[2]) if info else None
    here = os.getppid()
    for _ in range(MAX_DEPTH):
        info = process_info(here)
        if info is None or here <= 1:
            return None
        name = info[1].rsplit("/", 1)[-1]
        if name not in SHELLS:
            return here, info[2]
        here = info[0]
    return None


def session_by_ancestry(sessions: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The local session whose agent process is this process or one of its ancestors."""
    by_pid: dict[int, list[dict[str, Any]]] = {}
    for s in sessions:
        pid = s.get("agent_pid")
        if isinstance(pid, int) and pid > 1:
            by_pid.setdefault(pid, []).append(s)
    if not by_pid:
        return None
    for pid, started in ancestors():
        found = [s for s in by_pid.get(pid, []) if s.get("agent_started") in (None, "", started)]
        if len(found) == 1:
            return found[0]
        if found:
            return None  # one process runs several agents' hooks: no telling which
    return None


def how_to_name(names: list[str], command: str = "lanes ...") -> str:
    """The advice for a process that cannot tell which of several agents it acts for."""
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    first = names[0] if names else "NAME"
    how = "" if command.startswith("git ") else "pick one with --agent NAME or "
    return (
        f"{len(names)} agent(s) keep sessions in this working tree ({shown}) and this "
        f"process was not started by any of them: {how}name the agent with "
        f"AGENTLANES_AGENT_NAME=NAME, e.g. `AGENTLANES_AGENT_NAME={first} {command}`"
    )
