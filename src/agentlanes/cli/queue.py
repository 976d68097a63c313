"""``lanes wait | ask | queue | hotspots``: the ways on after a refusal (SPEC "Waiting for a
lane").

``lanes wait PATH...`` queues the local agent's session for paths others hold and blocks
on the event socket (no polling) until the grant: it prints each change of its place in
line, exits 0 once granted (the paths are in its claims) and 1 at the timeout; Ctrl-C
cancels the wait. ``lanes ask AGENT PATH... --reason TEXT`` asks the holder to let go.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from agentlanes.cli.errors import EXIT_CONFLICT, EXIT_OK
from agentlanes.cli.local import local_config, local_session, make_client
from agentlanes.cli.output import add_json, client_errors, emit_json, table

AGENT_HELP = "which local agent you are (default: the one that started this shell)"
# Frames that may move a wait in line (another wait granted or ended, claims changed).
MOVES = frozenset({"claim.granted", "queue.left", "queue.joined", "agent.status"})


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    w = sub.add_parser(
        "wait",
        help="wait your turn for paths another agent holds (exit 0 granted, 1 timeout)",
    )
    w.add_argument("paths", nargs="+", metavar="PATH", help="paths or patterns to wait for")
    w.add_argument("--timeout", type=int, metavar="S", help="give up after S seconds (600)")
    w.add_argument("--urgency", choices=("low", "normal", "high"), help="default: normal")
    w.add_argument("--agent", help=AGENT_HELP)
    add_json(w)
    w.set_defaults(func=wait)

    a = sub.add_parser("ask", help="ask the agent holding paths to release them")
    a.add_argument("to", metavar="AGENT", help="its name or display name (claude-1)")
    a.add_argument("paths", nargs="+", metavar="PATH")
    a.add_argument("--reason", required=True, help="why you need them (they read it)")
    a.add_argument("--agent", help=AGENT_HELP)
    add_json(a)
    a.set_defaults(func=ask)

    q = sub.add_parser("queue", help="who waits for which paths, in line order")
    add_json(q)
    q.set_defaults(func=show_queue)

    h = sub.add_parser("hotspots", help="the paths most refused and waited for")
    h.add_argument("--days", type=int, default=None, help="how far back (default 7)")
    add_json(h)
    h.set_defaults(func=show_hotspots)


def _holders(holders: list[Any]) -> str:
    return ", ".join(f"{h.display_name or h.agent_name} ({' '.join(h.paths)})" for h in holders)


def wait(args: argparse.Namespace) -> int:
    cfg = local_config()
    session = local_session(cfg, args.agent)
    with client_errors(), make_client(cfg, session["session_token"]) as client:
        result = client.queue_wait(args.paths, timeout_seconds=args.timeout, urgency=args.urgency)
        if result.granted:
            _say(
                args,
                {"granted": True, "queue_id": result.queue_id, "paths": result.paths},
                f"granted: {' '.join(result.paths)} (nothing held them)",
            )
            return EXIT_OK
        print(
            f"queued {result.queue_id}: position {result.position}"
            + (f", held by {_holders(result.holders)}" if result.holders else "")
            + " (Ctrl-C stops waiting)",
            flush=True,
        )
        try:
            return _follow(args, client, result)
        except KeyboardInterrupt:
            client.queue_cancel(result.queue_id)
            print("stopped waiting", flush=True)
            return 130


def _follow(args: argparse.Namespace, client: Any, result: Any) -> int:
    """Read the socket from the wait's own event on: the grant, the end, or a move."""
    me = result.queue_id
    deadline = time.monotonic() + (
        (result.expires_at.timestamp() - time.time()) if result.expires_at else 600
    )
    position = result.position
    while True:
        left = deadline - time.monotonic()
        with client.events(since=result.offset, idle_timeout=max(left, 0) + 2) as stream:
            for frame in stream:
                entry = frame.data.get("entry") or {}
                if frame.type == "claim.granted" and entry.get("queue_id") == me:
                    _say(
                        args,
                        {"granted": True, **frame.data},
                        f"granted: {' '.join(entry.get('paths') or [])} after "
                        f"{frame.data.get('waited_seconds', 0):.0f} s: it is in your claims",
                    )
                    return EXIT_OK
                if frame.type == "queue.left" and entry.get("queue_id") == me:
                    reason = frame.data.get("reason")
                    _say(args, {"granted": False, **frame.data}, f"wait ended: {reason}")
                    return EXIT_CONFLICT
                if frame.type in MOVES and frame.offset and frame.offset > result.offset:
                    waits = client.queue(session_id=result.session_id).waits
                    mine = [w for w in waits if w.queue_id == me]
                    if mine and mine[0].position != position:
                        position = mine[0].position
                        print(
                            f"position {position}"
                            + (f", held by {_holders(mine[0].holders)}" if mine[0].holders else ""),
                            flush=True,
                        )
                if time.monotonic() > deadline + 2:
                    break
        if time.monotonic() > deadline:
            # The server times the wait out (queue.left); past it with no word, say so.
            _say(
                args,
                {"granted": False, "queue_id": me, "reason": "timed_out"},
                "wait timed out: nothing granted",
            )
            return EXIT_CONFLICT


def _say(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    if args.json:
        emit_json(data)
    else:
        print(text, flush=True)


def ask(args: argparse.Namespace) -> int:
    cfg = local_config()
    session = local_session(cfg, args.agent)
    with client_errors(), make_client(cfg, session["session_token"]) as client:
        asked = client.ask(args.to, args.paths, args.reason)
    _say(
        args,
        asked.raw(),
        f"asked {asked.to_display_name or asked.to_agent_name} to release "
        f"{' '.join(asked.held)}: its answer (a release or a message) comes as news "
        "(lanes news)",
    )
    return EXIT_OK


def show_queue(args: argparse.Namespace) -> int:
    with client_errors(), make_client(local_config()) as client:
        listed = client.queue()
    if args.json:
        emit_json(listed.raw())
        return EXIT_OK
    if not listed.waits:
        print("nobody waits")
        return EXIT_OK
    table(
        ("POS", "AGENT", "PATHS", "URGENCY", "HELD BY", "UNTIL"),
        [
            [
                w.position,
                w.display_name or w.agent_name,
                " ".join(w.paths),
                w.urgency,
                _holders(w.holders) or "-",
                w.expires_at.strftime("%H:%M:%S") if w.expires_at else "",
            ]
            for w in listed.waits
        ],
    )
    return EXIT_OK


def show_hotspots(args: argparse.Namespace) -> int:
    with client_errors(), make_client(local_config()) as client:
        spots = client.hotspots(args.days)
    if args.json:
        emit_json(spots.raw())
        return EXIT_OK
    table(
        ("PATH", "REFUSED", "WAITS", "WAITING", "AVG WAIT", "MAX WAIT"),
        [
            [
                s.path,
                s.refused,
                s.waits,
                s.waiting_now,
                "" if s.wait_seconds_avg is None else f"{s.wait_seconds_avg:.1f} s",
                "" if s.wait_seconds_max is None else f"{s.wait_seconds_max:.1f} s",
            ]
            for s in spots.hotspots
        ],
    )
    return EXIT_OK
