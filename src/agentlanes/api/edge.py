"""What every request meets first, for browsers (SPEC "One agent cannot hurt another").

- **Host** (DNS rebinding): a page on ``evil.example`` whose name is made to point at
  127.0.0.1 reaches this server with ``Host: evil.example``; every route refuses a Host
  not in ``allowed_hosts`` with 421 ``HOST_NOT_ALLOWED`` (the event socket too), so such
  a page reads nothing (``/metrics``, ``/server``, ``/readyz`` need no key).
- **Origin**: ``/mcp`` and the WebSocket refuse a browser page of another origin
  (``Origin: null`` included) with 403 ``ORIGIN_NOT_ALLOWED`` / close 4403, as the MCP
  transport requires of servers ("Servers MUST validate the Origin header on all incoming
  connections to prevent DNS rebinding attacks"; 403 when invalid:
  https://modelcontextprotocol.io/specification/2025-11-25/basic/transports). A request
  without ``Origin`` (an agent, a CLI: not a browser) is not affected. The server's own
  origin (the scheme-less ``host[:port]`` of the Origin equals the Host) is always allowed.
- **Headers** on every HTTP answer: a Content-Security-Policy that loads nothing from
  another origin and runs no inline script, no framing, ``nosniff`` and no Referer.

Calls that the server makes into itself (the MCP tools' in-process client) carry
``INTERNAL_SCOPE_KEY`` in their ASGI scope and pass: no browser can set a scope key.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from litestar.types import ASGIApp, Message, Receive, Scope, Send

from agentlanes.server.asgi_json import error_body, send_json
from agentlanes.settings import Settings

INTERNAL_SCOPE_KEY = "agentlanes.internal"
CLOSE_ORIGIN_NOT_ALLOWED = 4403
CLOSE_HOST_NOT_ALLOWED = 4421
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
ANY_ADDRESS = ("0.0.0.0", "::", "[::]", "")  # bound to every address

# `img-src data:`: the OpenAPI viewer's stylesheet draws its icons as data: URLs.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)


def _bracketed(host: str) -> str:
    """An IPv6 address as it stands in a Host header: ``[::1]``."""
    host = host.strip().lower()
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def _split_host(value: str) -> tuple[str, str | None]:
    """``name[:port]`` (``[v6]:port`` too) -> (name, port or None), lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        rest = value[end + 1 :]
        return value[: end + 1], rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        name, port = value.split(":")
        return name, port
    return value, None


def effective_hosts(settings: Settings) -> list[str]:
    """``allowed_hosts`` as served: the defaults when empty (SPEC)."""
    if settings.allowed_hosts:
        return [h.strip().lower() for h in settings.allowed_hosts if h.strip()]
    if _bracketed(settings.host) in ANY_ADDRESS:
        return ["*"]  # bound to every address: the public name is unknown (docs: set it)
    hosts = list(LOCAL_HOSTS)
    own = _bracketed(settings.host)
    if own not in hosts:
        hosts.append(own)
    return hosts


class HostRule:
    """Which Host headers are this server's."""

    def __init__(self, allowed: Iterable[str]) -> None:
        self.any = False
        self.names: set[str] = set()
        self.exact: set[tuple[str, str]] = set()
        for entry in allowed:
            if entry == "*":
                self.any = True
                continue
            name, port = _split_host(entry)
            if port is None or port == "*":
                self.names.add(name)
            else:
                self.exact.add((name, port))

    def allows(self, host: str | None) -> bool:
        if self.any or host is None:  # no Host header: HTTP/1.0, not a browser
            return True
        name, port = _split_host(host)
        name = name.rstrip(".") if not name.startswith("[") else name
        return name in self.names or (port is not None and (name, port) in self.exact)


class OriginRule:
    """Which Origin headers may open ``/mcp`` and the WebSocket."""

    def __init__(self, allowed: Iterable[str]) -> None:
        entries = [o.strip().lower().rstrip("/") for o in allowed if o.strip()]
        self.any = "*" in entries
        self.origins = set(entries)

    def allows(self, origin: str | None, host: str | None) -> bool:
        if origin is None or self.any:
            return True
        origin = origin.strip().lower()
        if origin in self.origins:
            return True
        if origin == "null" or host is None:
            return False
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False
        return parts.netloc == host.strip().lower()  # the server's own origin


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def _is_mcp(scope: Scope) -> bool:
    """Routed already, so a mount's ``path`` is what follows it: ask the route handler."""
    handler = scope.get("route_handler")
    return "/mcp" in getattr(handler, "paths", ())


class EdgeMiddleware:
    """Host and Origin checks in front of every route (an ASGI middleware)."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.hosts = HostRule(effective_hosts(settings))
        self.origins = OriginRule(settings.allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or scope.get(INTERNAL_SCOPE_KEY):
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if not self.hosts.allows(host):
            await self._refuse(
                scope,
                receive,
                send,
                421,
                "HOST_NOT_ALLOWED",
                f"Host {host!r} is not one of this server's names: add it to allowed_hosts",
            )
            return
        if kind == "websocket" or _is_mcp(scope):
            origin = _header(scope, b"origin")
            if not self.origins.allows(origin, host):
                await self._refuse(
                    scope,
                    receive,
                    send,
                    403,
                    "ORIGIN_NOT_ALLOWED",
                    f"Origin {origin!r} may not call this server: add it to allowed_origins",
                )
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(
        scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str
    ) -> None:
        body = error_body(code, message)
        if scope["type"] == "http":
            await send_json(send, status, body)
            return
        message_in = await receive()
        if message_in["type"] != "websocket.connect":
            return
        if status == 421 and "websocket.http.response" in (scope.get("extensions") or {}):
            # A foreign Host gets the same 421 as on every route (the handshake's answer).
            await send_json(send, status, body, prefix="websocket.http")
            return
        # Accepted, told why (the API's error body), closed with 4403 (4421 for a Host
        # where the server cannot answer the handshake with a status).
        close = CLOSE_ORIGIN_NOT_ALLOWED if status == 403 else CLOSE_HOST_NOT_ALLOWED
        await send({"type": "websocket.accept", "subprotocol": None, "headers": []})
        told = json.dumps({"type": "error", **json.loads(body)})
        await send({"type": "websocket.send", "bytes": None, "text": told})
        await send({"type": "websocket.close", "code": close, "reason": message[:120]})


def edge_middleware(settings: Settings) -> Callable[[ASGIApp], ASGIApp]:
    """The middleware factory for ``Litestar(middleware=[...])``."""

    def factory(app: ASGIApp) -> ASGIApp:
        return EdgeMiddleware(app, settings)

    return factory


async def security_headers(message: Message, scope: Scope) -> None:
    """A ``before_send`` hook: the browser headers on every HTTP answer (SPEC)."""
    if message["type"] != "http.response.start":
        return
    headers = list(message.get("headers") or [])
    present = {bytes(k).lower() for k, _ in headers}
    for key, value in SECURITY_HEADERS:
        if key not in present:
            headers.append((key, value))
    message["headers"] = headers
