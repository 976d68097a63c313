"""A minimal JSON-over-HTTP call with urllib, for the git hook and the editor guard.

These run on every commit / every edit, so they avoid httpx and pydantic (about 150 ms of
imports together); see ``bench/hook.py``. Everything else uses ``agentlanes.client``.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from agentlanes import __version__
from agentlanes.client.config import LocalConfig


class LeanUnreachable(Exception):
    """The server could not be reached."""


class LeanApiError(Exception):
    """The server answered with an error status."""

    def __init__(self, status: int, body: Any) -> None:
        error = body.get("error") if isinstance(body, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        super().__init__(f"{code or 'HTTP ' + str(status)}: {message or ''}".rstrip(": "))
        self.status = status
        self.code = str(code or "HTTP_ERROR")
        self.body = body


def call(
    cfg: LocalConfig,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    token: str | None = None,
) -> Any:
    """One request to ``cfg.url + path``; the JSON answer, or LeanApiError / LeanUnreachable."""
    headers = {
        "X-API-Key": cfg.api_key or "",
        "Accept": "application/json",
        "User-Agent": f"agentlanes-hook/{__version__}",
    }
    if token:
        headers["X-Session-Token"] = token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    # http.client rather than urllib.request: the latter pulls in ssl, email, tempfile...
    url = urlsplit(cfg.url)
    conn_class = (
        http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    )
    try:
        conn = conn_class(url.hostname or "127.0.0.1", url.port, timeout=cfg.timeout)
        try:
            conn.request(method, url.path.rstrip("/") + path, body=data, headers=headers)
            response = conn.getresponse()
            status, raw = response.status, response.read()
        finally:
            conn.close()
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise LeanUnreachable(str(exc) or type(exc).__name__) from None
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
    if status >= 400:
        raise LeanApiError(status, parsed)
    if parsed is None:
        raise LeanUnreachable(f"the answer from {cfg.url} is not JSON (HTTP {status})")
    return parsed
