"""Minimal JSON-over-HTTP for the git hook and the editor guard.

These run on every commit and every edit, so they skip httpx and pydantic, and even
``http.client`` (which loads ``email`` and ``ssl``): a plain socket speaks HTTP/1.1 with
``Connection: close``. Several requests go out at once on their own connections, so the
server answers them concurrently (see ``bench/hook.py``). ``https://`` URLs fall back to
``http.client`` over TLS. Everything else uses ``agentlanes.client``.
"""

from __future__ import annotations

import json
import socket

from agentlanes import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentlanes.client.config import LocalConfig

    # One request: (method, path, JSON body or None, session token or None).
    Request = tuple[str, str, dict[str, Any] | None, str | None]


class _Url:
    """``scheme://host:port/prefix`` split without ``urllib.parse`` (and its imports)."""

    def __init__(self, url: str) -> None:
        self.scheme, _, rest = url.partition("://")
        self.netloc, slash, path = rest.partition("/")
        self.path = slash + path
        host, port = self.netloc, ""
        if host.startswith("["):  # [::1]:8787
            end = host.find("]")
            host, port = host[1:end], host[end + 2 :]
        elif ":" in host:
            host, _, port = host.rpartition(":")
        self.hostname = host or None
        try:
            self.port = int(port) if port else None
        except ValueError:
            raise LeanUnreachable(f"bad port in the server URL {url!r}") from None


class LeanUnreachable(Exception):
    """The server could not be reached, or its answer could not be read: no connection, a
    reset or a TLS failure, or bytes that are not an agentlanes answer (a bad status line,
    Content-Length or chunk size, a body cut short, not JSON, a proxy's HTML error page).
    The one failure the hooks see for all of these: they follow ``fail_closed``."""


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


def _encode(
    cfg: LocalConfig, host: str, prefix: str, req: Request
) -> tuple[bytes, dict[str, str], bytes]:
    method, path, body, token = req
    data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
    headers = {
        "Host": host,
        "X-API-Key": cfg.api_key or "",
        "Accept": "application/json",
        "User-Agent": f"agentlanes-hook/{__version__}",
        "Connection": "close",
        "Content-Length": str(len(data)),
    }
    if body is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["X-Session-Token"] = token
    target = prefix + path
    head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (head + "\r\n").encode("latin-1") + data, headers, data


def _short(value: bytes) -> str:
    return repr(value[:40])[1:] + ("..." if len(value) > 40 else "")


def _parse(raw: bytes) -> tuple[int, bytes]:
    """Status and body of an HTTP/1.1 answer read to the end; LeanUnreachable if malformed."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"HTTP/"):
        raise LeanUnreachable("the answer is not HTTP")
    lines = head.split(b"\r\n")
    parts = lines[0].split(None, 2)
    code = parts[1] if len(parts) > 1 else b""
    if not (len(code) == 3 and code.isdigit() and 100 <= int(code) <= 599):
        raise LeanUnreachable(f"bad HTTP status line {_short(lines[0])}")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip()
    if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = _dechunk(body)
    elif b"content-length" in fields:
        length = fields[b"content-length"]
        if not (length.isdigit() and len(length) < 19):
            raise LeanUnreachable(f"bad Content-Length {_short(length)}")
        if len(body) < int(length):
            raise LeanUnreachable(f"the answer was cut short ({len(body)} of {int(length)} bytes)")
        body = body[: int(length)]
    return int(code), body


_HEX = frozenset(b"0123456789abcdefABCDEF")


def _dechunk(data: bytes) -> bytes:
    out = bytearray()
    while True:
        size_line, sep, rest = data.partition(b"\r\n")
        if not sep:
            raise LeanUnreachable("the chunked answer was cut short")
        digits = size_line.split(b";")[0].strip()
        if not digits or len(digits) > 16 or not _HEX.issuperset(digits):
            raise LeanUnreachable(f"bad chunk size {_short(size_line)}")
        size = int(digits, 16)
        if size == 0:
            return bytes(out)
        if rest[size : size + 2] != b"\r\n":
            raise LeanUnreachable("the chunked answer was cut short or malformed")
        out += rest[:size]
        data = rest[size + 2 :]


def _result(status: int, raw: bytes, where: str) -> Any:
    """The parsed JSON object, a LeanApiError for an agentlanes error answer, or raised
    LeanUnreachable for anything else (not JSON, not an object, a proxy's error page)."""
    try:
        parsed = json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        parsed = None
    if status >= 400 and isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        return LeanApiError(status, parsed)
    if status >= 400:
        raise LeanUnreachable(f"HTTP {status} from {where}, not an agentlanes answer")
    if not isinstance(parsed, dict):
        raise LeanUnreachable(f"the answer from {where} is not a JSON object (HTTP {status})")
    return parsed


def call_many(cfg: LocalConfig, requests: list[Request]) -> list[Any]:
    """Send all requests at once, one connection each; their answers in order.

    Each answer is the parsed JSON object, or a LeanApiError value for an error status
    (returned, not raised, so the caller sees every answer). Anything else raises
    LeanUnreachable: a connection failure, or any answer that cannot be read.
    """
    url = _Url(cfg.url)
    if url.scheme == "https":
        return [_https(cfg, url, req) for req in requests]
    host = url.hostname or "127.0.0.1"
    port = url.port or 80
    prefix = url.path.rstrip("/")
    sockets = []
    try:
        for req in requests:
            sock = socket.create_connection((host, port), timeout=cfg.timeout)
            sockets.append(sock)
            sock.sendall(_encode(cfg, url.netloc, prefix, req)[0])
        answers = []
        for sock in sockets:
            chunks = []
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
            status, body = _parse(b"".join(chunks))
            answers.append(_result(status, body, cfg.url))
        return answers
    except (OSError, ValueError) as exc:  # ValueError: UnicodeError from an odd host name
        raise LeanUnreachable(str(exc) or type(exc).__name__) from None
    finally:
        for sock in sockets:
            sock.close()


def _https(cfg: LocalConfig, url: Any, req: Request) -> Any:
    import http.client

    method, path = req[0], req[1]
    _, headers, data = _encode(cfg, url.netloc, "", req)
    headers.pop("Host")
    try:
        conn = http.client.HTTPSConnection(url.hostname, url.port, timeout=cfg.timeout)
        try:
            conn.request(method, url.path.rstrip("/") + path, body=data, headers=headers)
            response = conn.getresponse()
            status, raw = response.status, response.read()
        finally:
            conn.close()
    except (OSError, ValueError, http.client.HTTPException) as exc:  # ssl.SSLError is OSError
        raise LeanUnreachable(str(exc) or type(exc).__name__) from None
    return _result(status, raw, cfg.url)


def call(
    cfg: LocalConfig,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    token: str | None = None,
) -> Any:
    """One request; the JSON answer, or LeanApiError / LeanUnreachable raised."""
    [answer] = call_many(cfg, [(method, path, body, token)])
    if isinstance(answer, Exception):
        raise answer
    return answer
