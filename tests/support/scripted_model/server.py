"""The scripted model's HTTP server: 127.0.0.1, a free port, a thread per connection.

Every request is recorded (method, path, headers, JSON body) before it is answered; the
first dialect (``dialects/*.py``) whose ``matches`` takes the request answers it, with
the script's next step when the request offers tools. Streams are Server-Sent Events,
written a chunk at a time, and the connection closes after them (HTTP/1.1 without a
length: every client reads to the end).
"""

from __future__ import annotations

import gzip
import importlib
import json
import pkgutil
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from tests.support.scripted_model import dialects as dialects_package
from tests.support.scripted_model.script import Script


@dataclass
class ModelRequest:
    """One request a program sent."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any  # the JSON body (None when there was none or it was not JSON)
    raw: bytes
    at: float = field(default_factory=time.time)
    dialect: str = ""
    # Filled by the dialect: the tools offered, the tool results in the conversation,
    # and every text the model was sent (system prompt, messages, tool results).
    tools: list[str] = field(default_factory=list)
    tool_results: int = 0
    text: str = ""
    # Each tool result's text, in the conversation's order (what a tool call answered:
    # the file read, the refusal); a dialect that leaves it empty leaves tests ``text``.
    results: list[str] = field(default_factory=list)

    def newest_result(self) -> str:
        """The text of the newest tool result (all the text when the dialect does not
        tell results apart)."""
        return self.results[-1] if self.results else self.text


@dataclass
class Answer:
    """What a dialect answers: a JSON body, or (``stream``) Server-Sent Events."""

    status: int = 200
    body: Any = None
    stream: Iterable[bytes] | None = None
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


class Dialect(Protocol):
    name: str

    def matches(self, method: str, path: str) -> bool: ...

    def answer(self, request: ModelRequest, script: Script) -> Answer: ...


def load_dialects() -> list[Dialect]:
    found: list[Dialect] = []
    for info in pkgutil.iter_modules(dialects_package.__path__):
        module = importlib.import_module(f"{dialects_package.__name__}.{info.name}")
        dialect = getattr(module, "DIALECT", None)
        if dialect is not None:
            found.append(dialect)
    return found


def sse(events: Iterable[tuple[str | None, Any]]) -> Iterator[bytes]:
    """``(event name or None, JSON data)`` pairs as Server-Sent Events; a ``str`` data is
    sent as it is (``[DONE]``)."""
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        head = f"event: {name}\n" if name else ""
        yield f"{head}data: {text}\n\n".encode()


class Recorded:
    """Every request the server took, in order (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[ModelRequest] = []

    def add(self, request: ModelRequest) -> None:
        with self._lock:
            self._items.append(request)

    def all(self) -> list[ModelRequest]:
        with self._lock:
            return list(self._items)

    def main(self) -> list[ModelRequest]:
        """The requests that offered tools (the agent's own turns)."""
        return [r for r in self.all() if r.tools]

    def last_main(self) -> ModelRequest | None:
        main = self.main()
        return main[-1] if main else None

    def count_in_last(self, needle: str) -> int:
        """How often ``needle`` stands in the newest main request (its whole conversation):
        a message delivered once is there once."""
        last = self.last_main()
        return last.text.count(needle) if last else 0

    def anywhere(self, needle: str) -> bool:
        return any(needle in r.text for r in self.all())


def _decode(raw: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    return raw


class ModelServer:
    """``with ModelServer(script) as model: ... model.url ...``"""

    def __init__(self, script: Script, host: str = "127.0.0.1") -> None:
        self.script = script
        self.recorded = Recorded()
        self.dialects = load_dialects()
        self._host = host
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    parts = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        parts.append(self.rfile.read(size))
                        self.rfile.readline()
                    raw = b"".join(parts)
                else:
                    raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                return _decode(raw, self.headers.get("Content-Encoding", "").lower())

            def _handle(self) -> None:
                raw = self._body() if self.command in ("POST", "PUT", "PATCH") else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                split = urlsplit(self.path)
                request = ModelRequest(
                    method=self.command,
                    path=split.path,
                    query=parse_qs(split.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    raw=raw,
                )
                dialect = next(
                    (d for d in server.dialects if d.matches(self.command, split.path)), None
                )
                if dialect is None:
                    server.recorded.add(request)
                    self._send(Answer(404, {"error": f"no dialect for {split.path}"}))
                    return
                request.dialect = dialect.name
                try:
                    answer = dialect.answer(request, server.script)
                except Exception as exc:  # a bug of the test's: say it to the program
                    answer = Answer(500, {"error": f"{type(exc).__name__}: {exc}"})
                server.recorded.add(request)
                self._send(answer)

            def _send(self, answer: Answer) -> None:
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                if answer.stream is not None:
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-cache")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    for chunk in answer.stream:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                    self.close_connection = True
                    return
                data = b"" if answer.body is None else json.dumps(answer.body).encode()
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

        self._httpd = ThreadingHTTPServer((self._host, 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
