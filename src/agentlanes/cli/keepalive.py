"""``lanes keepalive``: heartbeats on a clock, or an attached socket, in the foreground or
detached (its pid kept beside the agent's session file, so ``lanes checkout`` stops it).

``--watch-pid PID`` checks the session out and ends it once that process is gone: every
agent's session-start hook starts it (``start_for_agent``) attached and watching the
agent's own process, so the session lives as long as the agent does and ends with it,
however the agent ends (SPEC "Every coding agent": within 5 s). Starting and stopping
the process is ``agentlanes.agent.keepalive``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from typing import Any

from agentlanes.agent.keepalive import (
    drop_own_files,
    pid_file,
    restart_for_agent,
    running_keepalive,
    spawn,
    start_for_agent,
    stop_keepalive,
)
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
        hooks = _serve_hooks(cfg, agent) if args.socket else None
        try:
            if args.socket:
                from agentlanes.cli.news import NewsFile  # the hooks read news from it

                return _hold_socket(client, args, NewsFile(cfg, agent))
            return _heartbeat_loop(client, interval, args)
        finally:
            if hooks is not None:
                hooks.stop()
            if watcher is not None:
                watcher.set()
            drop_own_files(cfg, agent)


def _serve_hooks(cfg: Any, agent: str | None) -> Any:
    """The agent's hooks answered here, warm (``agentlanes.hooks.served``), or None."""
    if agent is None or cfg.state_dir is None:
        return None
    from agentlanes.hooks.served import HookServer

    server = HookServer(cfg.state_dir, agent)
    return server if server.start() else None


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


def _exit_on_sigterm() -> None:
    # SIGTERM (from `lanes checkout`) ends the loop through the finally blocks.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))


def _start_background(cfg: Any, args: argparse.Namespace, agent: str | None) -> int:
    path = pid_file(cfg, agent)
    if path is None:
        raise CommandError(
            "--background needs a git repository and a saved session (it keeps its pid in .git)"
        )
    running = running_keepalive(path)
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
    log_path = path[: -len(".pid")] + ".log"
    pid = spawn(cfg, path, command)
    if args.json:
        emit_json({"pid": pid, "log": str(log_path)})
    else:
        print(f"keepalive running in the background (pid {pid}); `lanes checkout` stops it")
    return 0


__all__ = ["keepalive", "restart_for_agent", "start_for_agent", "stop_keepalive"]
