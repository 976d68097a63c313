"""``lanes keepalive``: heartbeats on a clock, or an attached socket, in the foreground or
detached (its pid kept beside the agent's session file, so ``lanes checkout`` stops it).

``--watch-pid PID`` checks the session out and ends it once that process is gone: every
agent's session-start hook starts it (``start_for_agent``) attached and watching the
agent's own process, so the session lives as long as the agent does and ends with it,
however the agent ends (SPEC "Every coding agent": within 5 s)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from agentlanes.cli.errors import EXIT_NO_SESSION, CommandError
from agentlanes.cli.local import local_config, local_session, make_client
from agentlanes.cli.output import client_errors, emit_json
from agentlanes.clock import iso

# How often the keepalive looks whether the agent's process still runs.
WATCH_SECONDS = 0.5


def keepalive(args: argparse.Namespace) -> int:
    cfg = local_config()
    session = local_session(cfg, args.agent)
    token = session["session_token"]
    agent = session.get("agent_name")
    if args.background:
        return _start_background(cfg, args, agent)
    interval = args.interval or float(session.get("heartbeat_interval_seconds") or 0)
    with client_errors(), make_client(cfg, token) as client:
        if args.once:
            beat = client.heartbeat()
            if args.json:
                emit_json(beat.raw())
            else:
                print(f"session {beat.session_id} alive until {iso(beat.expires_at)}")
            return 0
        if not interval:
            interval = float(client.project().heartbeat_interval_seconds)
        _exit_on_sigterm()
        watcher = _watch(cfg, agent, args.watch_pid, args.watch_started) if args.watch_pid else None
        try:
            if args.socket:
                from agentlanes.cli.news import NewsFile  # the hooks read news from it

                return _hold_socket(client, args, NewsFile(cfg, agent))
            return _heartbeat_loop(client, interval, args)
        finally:
            if watcher is not None:
                watcher.set()
            _drop_pid_file(cfg, agent)


def _heartbeat_loop(client: Any, interval: float, args: argparse.Namespace) -> int:
    from agentlanes.client.errors import Unreachable

    while True:
        try:
            beat = client.heartbeat()
            if args.json:
                emit_json(beat.raw())
                sys.stdout.flush()
        except Unreachable as exc:
            # The TTL leaves room for a few missed beats: keep trying rather than give up.
            print(f"agentlanes: {exc}; retrying", file=sys.stderr)
        time.sleep(interval)


def _hold_socket(client: Any, args: argparse.Namespace, news: Any = None) -> int:
    for frame in client.events(attach=True, news=news.cursor if news else None):
        if frame.type == "news" and news is not None:
            news.write(frame)
        elif frame.type == "attached" and not args.json:
            print(f"attached: session {frame.model_extra.get('session_id')} lives with this socket")
            sys.stdout.flush()
        elif frame.type == "error":
            error = (frame.model_extra or {}).get("error") or {}
            if error.get("code") in ("SESSION_NOT_FOUND", "SESSION_ENDED"):
                raise CommandError(f"{error['code']}: {error.get('message')}", EXIT_NO_SESSION)
        if args.json and frame.type in ("attached", "error"):
            emit_json(frame.raw())
            sys.stdout.flush()
    return 0


def _watch(cfg: Any, agent: str | None, pid: int, started: str | None) -> threading.Event:
    """Once ``pid`` (the agent's process) is gone, check the agent's session out as its
    session-end hook would (``agent_session.end_session``: the waiting edits sent, the
    files touched, outcome completed), then end this process (as SIGTERM would: through
    the finally blocks). Agents that end without a session-end hook (killed, or with no
    such event) are so checked out within about a second of their end, not a TTL later.

    The watcher is not a daemon thread: a SIGTERM arriving mid-check-out (the agent's own
    session-end hook stopping this keepalive) ends the main thread, and the interpreter
    then waits for the check-out to finish rather than cut it off. Setting the event it
    returns (the main thread's ``finally``) stops a watcher still polling."""
    from agentlanes.client.identity import is_alive

    done = threading.Event()

    def watch() -> None:
        while is_alive(pid, started):
            if done.wait(WATCH_SECONDS):
                return  # this keepalive is ending for another reason
        print(f"agentlanes: the agent's process {pid} has ended; checking its session out")
        sys.stdout.flush()
        if agent is not None:
            try:
                from agentlanes.hooks.agent_session import end_session

                end_session(cfg, agent, "the agent's process ended")
            except Exception as exc:  # the session then times out on its own
                print(f"agentlanes: check-out failed ({type(exc).__name__}: {exc})")
                sys.stdout.flush()
        if not done.is_set():  # the main thread still holds the socket: end it
            os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="watch-agent").start()
    return done


def start_for_agent(cfg: Any, agent: str, pid: int | None, started: str | None) -> int | None:
    """Start ``lanes keepalive --socket`` for a local agent's session, in the background,
    watching the agent's process ``pid`` when known (the Claude Code hooks call this at
    session start). The pid of the keepalive, or None when one already runs."""
    pid_file = _pid_file(cfg, agent)
    if pid_file is None or _running_keepalive(pid_file):
        return None
    command = [sys.executable, "-m", "agentlanes", "keepalive", "--agent", agent, "--socket"]
    if pid:
        command += ["--watch-pid", str(pid)]
        if started:
            command += ["--watch-started", started]
    return _spawn(cfg, pid_file, command)


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


def _spawn(cfg: Any, pid_file: Path, command: list[str]) -> int:
    log = pid_file.with_suffix(".log").open("ab")
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,  # survives the shell (and the agent's tool call) that ran it
        cwd=cfg.root,
    )
    pid_file.write_text(str(proc.pid))
    return proc.pid


