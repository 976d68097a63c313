"""``lanes guard``: the pre-edit hook for coding agents (see ``agentlanes.hooks.guard``)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "guard",
        help="pre-edit hook: reads a PreToolUse tool call on stdin, answers allow/deny JSON",
    )
    p.add_argument(
        "--allow",
        action="store_true",
        help='say "allow" when not denying (skips the editor\'s own permission prompt)',
    )
    p.set_defaults(func=guard, json=False)


def guard(args: argparse.Namespace) -> int:
    from agentlanes.hooks.guard import run

    return run(allow=args.allow)
