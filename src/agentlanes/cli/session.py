"""Session commands: ``checkin``, ``keepalive`` (its work is in ``keepalive.py``),
``status``, ``checkout``.

Each agent's session is kept in ``<git dir>/agentlanes/sessions/<agent>.json`` (never a
tracked file), so several agents in one working tree keep one session each; or the token
comes from ``AGENTLANES_SESSION_TOKEN``. Commands pick the agent with ``--agent``, else
``AGENTLANES_AGENT_NAME`` / ``agent_name``, else the only session there is.
"""

from __future__ import annotations

import argparse
from typing import Any

from agentlanes.cli.errors import EXIT_NO_SESSION, EXIT_USAGE, CommandError
from agentlanes.cli.keepalive import keepalive, stop_keepalive
from agentlanes.cli.local import local_config, local_session, make_client, marked_files
from agentlanes.cli.output import add_json, client_errors, emit_json, print_conflicts, table
from agentlanes.client.report import claim_labels

OUTCOMES = ("completed", "partial", "failed")
AGENT_HELP = "which local agent's session (default: the configured one, or the only one)"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("checkin", help="start a session: who you are and what you will touch")
    p.add_argument(
        "--agent", "--name", dest="agent", help="agent name (default: config or made up)"
    )
    p.add_argument("--area", help="work area (another agent with the same area is a conflict)")
    p.add_argument(
        "--files",
        nargs="+",
        default=None,
        metavar="GLOB",
        help="file globs you claim; PATH#Symbol (src/auth.py#Login.check) claims only that "
        "symbol's lines on HEAD",
    )
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
    p.add_argument(
        "--watch-pid", type=int, metavar="PID", help="stop once this process (the agent) is gone"
    )
    p.add_argument("--watch-started", help=argparse.SUPPRESS)  # its start time: pids get reused
    p.add_argument("--agent", help=AGENT_HELP)
    add_json(p)
    p.set_defaults(func=keepalive)

    p = sub.add_parser("status", help="show your session, or change its area, files or text")
    p.add_argument("--area", help="new work area")
    p.add_argument("--files", nargs="+", default=None, metavar="GLOB", help="new file globs")
    p.add_argument("--text", help="a short status line others see")
    p.add_argument(
        "--edits",
        nargs="*",
        default=None,
        metavar="FILE",
        help="send these files' changed lines against HEAD (default: the changed files your "
        "session claims, else every changed file)",
    )
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


# -- checkin -----------------------------------------------------------------------------------


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


def _own_name(cfg: Any) -> str | None:
    """The name to check in under: ``AGENTLANES_AGENT_NAME``, else the agent whose process
    started this one (an agent's shell), else ``agent_name`` in .agentlanes.toml."""
    from agentlanes.client.config import list_sessions
    from agentlanes.client.identity import session_by_ancestry

    if cfg.source.get("agent_name") == "AGENTLANES_AGENT_NAME":
        return str(cfg.agent_name)
    found = session_by_ancestry(list_sessions(cfg))
    return str(found["agent_name"]) if found else cfg.agent_name


