"""The MCP tools inside ``agentlanes serve``: streamable HTTP at ``/mcp``.

The official SDK's session manager (``StreamableHTTPSessionManager``, run in the app's
lifespan) serves the same tools as ``agentlanes mcp`` (``agentlanes.mcp.server``), so one
server serves many agents. Each request must carry the project's ``X-API-Key``; without a
valid one the answer is 401 with the API's error body, before any MCP handling.

Any process answers any request, so a load balancer needs no stickiness. The SDK runs
stateless (a fresh transport per request); the MCP session is ours: ``initialize`` gets a
new ``Mcp-Session-Id``, and what stands behind it (the project, and the agent's
agentlanes session once it has checked in) is kept where every process reads it
(``agentlanes.mcp.sessions``: Redis when configured). A session belongs to the project
that opened it: with another project's key, or once it is gone (the client's DELETE, or
30 minutes without a request), its id answers 404 and the client starts a new one. The
server sends nothing at GET (405): every answer comes on the POST that asked for it.

Each MCP session is one agent: a client per process that serves it, which calls this very
application in process (``httpx.ASGITransport``: no socket, the same validation, errors
and events as the HTTP API), with that agent's session token once it has checked in. The
processes that serve an agent heartbeat its session while the MCP session lasts; when it
ends the heartbeats stop and the agentlanes session runs out its TTL, as when a stdio
server's process exits.

``/mcp`` speaks the protocol versions with an ``initialize`` handshake and
``Mcp-Session-Id`` (2024-11-05 to 2025-11-25). A request in the sessionless era (an
``MCP-Protocol-Version`` header of 2026 or later) gets a 400, on which the SDK's clients
fall back to the handshake; a tool call without a session is refused rather than sharing
one agent between clients.

Nothing here sees a working tree, so nothing is written to disk and patterns are sent as
given. Without the ``mcp`` package ``/mcp`` answers 503 with a message saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

from litestar import Litestar
from litestar.handlers import asgi
from litestar.types import Message, Receive, ReceiveMessage, Scope, Send

from agentlanes.errors import AgentlanesError
from agentlanes.server.asgi_json import send_error, send_json
from agentlanes.services.projects import project_for_key
from agentlanes.settings import Settings

if TYPE_CHECKING:
    # The MCP SDK and httpx type ASGI as Starlette does (mutable mappings), Litestar as
    # TypedDicts: the same scope and messages, which mypy cannot see as one type.
    import starlette.types

log = logging.getLogger("agentlanes.mcp")
PATH = "/mcp"
# A session store that cannot answer (Redis away): redis-py's errors are ConnectionError
# and TimeoutError of its own, both under RedisError; sockets raise OSError.
try:
    from redis.exceptions import RedisError

    _STORE_ERRORS: tuple[type[BaseException], ...] = (RedisError, OSError)
except ImportError:  # pragma: no cover - redis is a dependency
    _STORE_ERRORS = (OSError,)


async def _send_jsonrpc_error(send: Send, message: str, status: int = 400) -> None:
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    await send_json(send, status, error)


async def _send_empty(send: Send, status: int) -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def _header(scope: Scope, name: bytes) -> str | None:
    return next((v.decode("latin-1") for k, v in scope["headers"] if k == name), None)


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> ReceiveMessage:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _tools_asked(scope: Scope) -> list[str] | None:
    """The tool groups ``/mcp?tools=tasks,leases`` (or ``all``) asks to list from the start
    (``mcp/toolsets.py``); None for the default set. A ValueError names a wrong group."""
    from urllib.parse import parse_qs

    from agentlanes.mcp import toolsets

    query = parse_qs(bytes(scope.get("query_string") or b"").decode("latin-1"))
    asked = [g for value in query.get("tools", []) for g in value.split(",")]
    return list(toolsets.parse(asked)) if asked else None


def _is_initialize(body: bytes) -> bool:
    try:
        data = json.loads(body)
    except ValueError:
        return False
    items = data if isinstance(data, list) else [data]
    return any(isinstance(i, dict) and i.get("method") == "initialize" for i in items)


class McpEndpoint:
    """``/mcp``: authentication by project key, our MCP sessions, the SDK stateless."""

    def __init__(self, settings: Settings) -> None:
        from mcp.server.transport_security import TransportSecuritySettings
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        from agentlanes.mcp.server import new_server
        from agentlanes.mcp.sessions import create_store

        self.server = new_server(self._lanes_for)
        # Builds the SDK's session manager (its routes are not used: we mount the manager).
        # Host and Origin are checked for every route before this (api/edge.py,
        # allowed_hosts / allowed_origins), so the SDK's own check stays off.
        self.server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=settings.max_body_bytes,
        )
        self.manager = self.server.session_manager
        self.max_body_bytes = settings.max_body_bytes
        self.store = create_store(
            settings.redis_url, settings.redis_channel_prefix, settings.max_mcp_sessions_per_project
        )
        self.app: Litestar | None = None
        self.agents: dict[str, Any] = {}  # MCP session id -> SharedLanes (this process)
        self._swept = time.monotonic()
        self._closing: set[asyncio.Task[None]] = set()
        # The protocol versions with an initialize handshake and sessions.
        self.handshake_versions = tuple(HANDSHAKE_PROTOCOL_VERSIONS)

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        self.app = app
        await self.store.start()
        try:
            async with self.manager.run():
                try:
                    yield
                finally:
                    for sid in list(self.agents):  # this process only: the record stays
                        await self._drop_local(sid)
        finally:
            await self.store.stop()

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.app is not None
        key = _header(scope, b"x-api-key")
        try:
            project = await project_for_key(self.app.state.ctx, key)
        except AgentlanesError as exc:
            await send_error(send, exc.status_code, exc.code, str(exc))
            return
        version = _header(scope, b"mcp-protocol-version")
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
        self._sweep_local()
        assert project.id is not None
        try:
            await self._serve(scope, receive, send, project.id)
        except _STORE_ERRORS as exc:
            # Redis away: the sessions cannot be read, so nothing is served until it is back.
            log.warning("MCP session store unavailable: %s", exc)
            await _send_jsonrpc_error(send, "MCP sessions unavailable (Redis): retry shortly", 503)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, project_id: int) -> None:
        from agentlanes.mcp.sessions import AgentRecord

        method = scope.get("method", "")
        sid = _header(scope, b"mcp-session-id")
        if method == "GET":
            # Every answer comes on its POST; there is no stream of the server's own.
            await _send_jsonrpc_error(
                send, "this server sends no stream at GET: POST your requests", 405
            )
            return
        if sid is not None:
            record = await self.store.load(sid)
            if record is None or record.project_id != project_id:
                await _send_jsonrpc_error(send, "Session not found", 404)
                return
            if method == "DELETE":  # the client ends its session, on whichever process
                await self.store.drop(sid)
                await self._drop_local(sid)
                await _send_empty(send, 200)
                return
        elif method == "DELETE":
            await _send_jsonrpc_error(send, "Bad Request: no Mcp-Session-Id to end", 400)
            return

        minted: str | None = None
        if method == "POST" and sid is None:
            body = await _read_body(receive, self.max_body_bytes)
            if body is None:
                await send_error(
                    send, 413, "PAYLOAD_TOO_LARGE", "the body is larger than max_body_bytes"
                )
                return
            receive = _replay(body, receive)
            if _is_initialize(body):
                try:
                    tools = _tools_asked(scope)
                except ValueError as exc:
                    await _send_jsonrpc_error(send, f"?tools=: {exc}", 400)
                    return
                minted = uuid.uuid4().hex
                refused = await self.store.create(minted, AgentRecord(project_id, tools=tools))
                if refused == "project":
                    await _send_jsonrpc_error(
                        send,
                        f"Too many open MCP sessions for this project (max_mcp_sessions_per_"
                        f"project = {self.store.per_project}): end one (DELETE) or wait "
                        f"for one to idle out",
                        429,
                    )
                    return

        async def send_with_session(message: Message) -> None:
            if message["type"] == "http.response.start" and minted is not None:
                if message["status"] < 400:
                    headers = list(message.get("headers") or [])
                    headers.append((b"mcp-session-id", minted.encode()))
                    message["headers"] = headers
                else:
                    await self.store.drop(minted)
            elif message["type"] == "http.response.body" and sid is not None:
                # What a tool changed (a check-in's token) is kept before the client can
                # see the answer and send its next request, maybe to another process.
                lanes = self.agents.get(sid)
                if lanes is not None:
                    try:
                        await lanes.persist(project_id)
                    except _STORE_ERRORS as exc:  # the answer has started: say it in the log
                        log.warning("MCP session %s not saved: %s", sid[:8], exc)
            await send(message)

        await self.manager.handle_request(
            cast("starlette.types.Scope", scope),
            cast("starlette.types.Receive", receive),
            cast("starlette.types.Send", send_with_session),
        )

    async def _lanes_for(self, ctx: Any) -> Any:
        """The agent behind this tool call: its MCP session's record, on this process."""
        from mcp.server.mcpserver.exceptions import ToolError

        from agentlanes.mcp.sessions import SharedLanes

        request = ctx.request_context.request
        headers = request.headers if request is not None else {}
        sid = headers.get("mcp-session-id")
        if not sid:  # never share one agent's session between clients
            raise ToolError("this server needs an MCP session: connect with initialize first")
        record = await self.store.load(sid, touch=False)
        if record is None:
            raise ToolError("your MCP session has ended: reconnect (initialize) and check in")
        lanes = self.agents.get(sid)
        if lanes is None:
            assert self.app is not None
            lanes = SharedLanes(
                in_process_client(self.app, headers.get("x-api-key")), sid, self.store
            )
            self.agents[sid] = lanes
        lanes.adopt(record)
        if record.token and not lanes.beating():
            lanes.start_heartbeat()  # every process that serves the agent keeps it alive
        return lanes

    async def _drop_local(self, sid: str) -> None:
        lanes = self.agents.pop(sid, None)
        if lanes is not None:
            await lanes.close()

    def _sweep_local(self) -> None:
        """Forget agents this process has not served for the idle time (at most once a
        minute): their heartbeats stopped when their records went."""
        from agentlanes.mcp.sessions import IDLE_SECONDS

        now = time.monotonic()
        if now - self._swept < 60:
            return
        self._swept = now
        for sid, lanes in list(self.agents.items()):
            if now - lanes.last_used > IDLE_SECONDS and not lanes.beating():
                self.agents.pop(sid, None)
                task = asyncio.create_task(lanes.close())
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)


def in_process_client(app: Litestar, api_key: str | None) -> Any:
    """An AsyncClient whose requests go straight into ``app`` (no socket)."""
    import httpx

    from agentlanes.api.edge import INTERNAL_SCOPE_KEY
    from agentlanes.client.aio import AsyncClient

    async def internal(
        scope: starlette.types.Scope,
        receive: starlette.types.Receive,
        send: starlette.types.Send,
    ) -> None:
        # The server calling itself: no browser is involved (api/edge.py lets it pass).
        scope[INTERNAL_SCOPE_KEY] = True
        await app(cast("Scope", scope), cast("Receive", receive), cast("Send", send))

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
                await send_error(
                    send, 503, "MCP_UNAVAILABLE", "this server runs without the mcp package"
                )
                return
            await endpoint.handle(scope, receive, send)

        self.handlers = [mcp_endpoint]
