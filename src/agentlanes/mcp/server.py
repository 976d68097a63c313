"""agentlanes' tools for coding agents over MCP, with the official ``mcp`` SDK (2.x).

Two ways to serve the same tools:

- ``agentlanes mcp``: one agent, over stdio. It reads the server URL and key like the CLI
  (``AGENTLANES_URL`` / ``AGENTLANES_API_KEY`` or ``.agentlanes.toml``) and shares the
  session with the CLI and the git hook: ``checkin`` keeps it in the agent's file under
  ``.git/agentlanes/sessions/``, and literals naming a directory of the working tree are
  sent with their trailing ``/``.
- ``/mcp`` inside ``agentlanes serve`` (streamable HTTP, ``agentlanes.mcp.http``): many
  agents, one MCP session each, authenticated by the project's ``X-API-Key``.

Either way a session this server checked in is heartbeated while the agent stays
connected. Every tool and argument carries a description for the model, the tools that
only read say so (``readOnlyHint``), and errors are phrased for the agent that gets them
(what went wrong and which tool to call next).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from agentlanes import __version__
from agentlanes.client.config import LocalConfig, load_config
from agentlanes.mcp import toolsets
from agentlanes.mcp.coordination_tools import add_coordination_tools
from agentlanes.mcp.lanes import Lanes, Resolve
from agentlanes.mcp.session_tools import add_session_tools
from agentlanes.mcp.tool_server import LanesMCPServer

__all__ = ["build_server", "main", "new_server"]

INSTRUCTIONS = """agentlanes tells coding agents who else is working on this repository.
Call `checkin` before you edit (your name, work area and the file globs you will touch);
read the conflicts it returns and coordinate before touching files others hold. Call
`status` to change your scope, `news` for what concerns you, `wait` for a file another
agent holds, and `checkout` with a summary when you are done; `more_tools` adds tasks,
leases, votes and the rest."""


def build_server(
    cfg: LocalConfig | None = None, tools: tuple[str, ...] = toolsets.DEFAULT
) -> MCPServer[Any]:
    """The stdio server: one agent, the working tree around ``cfg``, seeing the tools of
    ``tools`` (groups, ``mcp/toolsets.py``) until it asks for more."""
    cfg = cfg or load_config()
    lanes = Lanes.local(cfg)
    lanes.tools = tools

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        if lanes.client.session_token:
            lanes.start_heartbeat()
        try:
            yield
        finally:
            await lanes.close()

    async def resolve(_: Context) -> Lanes:
        return lanes

    return new_server(resolve, lifespan)


def new_server(resolve: Resolve, lifespan: Any = None) -> MCPServer[Any]:
    server = LanesMCPServer(  # tool descriptions dedented, the agent's groups listed
        "agentlanes",
        title="agentlanes",
        version=__version__,
        instructions=INSTRUCTIONS,
        website_url="https://github.com/agentlanes/agentlanes",
        lifespan=lifespan,
        log_level="WARNING",
    )
    server.resolve = resolve
    add_session_tools(server, resolve)
    add_coordination_tools(server, resolve)
    return server


def main(start: Path | None = None, tools: tuple[str, ...] = toolsets.DEFAULT) -> None:
    """Serve MCP over stdio until the client closes the connection."""
    build_server(load_config(start), tools).run("stdio")
