"""A JSON answer sent straight on an ASGI ``send``: for code in front of the routes (the
edge checks, the MCP mount) that answers before Litestar does. One place for the shape of
our errors there, ``{"error": {"code", "message"}}``, as the routes answer them."""

from __future__ import annotations

import json
from typing import Any, Literal

from litestar.types import Send


def error_body(code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


def json_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]


async def send_json(
    send: Send,
    status: int,
    body: bytes | Any,
    *,
    prefix: Literal["http", "websocket.http"] = "http",
    extra_headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """Send ``body`` (bytes, or a value to encode) with ``status``; ``prefix`` is
    ``websocket.http`` for a WebSocket handshake's HTTP answer."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = json_headers(data) + (extra_headers or [])
    if prefix == "http":
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data, "more_body": False})
    else:
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": data, "more_body": False})


async def send_error(send: Send, status: int, code: str, message: str) -> None:
    await send_json(send, status, error_body(code, message))
