"""``agentlanes mcp``: the MCP server over stdio."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("mcp", help="serve agentlanes' tools to an agent over MCP (stdio)")
    p.add_argument(
        "--tools",
        nargs="+",
        metavar="GROUP",
        default=["core"],
        help="the tools listed from the start: core (the default: check in, status, news, "
        "message, wait, release, check out, more_tools), session, tasks, checkpoints, "
        "inbox, leases, votes, agents, or all; the agent can add the others with the "
        "more_tools tool",
    )
    p.set_defaults(func=serve, json=False)


def serve(args: argparse.Namespace) -> int:
    from agentlanes.cli.errors import EXIT_USAGE, CommandError
    from agentlanes.cli.output import client_errors
    from agentlanes.mcp import toolsets
    from agentlanes.mcp.server import main

    try:
        tools = toolsets.parse(word for arg in args.tools for word in arg.split(","))
    except ValueError as exc:
        raise CommandError(f"--tools: {exc}", EXIT_USAGE) from None
    with client_errors():
        main(tools=tools)
    return 0
