"""Session commands: ``checkin``, ``keepalive``, ``status``, ``checkout``.

Each agent's session is kept in ``<git dir>/agentlanes/sessions/<agent>.json`` (never a
tracked file), so several agents in one working tree keep one session each; or the token
comes from ``AGENTLANES_SESSION_TOKEN``. Commands pick the agent with ``--agent``, else
``AGENTLANES_AGENT_NAME`` / ``agent_name``, else the only session there is.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agentlanes.cli.errors import EXIT_NO_SESSION, EXIT_USAGE, CommandError
from agentlanes.cli.output import add_json, client_errors, emit_json, print_conflicts, table

OUTCOMES = ("completed", "partial", "failed")
AGENT_HELP = "which local agent's session (default: the configured one, or the only one)"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("checkin", help="start a session: who you are and what you will touch")
    p.add_argument(
        "--agent", "--name", dest="agent", help="agent name (default: config or made up)"
    )
    p.add_argument("--area", help="work area (another agent with the same area is a conflict)")
    p.add_argument("--files", nargs="+", default=None, metavar="GLOB", help="file globs you claim")
    p.add_argument("--meta", action="append", metavar="KEY=VALUE", help="extra info (repeatable)")
    add_json(p)
    p.set_defaults(func=checkin)

    p = sub.add_parser("keepalive", help="keep the session alive (heartbeats or a socket)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--once", action="store_true", help="send one heartbeat and exit")
    how.add_argument(
        "--background", action="store_true", help="detach and heartbeat until checkout"
    )
    p.add_argument("--socket", action="store_true", help="hold an attached WebSocket instead")
    p.add_argument("--interval", type=float, metavar="S", help="seconds between heartbeats")
    p.add_argument("--agent", help=AGENT_HELP)
    add_json(p)
    p.set_defaults(func=keepalive)

    p = sub.add_parser("status", help="show your session, or change its area, files or text")
    p.add_argument("--area", help="new work area")
    p.add_argument("--files", nargs="+", default=None, metavar="GLOB", help="new file globs")
    p.add_argument("--text", help="a short status line others see")
    p.add_argument("--agent", help=AGENT_HELP)
    add_json(p)
    p.set_defaults(func=status)

    p = sub.add_parser("checkout", help="end your session with an outcome and a summary")
    p.add_argument("--outcome", choices=OUTCOMES, default="completed")
    p.add_argument("--summary", help="what you did (up to 10,000 characters)")
    p.add_argument("--files-touched", nargs="+", default=None, metavar="PATH")
    p.add_argument("--agent", help=AGENT_HELP)
    add_json(p)
    p.set_defaults(func=checkout)


# -- shared ------------------------------------------------------------------------------------


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
        names = [s.get("agent_name") for s in list_sessions(cfg)]
        if len(names) > 1:
            raise CommandError(
                f"{len(names)} agents have sessions here ({', '.join(map(str, names))}): "
                "pick one with --agent (or AGENTLANES_AGENT_NAME)",
                EXIT_USAGE,
                {"error": {"code": "AMBIGUOUS_SESSION", "message": "several local sessions"}},
            )
        message = "no local session: run `lanes checkin` (or set AGENTLANES_SESSION_TOKEN)"
    raise CommandError(
        message, EXIT_NO_SESSION, {"error": {"code": "NO_SESSION", "message": message}}
    )


def marked_files(cfg: Any, files: list[str] | None) -> tuple[list[str] | None, list[str]]:
    """``--files`` as sent: a literal naming an existing directory gets its trailing ``/``."""
    if files is None:
        return None, []
    from agentlanes.client.worktree import mark_directories

    return mark_directories(files, cfg.root)


def _meta(items: list[str] | None) -> dict[str, str] | None:
    if not items:
        return None
    meta = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandError(f"--meta: expected KEY=VALUE, got {item!r}", EXIT_USAGE)
        meta[key] = value
    return meta


# -- checkin -----------------------------------------------------------------------------------


def checkin(args: argparse.Namespace) -> int:
    from agentlanes.client.config import list_sessions, read_session, save_checkin

    cfg = local_config()
    files, marked = marked_files(cfg, args.files)
    with client_errors(), make_client(cfg) as client:
        result = client.checkin(
            agent_name=args.agent or cfg.agent_name,
            declared_area=args.area,
            declared_files=files,
            meta=_meta(args.meta),
        )
    with client_errors():
        # The same agent checking in again replaces its own session (the server ends the
        # old one as superseded); other agents' sessions here have files of their own.
        before = read_session(cfg, env={}, agent=result.agent_name)
        kept = save_checkin(cfg, result)
    replaced = before.get("session_id") if before else None
    others = [
        s.get("agent_name") for s in list_sessions(cfg) if s.get("agent_name") != result.agent_name
    ]
    data = result.raw()
    if args.json:
        # The token is in the answer: an agent outside a git repository has nowhere else
        # to keep it.
        emit_json(
            {
                **data,
                "saved_to": str(kept) if kept else None,
                "directories_marked": marked,
                "replaced_session_id": replaced if replaced != result.session_id else None,
                "other_local_agents": others,
            }
        )
        return 0
    print(f"checked in as {result.agent_name} (session {result.session_id})")
    for pattern in marked:
        print(f"{pattern[:-1]} is a directory here: claimed as {pattern}")
    if replaced and replaced != result.session_id:
        print(f"your earlier session {replaced} here was superseded by this one")
    if others:
        print(f"other agents checked in from this working tree: {', '.join(others)}")
    if kept:
        print(f"session token kept in {kept}")
    else:
        print("not in a git repository: keep the token in the environment:")
        print(f"  export AGENTLANES_SESSION_TOKEN={result.session_token}")
    print(
        f"heartbeat every {result.heartbeat_interval_seconds} s "
        f"(`lanes keepalive --background`), or the session ends after "
        f"{result.heartbeat_ttl_seconds} s"
    )
    if data["conflicts"]:
        print(f"{len(data['conflicts'])} conflicting session(s):")
        print_conflicts(data["conflicts"])
    return 0


# -- keepalive ---------------------------------------------------------------------------------


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
                print(f"session {beat.session_id} alive until {beat.expires_at}")
            return 0
        if not interval:
            interval = float(client.project().heartbeat_interval_seconds)
        _exit_on_sigterm()
        try:
            if args.socket:
                return _hold_socket(client, args)
            return _heartbeat_loop(client, interval, args)
        finally:
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


def _hold_socket(client: Any, args: argparse.Namespace) -> int:
    for frame in client.events(attach=True):
        if frame.type == "attached" and not args.json:
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
    log_path = pid_file.with_suffix(".log")
    log = log_path.open("ab")
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,  # survives the shell (and the agent's tool call) that ran it
        cwd=cfg.root,
    )
    pid_file.write_text(str(proc.pid))
    if args.json:
        emit_json({"pid": proc.pid, "log": str(log_path)})
    else:
        print(f"keepalive running in the background (pid {proc.pid}); `lanes checkout` stops it")
    return 0


def _running_keepalive(pid_file: Path) -> int | None:
    """The pid in the file if that process is still our keepalive (pids get reused)."""
    try:
        pid = int(pid_file.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        try:
            pid = int(pid_file.read_text().strip())
            os.kill(pid, 0)  # no /proc (macOS): trust the pid file if the process exists
            return pid
        except (OSError, ValueError):
            return None
    return pid if b"keepalive" in cmdline else None


def _stop_keepalive(cfg: Any, agent: str | None) -> int | None:
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
    return pid


def _drop_pid_file(cfg: Any, agent: str | None) -> None:
    pid_file = _pid_file(cfg, agent)
    if pid_file is not None and _running_keepalive(pid_file) == os.getpid():
        pid_file.unlink(missing_ok=True)


# -- status ------------------------------------------------------------------------------------


def status(args: argparse.Namespace) -> int:
    from agentlanes.client.config import list_sessions, read_session

    cfg = local_config()
    changing = args.area is not None or args.files is not None or args.text is not None
    with client_errors():
        current = read_session(cfg)
    if not changing and not args.agent and current is None:
        local = list_sessions(cfg)
        if len(local) > 1:
            return _list_local(local, args)
    session = local_session(cfg, args.agent)
    files, marked = marked_files(cfg, args.files)
    with client_errors(), make_client(cfg, session["session_token"]) as client:
        if changing:
            result = client.status(
                declared_area=args.area, declared_files=files, status_text=args.text
            )
            data = {**result.raw(), "directories_marked": marked}
            if session.get("session_id") == result.session_id:
                # The guard reads the declared files from here: keep them current.
                from agentlanes.client.config import save_session

                source = session.pop("source", None)
                session.update(
                    declared_area=result.declared_area, declared_files=result.declared_files
                )
                if source and source != "AGENTLANES_SESSION_TOKEN":
                    save_session(cfg, session)
        else:
            # Showing is not a heartbeat: read presence and find this session in it.
            presence = client.presence()
            mine = [s for s in presence.sessions if s.session_id == session.get("session_id")]
            if session.get("session_id") is None:
                beat = client.heartbeat()  # a token from the environment: ask the server
                mine = [s for s in presence.sessions if s.session_id == beat.session_id]
            if not mine:
                raise CommandError(
                    "your session is not active any more: run `lanes checkin`",
                    EXIT_NO_SESSION,
                    {"error": {"code": "SESSION_ENDED", "message": "session not active"}},
                )
            data = {**mine[0].raw(), "status": "active", "others": len(presence.sessions) - 1}
    if args.json:
        emit_json(data)
        return 0
    for pattern in data.get("directories_marked") or []:
        print(f"{pattern[:-1]} is a directory here: claimed as {pattern}")
    table(
        ("SESSION", "AGENT", "AREA", "FILES", "STATUS TEXT", "EXPIRES"),
        [
            [
                data["session_id"],
                data["agent_name"],
                data.get("declared_area"),
                " ".join(data.get("declared_files") or []),
                data.get("status_text"),
                data.get("expires_at"),
            ]
        ],
    )
    if data.get("conflicts"):
        print(f"{len(data['conflicts'])} conflicting session(s):")
        print_conflicts(data["conflicts"])
    return 0


def _list_local(sessions: list[dict[str, Any]], args: argparse.Namespace) -> int:
    """Several agents keep sessions in this working tree: say who, and how to pick one."""
    rows = [
        {k: s.get(k) for k in ("agent_name", "session_id", "declared_area", "declared_files")}
        for s in sessions
    ]
    if args.json:
        emit_json({"local_sessions": rows})
        return 0
    print(f"{len(rows)} agents keep sessions in this working tree (pick one with --agent):")
    table(
        ("AGENT", "SESSION", "AREA", "FILES"),
        [
            [
                r["agent_name"],
                r["session_id"],
                r["declared_area"],
                " ".join(r["declared_files"] or []),
            ]
            for r in rows
        ],
    )
    return 0


# -- checkout ----------------------------------------------------------------------------------


def checkout(args: argparse.Namespace) -> int:
    from agentlanes.client.config import forget_session
    from agentlanes.client.errors import ApiError

    cfg = local_config()
    session = local_session(cfg, args.agent)
    agent = session.get("agent_name")
    stopped = _stop_keepalive(cfg, agent)
    with client_errors(), make_client(cfg, session["session_token"]) as client:
        try:
            result = client.checkout(
                outcome_status=args.outcome,
                work_summary=args.summary,
                files_touched=args.files_touched,
            )
        except ApiError as exc:
            if agent and exc.code in ("SESSION_ENDED", "SESSION_NOT_FOUND"):
                forget_session(cfg, agent)  # nothing left to end: drop the stale token
            raise
    if agent:
        forget_session(cfg, agent)
    if args.json:
        emit_json({**result.raw(), "keepalive_stopped": stopped})
    else:
        print(f"checked out: session {result.session_id} {result.outcome_status}")
        if stopped:
            print(f"stopped the background keepalive (pid {stopped})")
    return 0
