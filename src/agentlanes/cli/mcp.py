"""``agentlanes mcp``: the MCP server over stdio."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("mcp", help="serve agentlanes' tools to an agent over MCP (stdio)")
    p.set_defaults(func=serve, json=False)


def serve(args: argparse.Namespace) -> int:
    from agentlanes.cli.output import client_errors
    from agentlanes.mcp.server import main

    with client_errors():
        main()
    return 0