def _exit_on_sigterm() -> None:
    # SIGTERM (from `lanes checkout`) ends the loop through the finally blocks.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))


def _pid_file(cfg: Any, agent: str | None) -> Path | None:
    """``sessions/<agent>.keepalive.pid`` beside the agent's session file."""
    if agent is None:
        return None
    session_file = cfg.session_file(agent)
    return None if session_file is None else Path(session_file).with_suffix(".keepalive.pid")


def _start_background(cfg: Any, args: argparse.Namespace, agent: str | None) -> int:
    pid_file = _pid_file(cfg, agent)
    if pid_file is None:
        raise CommandError(
            "--background needs a git repository and a saved session (it keeps its pid in .git)"
        )
    running = _running_keepalive(pid_file)
    if running:
        print(f"keepalive already running (pid {running})")
        return 0
    command = [sys.executable, "-m", "agentlanes", "keepalive", "--agent", str(agent)]
    if args.socket:
        command.append("--socket")
    if args.interval:
        command += ["--interval", str(args.interval)]
    if args.watch_pid:
        command += ["--watch-pid", str(args.watch_pid)]
        if args.watch_started:
            command += ["--watch-started", args.watch_started]
    log_path = pid_file.with_suffix(".log")
    pid = _spawn(cfg, pid_file, command)
    if args.json:
        emit_json({"pid": pid, "log": str(log_path)})
    else:
        print(f"keepalive running in the background (pid {pid}); `lanes checkout` stops it")
    return 0


def _running_keepalive(pid_file: Path) -> int | None:
    """The pid in the file if that process is still our keepalive (pids get reused)."""
    from agentlanes.hooks.news import running_keepalive

    return running_keepalive(str(pid_file))


def stop_keepalive(cfg: Any, agent: str | None) -> int | None:
    pid_file = _pid_file(cfg, agent)
    if pid_file is None or not pid_file.exists():
        return None
    pid = _running_keepalive(pid_file)
    if pid is not None and pid != os.getpid():
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pid = None
    pid_file.unlink(missing_ok=True)
    _news_file(pid_file).unlink(missing_ok=True)  # nobody writes it any more
    return pid


def _news_file(pid_file: Path) -> Path:
    """``sessions/<agent>.news.jsonl`` (hooks/news.py), beside the pid file."""
    return pid_file.with_name(pid_file.name[: -len(".keepalive.pid")] + ".news.jsonl")


def _drop_pid_file(cfg: Any, agent: str | None) -> None:
    pid_file = _pid_file(cfg, agent)
    if pid_file is not None and _running_keepalive(pid_file) == os.getpid():
        pid_file.unlink(missing_ok=True)
        _news_file(pid_file).unlink(missing_ok=True)
