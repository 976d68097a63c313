"""The MCP tools inside ``agentlanes serve``: streamable HTTP at ``/mcp``.

The official SDK's session manager (``StreamableHTTPSessionManager``, run in the app's
lifespan) serves the same tools as ``agentlanes mcp`` (``agentlanes.mcp.server``), so one
server serves many agents. Each request must carry the project's ``X-API-Key``; without a
valid one the answer is 401 with the API's error body, before any MCP handling. An MCP
session belongs to the project that opened it (the SDK answers 404 to a request for it
with another project's key).

Each MCP session is one agent: it gets its own client, which calls this very application
in process (``httpx.ASGITransport``: no socket, the same validation, errors and events as
the HTTP API), with that agent's session token once it has checked in. This process
heartbeats the session while the MCP session lasts; when the MCP session ends (the
client's DELETE, or the SDK's idle timeout of 30 minutes) the heartbeat stops and the
agentlanes session runs out its TTL, as when a stdio server's process exits.

Sessions are what make this work, so ``/mcp`` speaks the protocol versions with an
``initialize`` handshake and ``Mcp-Session-Id`` (2024-11-05 to 2025-11-25). A request
in the sessionless era (an ``MCP-Protocol-Version`` header of 2026 or later) gets a 400,
on which the SDK's clients fall back to the handshake; a tool call without a session is
refused rather than sharing one agent between clients.

Nothing here sees a working tree, so nothing is written to disk and patterns are sent as
given. Without the ``mcp`` package ``/mcp`` answers 503 with a message saying so.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from litestar import Litestar
from litestar.handlers import asgi
from litestar.types import Receive, Scope, Send

from agentlanes.errors import AgentlanesError
from agentlanes.services.projects import project_for_key
from agentlanes.settings import Settings

log = logging.getLogger("agentlanes.mcp")
PATH = "/mcp"


async def _send_error(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _send_jsonrpc_error(send: Send, message: str) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class McpEndpoint:
    """``/mcp``: authentication by project key, then the SDK's session manager."""

    def __init__(self, settings: Settings) -> None:
        from mcp.server.transport_security import TransportSecuritySettings
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        from agentlanes.mcp.server import new_server

        self.server = new_server(self._lanes_for)
        # Builds the SDK's session manager (its routes are not used: we mount the manager).
        # DNS-rebinding protection checks Host/Origin for cookie-less browsers on
        # localhost; every request here carries the project key instead, and the server
        # may be reached under any host name.
        self.server.streamable_http_app(
            streamable_http_path=PATH,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=settings.max_body_bytes,
        )
        self.manager = self.server.session_manager
        self.app: Litestar | None = None
        self.agents: dict[str, Any] = {}  # MCP session id -> Lanes
        # The protocol versions with an initialize handshake and sessions.
        self.handshake_versions = tuple(HANDSHAKE_PROTOCOL_VERSIONS)

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        self.app = app
        async with self.manager.run():
            try:
                yield
            finally:
                for sid in list(self.agents):
                    await self._drop(sid)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        assert self.app is not None
        key = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-api-key"), None)
        try:
            project = await project_for_key(self.app.state.ctx, key)
        except AgentlanesError as exc:
            await _send_error(send, exc.status_code, exc.code, str(exc))
            return
        version = next(
            (v.decode("latin-1") for k, v in scope["headers"] if k == b"mcp-protocol-version"),
            None,
        )
        if version is not None and version not in self.handshake_versions:
            # Each agent needs its own session here, which only the handshake era has
            # (Mcp-Session-Id). A 4xx makes an SDK client fall back to `initialize`.
            await _send_jsonrpc_error(
                send,
                f"MCP-Protocol-Version {version} is not served at /mcp: agentlanes keeps one "
                f"session per agent, so connect with initialize "
                f"({', '.join(self.handshake_versions)})",
            )
            return
        # The SDK ties each MCP session to the identity that opened it.
        scope["user"] = AuthenticatedUser(  # type: ignore[typeddict-unknown-key]
            AccessToken(token="", client_id=f"project:{project.id}", scopes=[])
        )
        await self.manager.handle_request(scope, receive, send)  # type: ignore[arg-type]

    async def _lanes_for(self, ctx: Any) -> Any:
        """The agent behind this tool call: one per MCP session, made on its first call."""
        from mcp.server.mcpserver.exceptions import ToolError

        from agentlanes.mcp.lanes import Lanes

        request = ctx.request_context.request
        headers = request.headers if request is not None else {}
        sid = headers.get("mcp-session-id")
        if not sid:  # never share one agent's session between clients
            raise ToolError("this server needs an MCP session: connect with initialize first")
        lanes = self.agents.get(sid)
        if lanes is None:
            assert self.app is not None
            lanes = Lanes(in_process_client(self.app, headers.get("x-api-key")))
            self.agents[sid] = lanes
            # The SDK unwinds a connection's exit stack when its MCP session ends. The
            # connection is not public on the tool's context yet, hence getattr.
            connection = getattr(ctx.request_context.session, "_connection", None)
            stack = getattr(connection, "exit_stack", None)
            if stack is not None:
                stack.push_async_callback(self._drop, sid)
        return lanes

    async def _drop(self, sid: str) -> None:
        lanes = self.agents.pop(sid, None)
        if lanes is not None:
            await lanes.close()


def in_process_client(app: Litestar, api_key: str | None) -> Any:
    """An AsyncClient whose requests go straight into ``app`` (no socket)."""
    import httpx

    from agentlanes.api.edge import INTERNAL_SCOPE_KEY
    from agentlanes.client.aio import AsyncClient

    async def internal(scope: Scope, receive: Receive, send: Send) -> None:
        # The server calling itself: no browser is involved (api/edge.py lets it pass).
        scope[INTERNAL_SCOPE_KEY] = True  # type: ignore[literal-required]
        await app(scope, receive, send)

    class _InProcess(AsyncClient):
        def _open_http(self) -> httpx.AsyncClient:
            return httpx.AsyncClient(
                transport=httpx.ASGITransport(app=internal),
                base_url=self.url,
                timeout=self.timeout,
            )

    return _InProcess("http://agentlanes.internal", api_key)


class McpMount:
    """What ``create_app`` adds: the ``/mcp`` route and the lifespan that runs it."""

    def __init__(self, settings: Settings) -> None:
        try:
            endpoint: McpEndpoint | None = McpEndpoint(settings)
        except ImportError:
            endpoint = None
        self.lifespans = [endpoint.lifespan] if endpoint else []

        @asgi(PATH, is_mount=True, copy_scope=True)
        async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            if endpoint is None:
                await _send_error(
                    send, 503, "MCP_UNAVAILABLE", "this server runs without the mcp package"
                )
                return
            await endpoint.handle(scope, receive, send)

        self.handlers = [mcp_endpoint]
