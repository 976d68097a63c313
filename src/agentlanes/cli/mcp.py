"""``agentlanes mcp``: the MCP server over stdio (needs the ``mcp`` extra)."""

from __future__ import annotations

import argparse

from agentlanes.cli.errors import EXIT_USAGE, CommandError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("mcp", help="serve agentlanes' tools to an agent over MCP (stdio)")
    p.set_defaults(func=serve, json=False)


def serve(args: argparse.Namespace) -> int:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise CommandError(
            "the MCP server needs the mcp package: pip install 'agentlanes[mcp]'", EXIT_USAGE
        ) from None
    from agentlanes.cli.output import client_errors
    from agentlanes.mcp.server import main

    with client_errors():
        main()
    return 0
