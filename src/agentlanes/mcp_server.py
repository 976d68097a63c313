"""``agentlanes mcp``: an MCP server over stdio that gives a coding agent agentlanes' tools.

Built on the official ``mcp`` SDK (2.x, ``MCPServer``); install with
``pip install 'agentlanes[mcp]'``. It reads the server URL and key like the CLI
(``AGENTLANES_URL`` / ``AGENTLANES_API_KEY`` or ``.agentlanes.toml``) and shares the
session with the CLI and the git hook: ``checkin`` saves the token under
``.git/agentlanes/``, so the hook knows whose commit it is.

While this process holds a session it heartbeats it, so the session lives as long as the
agent's MCP connection does. Errors come back as tool errors carrying the server's code.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agentlanes.client.aio import AsyncClient
from agentlanes.client.config import LocalConfig, forget_session, load_config, read_session
from agentlanes.client.errors import ApiError, ClientError

T = TypeVar("T")

INSTRUCTIONS = """agentlanes tells coding agents who else is working on this repository.
Call `checkin` before you edit (your name, work area and the file globs you will touch);
read the conflicts it returns and coordinate before touching files others hold. Call
`check_conflicts` with concrete paths before editing a file outside your scope, `status` to
change your scope, and `checkout` with a summary when you are done."""


class Lanes:
    """The agent's side of one MCP connection: a client, its session, its heartbeat."""

    def __init__(self, cfg: LocalConfig) -> None:
        self.cfg = cfg
        session = read_session(cfg)
        self.client = AsyncClient(
            cfg.url,
            cfg.api_key,
            session_token=session["session_token"] if session else None,
            timeout=cfg.timeout,
        )
        self.interval = float((session or {}).get("heartbeat_interval_seconds") or 30)
        self._beat: asyncio.Task[None] | None = None

    async def call(self, pending: Awaitable[T]) -> T:
        """Await a client call; its failure becomes a tool error with the server's code."""
        try:
            return await pending
        except ApiError as exc:
            extra = f" {exc.extra}" if exc.extra else ""
            raise ToolError(f"{exc.code}: {exc.message}{extra}") from None
        except ClientError as exc:
            raise ToolError(str(exc)) from None

    def start_heartbeat(self) -> None:
        self.stop_heartbeat()
        self._beat = asyncio.create_task(self._heartbeat_loop())

    def stop_heartbeat(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.client.heartbeat()
            except ApiError as exc:
                if exc.code in ("SESSION_ENDED", "SESSION_NOT_FOUND"):
                    return
            except ClientError:
                continue  # unreachable for a moment: the TTL leaves room for retries


def build_server(cfg: LocalConfig | None = None) -> MCPServer[Any]:
    """The MCP server with every agentlanes tool (one ``Lanes`` per process)."""
    cfg = cfg or load_config()
    lanes = Lanes(cfg)

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        if lanes.client.session_token:
            lanes.start_heartbeat()
        try:
            yield
        finally:
            lanes.stop_heartbeat()
            await lanes.client.aclose()

    server: MCPServer[Any] = MCPServer(
        "agentlanes", instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING"
    )

    @server.tool()
    async def checkin(
        agent_name: str | None = None,
        declared_area: str | None = None,
        declared_files: list[str] | None = None,
    ) -> dict[str, Any]:
        """Start a session: your name, work area and the file globs you will touch.

        Returns the session and the conflicts with other live sessions (in a block-mode
        project an overlapping check-in is refused). Kept alive while this server runs."""
        from agentlanes.client.config import save_session

        result = await lanes.call(
            lanes.client.checkin(agent_name or cfg.agent_name, declared_area, declared_files)
        )
        save_session(
            cfg,
            {
                "session_id": result.session_id,
                "session_token": result.session_token,
                "agent_name": result.agent_name,
                "declared_area": result.declared_area,
                "declared_files": result.declared_files,
                "heartbeat_interval_seconds": result.heartbeat_interval_seconds,
                "heartbeat_ttl_seconds": result.heartbeat_ttl_seconds,
                "url": cfg.url,
            },
        )
        lanes.interval = float(result.heartbeat_interval_seconds)
        lanes.start_heartbeat()
        data = result.raw()
        data.pop("session_token")  # the model does not need it; it is kept locally
        return data

    @server.tool()
    async def heartbeat() -> dict[str, Any]:
        """Tell the server your session is alive (this server also does it on its own)."""
        return (await lanes.call(lanes.client.heartbeat())).raw()

    @server.tool()
    async def status(
        declared_area: str | None = None,
        declared_files: list[str] | None = None,
        status_text: str | None = None,
    ) -> dict[str, Any]:
        """Change your work area, file globs or status text; returns fresh conflicts."""
        result = await lanes.call(lanes.client.status(declared_area, declared_files, status_text))
        return result.raw()

    @server.tool()
    async def checkout(
        outcome_status: Literal["completed", "partial", "failed"] = "completed",
        work_summary: str | None = None,
        files_touched: list[str] | None = None,
    ) -> dict[str, Any]:
        """End your session with an outcome and a summary of what you did."""
        result = await lanes.call(
            lanes.client.checkout(outcome_status, work_summary, files_touched)
        )
        lanes.stop_heartbeat()
        forget_session(cfg)
        lanes.client.session_token = None
        return result.raw()

    @server.tool()
    async def presence() -> dict[str, Any]:
        """Who is live in the project: each session's agent, area, files and status."""
        return (await lanes.call(lanes.client.presence())).raw()

    @server.tool()
    async def check_conflicts(
        paths: list[str] | None = None,
        patterns: list[str] | None = None,
        declared_area: str | None = None,
    ) -> dict[str, Any]:
        """Would these files (paths relative to the repository root), globs or area collide
        with another live session? Your own session is left out. Changes nothing."""
        return (
            await lanes.call(lanes.client.check_conflicts(paths, patterns, declared_area))
        ).raw()

    @server.tool()
    async def project() -> dict[str, Any]:
        """The project: its conflict mode (warn or block) and heartbeat settings."""
        return (await lanes.call(lanes.client.project())).raw()

    return server


def main(start: Path | None = None) -> None:
    """Serve MCP over stdio until the client closes the connection."""
    build_server(load_config(start)).run("stdio")
