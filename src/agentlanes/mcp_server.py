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
        from agentlanes.client.config import save_checkin

        result = await lanes.call(
            lanes.client.checkin(agent_name or cfg.agent_name, declared_area, declared_files)
        )
        save_checkin(cfg, result)
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

    add_coordination_tools(server, lanes)
    return server


def add_coordination_tools(server: MCPServer[Any], lanes: Lanes) -> None:
    """Tasks, checkpoints, messages, leases, votes and the agent registry as tools."""
    c = lanes.client

    @server.tool()
    async def task_create(
        title: str,
        description: str | None = None,
        priority: int | None = None,
        paths: list[str] | None = None,
        depends_on: list[str] | None = None,
        parent_id: str | None = None,
    ) -> dict[str, Any]:
        """Create a task (priority 0 most urgent … 4; paths are the globs it will touch)."""
        return await lanes.call(
            c.tasks.create(title, description, priority, paths, depends_on, parent_id)
        )

    @server.tool()
    async def tasks_list(
        status: str | None = None, claimed_by: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        """List tasks (filter by status or the agent that claimed them)."""
        return await lanes.call(c.tasks.list(status=status, claimed_by=claimed_by, limit=limit))

    @server.tool()
    async def tasks_ready(limit: int | None = None) -> dict[str, Any]:
        """Tasks you can take now: pending, unblocked, unclaimed, paths free. Most urgent first."""
        return await lanes.call(c.tasks.ready(limit))

    @server.tool()
    async def task_get(task_id: str) -> dict[str, Any]:
        """One task with its notes and what blocks it."""
        return await lanes.call(c.tasks.get(task_id))

    @server.tool()
    async def task_claim(task_id: str) -> dict[str, Any]:
        """Take a task (one at a time per session; fails if someone else holds it)."""
        return await lanes.call(c.tasks.claim(task_id))

    @server.tool()
    async def task_status(
        task_id: str,
        status: Literal["pending", "blocked", "done", "cancelled"],
        note: str | None = None,
    ) -> dict[str, Any]:
        """Move a task you hold: done, blocked, back to pending, or cancelled."""
        return await lanes.call(c.tasks.set_status(task_id, status, note))

    @server.tool()
    async def task_note(task_id: str, body: str) -> dict[str, Any]:
        """Add a note to a task (what you found, what is left)."""
        return await lanes.call(c.tasks.add_note(task_id, body))

    @server.tool()
    async def checkpoint_create(
        name: str, task_ids: list[str], description: str | None = None
    ) -> dict[str, Any]:
        """A named gate (a review, a sign-off) that holds these tasks until it passes."""
        return await lanes.call(c.checkpoints.create(name, task_ids, description))

    @server.tool()
    async def checkpoints_list(status: str | None = None) -> dict[str, Any]:
        """List checkpoints (pending, passed, failed)."""
        return await lanes.call(c.checkpoints.list(status=status))

    @server.tool()
    async def checkpoint_resolve(
        checkpoint_id: str, status: Literal["passed", "failed"], note: str | None = None
    ) -> dict[str, Any]:
        """Pass (unblocks its tasks) or fail a checkpoint."""
        return await lanes.call(c.checkpoints.resolve(checkpoint_id, status, note))

    @server.tool()
    async def message_send(
        to: str, body: str, type: str | None = None, thread_id: str | None = None
    ) -> dict[str, Any]:
        """Send a message to an agent by name, or to "broadcast"."""
        return await lanes.call(c.messages.send(to, body, type, thread_id))

    @server.tool()
    async def inbox(unread: bool | None = None, limit: int | None = None) -> dict[str, Any]:
        """Your messages (direct and broadcast), newest state per message."""
        return await lanes.call(c.messages.inbox(unread=unread, limit=limit))

    @server.tool()
    async def message_read(message_id: int) -> dict[str, Any]:
        """Mark a message read."""
        return await lanes.call(c.messages.read(message_id))

    @server.tool()
    async def message_ack(message_id: int) -> dict[str, Any]:
        """Acknowledge a message (you will act on it)."""
        return await lanes.call(c.messages.ack(message_id))

    @server.tool()
    async def lease_acquire(resource: str, ttl_seconds: int | None = None) -> dict[str, Any]:
        """Hold a resource key exclusively (e.g. "deploy:prod"); returns a fencing token."""
        return await lanes.call(c.leases.acquire(resource, ttl_seconds))

    @server.tool()
    async def leases_list(resource: str | None = None) -> dict[str, Any]:
        """Live leases (optionally of one resource)."""
        return await lanes.call(c.leases.list(resource=resource))

    @server.tool()
    async def lease_renew(lease_id: str, ttl_seconds: int | None = None) -> dict[str, Any]:
        """Extend a lease you hold."""
        return await lanes.call(c.leases.renew(lease_id, ttl_seconds))

    @server.tool()
    async def lease_release(lease_id: str) -> dict[str, Any]:
        """Give a lease back."""
        return await lanes.call(c.leases.release(lease_id))

    @server.tool()
    async def lease_validate(resource: str, fencing_token: int) -> dict[str, Any]:
        """Is this fencing token still the current one for the resource?"""
        return await lanes.call(c.leases.validate(resource, fencing_token))

    @server.tool()
    async def consensus_request(
        action: str, reason: str, subject: str | None = None, timeout_seconds: int | None = None
    ) -> dict[str, Any]:
        """Ask the other live agents to approve an action; a strict majority decides."""
        return await lanes.call(c.consensus.request(action, reason, subject, timeout_seconds))

    @server.tool()
    async def consensus_get(consensus_id: str) -> dict[str, Any]:
        """A vote's state: approvals, rejections, status."""
        return await lanes.call(c.consensus.get(consensus_id))

    @server.tool()
    async def consensus_vote(
        consensus_id: str, vote: Literal["approve", "reject"], comment: str | None = None
    ) -> dict[str, Any]:
        """Vote on another agent's request (once)."""
        return await lanes.call(c.consensus.vote(consensus_id, vote, comment))

    @server.tool()
    async def agent_upsert(
        name: str, role: str | None = None, config: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Register or update an agent's role and config (unknown config keys are dropped)."""
        return await lanes.call(c.agents.upsert(name, role, config))

    @server.tool()
    async def agents_list(role: str | None = None) -> dict[str, Any]:
        """The agent registry."""
        return await lanes.call(c.agents.list(role=role))


def main(start: Path | None = None) -> None:
    """Serve MCP over stdio until the client closes the connection."""
    build_server(load_config(start)).run("stdio")
