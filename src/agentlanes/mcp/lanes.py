"""One agent's side of the MCP server: its client, its session and the heartbeat that
keeps it alive, and its failures phrased for the model."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from agentlanes.client.aio import AsyncClient
from agentlanes.client.config import LocalConfig, read_session
from agentlanes.client.errors import ApiError, ClientError, NoSession
from agentlanes.client.report import conflict_lines
from agentlanes.mcp import toolsets

T = TypeVar("T")
SHOWN_LINES = 10  # of a refusal's conflicts, as the editor guard shows them


def agent_error(exc: ClientError) -> ToolError:
    """A failure as the agent should read it: what happened and what to call next."""
    if isinstance(exc, NoSession):
        return ToolError("You have no agentlanes session: call the `checkin` tool first.")
    if not isinstance(exc, ApiError):
        return ToolError(str(exc))
    if exc.code == "SESSION_ENDED":
        why = exc.extra.get("status")
        return ToolError(
            f"SESSION_ENDED: your session has ended{f' ({why})' if why else ''}; "
            "call `checkin` to start a new one."
        )
    if exc.code == "SESSION_NOT_FOUND":
        return ToolError(
            "SESSION_NOT_FOUND: the server does not know your session; call `checkin`."
        )
    if exc.code == "AGENT_NOT_FOUND":
        return ToolError(f"AGENT_NOT_FOUND: {exc.message}; send to one of them by its name.")
    if exc.code == "VALIDATION_ERROR" and exc.field:
        return ToolError(
            f"VALIDATION_ERROR: {exc.message} (argument `{exc.field}`); fix it and retry."
        )
    if exc.conflicts:
        held = conflict_lines(exc.conflicts, limit=SHOWN_LINES)
        return ToolError(
            f"{exc.code}: {exc.message}. " + "; ".join(held) + ". Pick other files, or "
            "coordinate with them (`message_send`)."
        )
    extra = {k: v for k, v in exc.extra.items() if k != "conflicts"}
    return ToolError(f"{exc.code}: {exc.message}{f' {extra}' if extra else ''}")


class Lanes:
    """One agent's side: a client, its session, and the heartbeat that keeps it alive.

    ``cfg`` is the local configuration when this server sees the working tree (stdio);
    None inside ``agentlanes serve``, where nothing is kept on disk.
    """

    def __init__(self, client: AsyncClient, cfg: LocalConfig | None = None) -> None:
        self.cfg = cfg
        self.client = client
        self.agent: str | None = None
        self.interval = 30.0
        self.last_used = time.monotonic()
        self._beat: asyncio.Task[None] | None = None
        self.news_cursor: str | None = None  # where the `news` tool read up to
        self.tools: tuple[str, ...] = toolsets.DEFAULT  # the tool groups it sees

    @classmethod
    def local(cls, cfg: LocalConfig) -> Lanes:
        session = read_session(cfg)
        lanes = cls(
            AsyncClient(
                cfg.url,
                cfg.api_key,
                session_token=session["session_token"] if session else None,
                timeout=cfg.timeout,
            ),
            cfg,
        )
        if session:
            lanes.agent = session.get("agent_name")
            lanes.interval = float(session.get("heartbeat_interval_seconds") or 30)
        return lanes

    def refresh(self) -> None:
        """Find this agent's session if it has none yet: Claude Code may start this server
        before its ``SessionStart`` hook checks in, and the session file then says which
        agent started this process (``agentlanes.client.identity``)."""
        if self.cfg is None or self.client.session_token:
            return
        session = read_session(self.cfg)
        if session:
            self.client.session_token = session["session_token"]
            self.agent = session.get("agent_name")
            self.interval = float(session.get("heartbeat_interval_seconds") or 30)

    def unnamed(self) -> ToolError | None:
        """Several agents keep sessions here and none of them started this server."""
        from agentlanes.client.config import list_sessions
        from agentlanes.client.identity import how_to_name

        names = [str(s.get("agent_name")) for s in list_sessions(self.cfg)] if self.cfg else []
        if not names or self.agent:
            return None
        return ToolError(
            how_to_name(names, "lanes mcp")
            + '; in .mcp.json: "env": {"AGENTLANES_AGENT_NAME": "..."}'
            + ", or call `checkin` with your agent_name"
        )

    async def call(self, pending: Awaitable[T]) -> T:
        """Await a client call; its failure becomes a tool error phrased for the agent."""
        self.last_used = time.monotonic()
        self.refresh()
        try:
            return await pending
        except NoSession:
            raise self.unnamed() or agent_error(NoSession()) from None
        except ClientError as exc:
            raise agent_error(exc) from None

    def patterns(self, values: list[str] | None) -> tuple[list[str] | None, list[str]]:
        """Literals naming a directory here get their trailing '/' (SPEC: File patterns)."""
        if values is None or self.cfg is None:
            return values, []
        from agentlanes.client.worktree import mark_directories

        return mark_directories(values, self.cfg.root)

    def edits_of(self, files: list[str] | None) -> list[dict[str, Any]] | None:
        """The edits of ``files`` (SPEC "Line-level claims"), read with git in this checkout."""
        if not files:
            return None
        if self.cfg is None or not self.cfg.root:
            raise ToolError(
                "VALIDATION_ERROR: edited_files needs the MCP server that runs in your "
                "checkout (lanes mcp, stdio); here, report edits with `lanes status --edits`"
            )
        from agentlanes.hooks.edits import GitUnreadable, file_edits, repo_paths

        try:
            return file_edits(self.cfg.root, repo_paths(self.cfg.root, files))
        except GitUnreadable as exc:
            raise ToolError(f"VALIDATION_ERROR: edited_files: {exc}") from None

    def keep(self, result: Any) -> None:
        from agentlanes.client.config import save_checkin

        self.agent = result.agent_name
        if self.cfg is not None:
            save_checkin(self.cfg, result)
            from agentlanes.agent.keepalive import restart_for_agent

            restart_for_agent(self.cfg, result.agent_name)  # the agent's keepalive, if any

    def forget(self) -> None:
        from agentlanes.client.config import forget_session

        if self.cfg is not None and self.agent:
            forget_session(self.cfg, self.agent)
        self.client.session_token = None

    def start_heartbeat(self) -> None:
        self.stop_heartbeat()
        self._beat = asyncio.create_task(self._heartbeat_loop())

    def stop_heartbeat(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None

    async def close(self) -> None:
        self.stop_heartbeat()
        await self.client.aclose()

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


# How a tool finds the agent it acts for (one per stdio process; one per MCP session
# over HTTP).
Resolve = Callable[[Context], Awaitable[Lanes]]
