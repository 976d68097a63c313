"""Read-only commands: ``presence`` (a table), ``watch`` (the live stream), ``check PATH...``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from agentlanes.cli.errors import EXIT_CONFLICT, EXIT_USAGE, CommandError
from agentlanes.cli.local import local_config, make_client
from agentlanes.cli.output import add_json, client_errors, emit_json, print_conflicts, table
from agentlanes.client.report import claim_labels
from agentlanes.clock import iso
from agentlanes.domain.words import clean


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("presence", help="who is live in the project (a table)")
    add_json(p)
    p.set_defaults(func=presence)

    p = sub.add_parser("watch", help="the live event stream (reconnects on its own)")
    p.add_argument("--since", type=int, metavar="OFFSET", help="replay events after OFFSET first")
    p.add_argument("--count", type=int, metavar="N", help="stop after N events")
    p.add_argument("--idle-timeout", type=float, metavar="S", help="stop after S quiet seconds")
    add_json(p)
    p.set_defaults(func=watch)

    p = sub.add_parser("check", help="would these paths collide with other live sessions?")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files (relative to here)")
    p.add_argument("--patterns", nargs="+", default=None, metavar="GLOB", help="globs to check")
    p.add_argument("--area", help="a work area to check")
    add_json(p)
    p.set_defaults(func=check)


def presence(args: argparse.Namespace) -> int:
    cfg = local_config()
    with client_errors(), make_client(cfg) as client:
        snap = client.presence()
    if args.json:
        emit_json(snap.raw())
        return 0
    if not snap.sessions:
        print("nobody is checked in")
        return 0
    table(
        ("AGENT", "AREA", "FILES", "STATUS", "LAST HEARTBEAT", "SESSION"),
        [
            [
                s.agent_name,
                s.declared_area,
                # Range claims too (SPEC "Line-level claims"): path#Symbol (lines a-b).
                " ".join([*s.declared_files, *claim_labels(c.raw() for c in s.claims)]),
                s.status_text,
                iso(s.last_heartbeat_at),  # as the server writes it
                s.session_id,
            ]
            for s in snap.sessions
        ],
    )
    return 0


def describe(event: Any) -> str:
    """One readable line for an event frame, cleaned (agentlanes.domain.words): it holds
    other agents' words (names, areas, status texts, patterns)."""
    return clean(_describe(event))


def _describe(event: Any) -> str:
    data = event.data or {}
    extra = event.model_extra or {}
    if event.type == "presence.snapshot":
        names = [str(s.get("agent_name")) for s in data.get("sessions", [])]
        return f"[{event.offset}] snapshot: {len(names)} live ({', '.join(names) or 'nobody'})"
    if event.type == "replay.complete":
        how = "recovered" if extra.get("recovered") else "history lost, fresh snapshot"
        return f"[{event.offset}] replay complete ({how})"
    parts = [f"[{event.offset}]", event.ts.strftime("%H:%M:%S") if event.ts else "", event.type]
    nested = data.get("session")
    session: dict[str, Any] = nested if isinstance(nested, dict) else data
    labels = {
        "agent_name": "agent",
        "declared_area": "area",
        "status_text": "status",
        "outcome_status": "outcome",
    }
    for key, label in labels.items():
        if session.get(key):
            parts.append(f"{label}={session[key]}")
    files = session.get("declared_files")
    if files:
        parts.append("files=" + ",".join(files))
    # Events carry the count (conflicts_total) and, on agent.conflict, a capped list.
    total = data.get("conflicts_total", len(data.get("conflicts") or []))
    if total:
        parts.append(f"conflicts={total}")
    return " ".join(p for p in parts if p)


def watch(args: argparse.Namespace) -> int:
    cfg = local_config()
    seen = 0
    with client_errors(), make_client(cfg) as client:
        for event in client.events(since=args.since, idle_timeout=args.idle_timeout):
            if args.json:
                emit_json(event.raw())
            else:
                print(describe(event))
            sys.stdout.flush()
            if event.offset is not None and event.type not in (
                "presence.snapshot",
                "replay.complete",
            ):
                seen += 1
            if args.count is not None and seen >= args.count:
                break
    return 0


def repo_relative(paths: list[str], root: str | None) -> list[str]:
    """Paths as the server knows them: relative to the repository root, not to here."""
    if root is None:
        return paths
    out = []
    for raw in paths:
        full = Path(os.path.abspath(raw))
        try:
            out.append(full.relative_to(Path(root)).as_posix())
        except ValueError:
            raise CommandError(f"{raw}: outside the repository {root}", EXIT_USAGE) from None
    return out


def check(args: argparse.Namespace) -> int:
    from agentlanes.client.config import read_session

    if not args.paths and not args.patterns and not args.area:
        raise CommandError("give PATH..., --patterns or --area", EXIT_USAGE)
    from agentlanes.client.worktree import mark_directories

    cfg = local_config()
    with client_errors():
        session = read_session(cfg)
    paths = repo_relative(args.paths, cfg.root) if args.paths else []
    # A directory is not a file: it is checked as the pattern claiming what is below it.
    patterns, marked = mark_directories(args.patterns or [], cfg.root)
    folders = [p for p in paths if cfg.root and os.path.isdir(os.path.join(cfg.root, p))]
    paths = [p for p in paths if p not in folders]
    patterns += [p.rstrip("/") + "/" for p in folders]
    marked += [p.rstrip("/") + "/" for p in folders]
    with client_errors(), make_client(cfg, session["session_token"] if session else None) as c:
        result = c.check_conflicts(
            paths=paths or None, patterns=patterns or None, declared_area=args.area
        )
    data = {**result.raw(), "directories_marked": marked}
    if args.json:
        emit_json(data)
    elif data["conflicts"]:
        print_conflicts(data["conflicts"])
    else:
        print("no conflicts")
    return EXIT_CONFLICT if data["conflicts"] else 0
