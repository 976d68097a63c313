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
    p.add_argument(
        "--agent",
        metavar="NAME",
        help="the agent whose hook event is on stdin, answered in its own format: claude "
        "(the default), codex, cursor, gemini, copilot, cline, opencode, windsurf",
    )
    p.add_argument("--event", help="the hook's event, for agents whose input does not name it")
    p.set_defaults(func=guard, json=False)


def guard(args: argparse.Namespace) -> int:
    if args.agent:
        from agentlanes.hooks.adapters import main

        return main(["--agent", args.agent, *(["--event", args.event] if args.event else [])])
    from agentlanes.hooks.adapters.claude import run

    return run(allow=args.allow)