def checkin(args: argparse.Namespace) -> int:
    from agentlanes.client.config import list_sessions, read_session, save_checkin

    cfg = local_config()
    globs, claims = _symbol_claims(cfg.root, args.files)
    files, marked = marked_files(cfg, globs)
    with client_errors(), make_client(cfg) as client:
        result = client.checkin(
            agent_name=args.agent or _own_name(cfg),
            declared_area=args.area,
            declared_files=files,
            meta=_meta(args.meta),
            claims=claims,
        )
    with client_errors():
        # The same agent checking in again replaces its own session (the server ends the
        # old one as superseded); other agents' sessions here have files of their own.
        before = read_session(cfg, env={}, agent=result.agent_name)
        kept = save_checkin(cfg, result)
    if kept:
        # The answer told the agent who is live and what overlaps: its news (what the
        # hooks put in its context) starts from here, as after a SessionStart.
        from agentlanes.hooks.news import start_cursor

        start_cursor(cfg, result.agent_name, {"session_token": result.session_token})
    replaced = before.get("session_id") if before else None
    if kept and replaced != result.session_id:
        from agentlanes.agent.keepalive import restart_for_agent

        restart_for_agent(cfg, result.agent_name)  # an agent's own keepalive, if it had one
    others = [
        str(s["agent_name"])
        for s in list_sessions(cfg)
        if s.get("agent_name") and s.get("agent_name") != result.agent_name
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
    for c in result.claims:
        print(f"claimed {c.path}#{c.symbol}: {_lines(c.ranges)} (on HEAD)")
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
        _say_conflicts(data)
    return 0


def _symbol_claims(
    root: str | None, files: list[str] | None
) -> tuple[list[str] | None, list[dict[str, Any]] | None]:
    """``--files`` split into globs and ``PATH#Symbol`` range claims (SPEC "Line-level
    claims"); tree-sitter is loaded only when a ``#`` is used."""
    if not files or not any("#" in f for f in files):
        return files, None
    from agentlanes.client.symbols import SymbolError, split_claims

    try:
        return split_claims(root, files)
    except SymbolError as exc:
        raise CommandError(f"lanes checkin --files: {exc}") from None


def _say_conflicts(data: dict[str, Any]) -> None:
    """The conflicts an answer lists; the server lists at most answer_max_conflicts."""
    shown = data["conflicts"]
    total = data.get("conflicts_total") or len(shown)
    print(f"{total} conflicting session(s):")
    print_conflicts(shown)
    if total > len(shown):
        print(
            f"({len(shown)} shown; the rest: GET /api/v1/sessions/{data.get('session_id')}"
            "/conflicts?cursor=…)"
        )


# -- status ------------------------------------------------------------------------------------


def status(args: argparse.Namespace) -> int:
    from agentlanes.client.config import list_sessions, read_session

    cfg = local_config()
    changing = (
        args.area is not None
        or args.files is not None
        or args.text is not None
        or args.edits is not None
    )
    with client_errors():
        current = read_session(cfg)
    if not changing and not args.agent and current is None:
        local = list_sessions(cfg)
        if len(local) > 1:
            local = _still_live(cfg, local)
        if len(local) > 1:
            return _list_local(local, args)
    session = local_session(cfg, args.agent)
    files, marked = marked_files(cfg, args.files)
    with client_errors(), make_client(cfg, session["session_token"]) as client:
        if changing:
            edits = None if args.edits is None else _edits(cfg, client, session, args.edits)
            result = client.status(
                declared_area=args.area,
                declared_files=files,
                status_text=args.text,
                edits=edits,
            )
            data = {**result.raw(), "directories_marked": marked}
            if edits is not None:
                data["edits_sent"] = edits
                if session.get("agent_name"):  # the hooks then do not send them again
                    from agentlanes.hooks.edits import record_sent

                    record_sent(cfg, session["agent_name"], session, edits)
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
    if "edits_sent" in data:
        sent = data["edits_sent"]
        print(f"edits sent for {len(sent)} file(s)" + (":" if sent else ""))
        for e in sent:
            print(f"  {e['path']}: {_lines(e['ranges'])}" + ("" if e["base"] else " (new file)"))
    table(
        ("SESSION", "AGENT", "AREA", "FILES", "STATUS TEXT", "EXPIRES"),
        [
            [
                data["session_id"],
                data["agent_name"],
                data.get("declared_area"),
                " ".join([*(data.get("declared_files") or []), *claim_labels(data.get("claims"))]),
                data.get("status_text"),
                data.get("expires_at"),
            ]
        ],
    )
    if data.get("conflicts"):
        _say_conflicts(data)
    return 0


def _edits(cfg: Any, client: Any, session: dict[str, Any], named: list[str]) -> list[Any]:
    """The edits ``lanes status --edits`` sends: of the files named (relative to here), else
    of the changed files the session claims (else of every changed file), and of the files
    it reported before that have no change left (so the server drops them)."""
    import os

    from agentlanes.client.worktree import changed_files
    from agentlanes.hooks import edits as reports

    if cfg.root is None:
        raise CommandError("lanes status --edits: not inside a git repository", EXIT_USAGE)
    changed: list[str] = []
    if named:
        paths = reports.repo_paths(cfg.root, [os.path.abspath(f) for f in named])
        if not paths:
            raise CommandError("lanes status --edits: none of these files is in this repository",
                               EXIT_USAGE)  # fmt: skip
    else:
        changed = changed_files(cfg.root)[:10_000]
        paths = _claimed(client, session, changed) or changed
        earlier = reports.last_reported(cfg, str(session.get("agent_name") or ""), session)
        paths += [e["path"] for e in earlier or [] if e["path"] not in paths]
    try:
        found = reports.file_edits(cfg.root, paths)
        if session.get("agent_name"):  # in a shared tree, only this agent's own lines
            found = reports.own_edits(cfg, str(session["agent_name"]), found)
    except reports.GitUnreadable as exc:
        raise CommandError(f"lanes status --edits: {exc}", EXIT_USAGE) from None
    if not named:
        found = [e for e in found if e["ranges"] or e["path"] not in changed]
    # The server keeps edits of at most MAX_FILES files per session: the rest stay claims.
    kept, edited = [], 0
    for e in found:
        if e["ranges"]:
            edited += 1
            if edited > reports.MAX_FILES:
                continue
        kept.append(e)
    return kept


def _lines(ranges: list[list[int]]) -> str:
    """``lines 3, 10-11, after 20`` (an insertion replaces no line), or no change left."""
    parts = [f"after {s - 1}" if e < s else (str(s) if s == e else f"{s}-{e}") for s, e in ranges]
    return "lines " + ", ".join(parts) if parts else "no change left"


def _claimed(client: Any, session: dict[str, Any], paths: list[str]) -> list[str]:
    """The paths the session's claims cover (as presence shows them)."""
    from agentlanes.domain.globs.claims import claimed_paths

    mine = [s for s in client.presence().sessions if s.session_id == session.get("session_id")]
    return claimed_paths(mine[0].declared_files if mine else [], paths)


def _still_live(cfg: Any, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The local sessions the server still has live; the files of the others (they timed
    out, or were checked out from elsewhere) are removed, so no command stumbles on them
    (SPEC "Many agents, one working tree"). All of them when the server cannot say."""
    from agentlanes.client.config import forget_session
    from agentlanes.client.errors import ClientError

    try:
        with make_client(cfg) as client:
            live = {s.session_id for s in client.presence().sessions}
    except ClientError:
        return sessions
    kept = []
    for s in sessions:
        if s.get("session_id") in live:
            kept.append(s)
        elif isinstance(s.get("agent_name"), str):
            forget_session(cfg, s["agent_name"])
    return kept


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
    stopped = stop_keepalive(cfg, agent)
    touched = args.files_touched
    if touched is None and agent:
        # The files this agent's tool calls changed, committed or not (its hooks noted
        # them); not git's changes, which in a shared tree are everyone's.
        from agentlanes.hooks.edits import flush
        from agentlanes.hooks.edits import touched as noted

        flush(cfg, agent, session)
        touched = noted(cfg, agent, session)
    with client_errors(), make_client(cfg, session["session_token"]) as client:
        try:
            result = client.checkout(
                outcome_status=args.outcome,
                work_summary=args.summary,
                files_touched=touched,
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
