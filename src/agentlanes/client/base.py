"""What both clients share: settings, request preparation, answers and stream resumption."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, Self, TypeVar
from urllib.parse import urlencode

from agentlanes import __version__
from agentlanes.client.calls import Call
from agentlanes.client.config import LocalConfig, load_config, read_session
from agentlanes.client.coordination import (
    Agents,
    Checkpoints,
    Consensus,
    Leases,
    Messages,
    Tasks,
)
from agentlanes.client.errors import (
    ApiError,
    ConfigurationError,
    NoSession,
    StreamClosed,
    Unreachable,
)
from agentlanes.client.models import Event

T = TypeVar("T")
# The httpx transport type a client takes: httpx.BaseTransport or httpx.AsyncBaseTransport.
TransportT = TypeVar("TransportT")
# What running a call gives: the answer itself (Client: Any, the groups' answers are JSON),
# or a coroutine of it (AsyncClient), so mypy sees a coordination call left un-awaited.
ResultT = TypeVar("ResultT")

USER_AGENT = f"agentlanes-client/{__version__}"
# Event-stream close codes after which reconnecting cannot help.
FATAL_CLOSE_CODES = {4400, 4401}


class ClientBase(Generic[TransportT, ResultT]):
    """Server URL, API key and the session token a client sends, and the coordination
    groups, typed by what the client's ``run`` gives."""

    tasks: Tasks[ResultT]
    checkpoints: Checkpoints[ResultT]
    messages: Messages[ResultT]
    leases: Leases[ResultT]
    consensus: Consensus[ResultT]
    agents: Agents[ResultT]

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        session_token: str | None = None,
        timeout: float = 10.0,
        transport: TransportT | None = None,
    ) -> None:
        self.url = (url or "http://127.0.0.1:8787").rstrip("/")
        self.api_key = api_key
        self.session_token = session_token
        self.timeout = timeout
        # Handed to the httpx client (``httpx.MockTransport`` lets a user test without a
        # server); None lets httpx open real connections.
        self.transport = transport
        run = self._runner()
        self.tasks = Tasks(run)
        self.checkpoints = Checkpoints(run)
        self.messages = Messages(run)
        self.leases = Leases(run)
        self.consensus = Consensus(run)
        self.agents = Agents(run)
        self._http = self._open_http()

    def _open_http(self) -> Any:
        """The httpx client (blocking or asyncio) this client sends its requests with."""
        raise NotImplementedError

    def _runner(self) -> Callable[[Call[Any]], ResultT]:
        """The client's ``run``, as the coordination groups call it."""
        raise NotImplementedError

    @classmethod
    def from_env(cls, start: Path | None = None) -> Self:
        """A client for the repository around ``start`` (env vars, ``.agentlanes.toml``,
        and the saved session token)."""
        cfg: LocalConfig = load_config(start)
        session = read_session(cfg)
        return cls(
            cfg.url,
            cfg.api_key,
            session_token=session["session_token"] if session else None,
            timeout=cfg.timeout,
        )

    # -- requests --------------------------------------------------------------------------
    def _headers(self, call: Call[Any]) -> dict[str, str]:
        if not self.api_key:
            raise ConfigurationError(
                "no API key: set AGENTLANES_API_KEY or api_key in .agentlanes.toml"
            )
        headers = {"X-API-Key": self.api_key, "User-Agent": USER_AGENT}
        if call.token != "none":
            if self.session_token:
                headers["X-Session-Token"] = self.session_token
            elif call.token == "required":
                raise NoSession(
                    "no session token: run `lanes checkin` or set AGENTLANES_SESSION_TOKEN"
                )
        return headers

    def _request_args(self, call: Call[Any]) -> dict[str, Any]:
        """The keyword arguments of httpx's ``request`` for one call (both transports)."""
        return {
            "method": call.method,
            "url": call.path,
            "json": call.body,
            "params": call.params or None,
            "headers": self._headers(call),
        }

    def _attach_frame(self) -> str:
        """The frame that ties the session's liveness to the socket."""
        if not self.session_token:
            raise NoSession("no session token to attach: check in first")
        return json.dumps({"type": "attach", "session_token": self.session_token})

    def _unreachable(self, exc: Exception) -> Unreachable:
        return Unreachable(self.url, str(exc) or type(exc).__name__)

    @staticmethod
    def _result(call: Call[T], status: int, text: str) -> T:
        try:
            body = json.loads(text) if text else None
        except ValueError:
            body = None
        if status >= 400:
            raise ApiError.from_response(status, body, text)
        if body is None and text:
            raise ApiError(status, "BAD_RESPONSE", "the server's answer is not JSON")
        return call.parse(body)

    # -- event stream ----------------------------------------------------------------------
    def _ws_url(self, since: int | None, epoch: str | None = None) -> str:
        base = self.url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
        params: dict[str, Any] = {}
        if since is not None:
            params["since"] = since
            if epoch is not None:
                # The history ``since`` belongs to: another one means start afresh.
                params["epoch"] = epoch
        query = f"?{urlencode(params)}" if params else ""
        return f"{base}/api/v1/events{query}"

    def _ws_headers(self) -> dict[str, str]:
        if not self.api_key:
            raise ConfigurationError(
                "no API key: set AGENTLANES_API_KEY or api_key in .agentlanes.toml"
            )
        return {"X-API-Key": self.api_key, "User-Agent": USER_AGENT}


class Resume:
    """Where a stream is, so a reconnect asks for exactly what it missed (``since``)."""

    def __init__(self, since: int | None, epoch: str | None = None) -> None:
        self.offset = since
        self.epoch = epoch

    def accept(self, raw: str | bytes) -> Event | None:
        """Parse a frame; drop an event already seen (offset at or below the last one)."""
        frame = Event.model_validate(json.loads(raw))
        if frame.type in ("presence.snapshot", "replay.complete"):
            if frame.offset is not None:
                self.offset = frame.offset
            epoch = (frame.model_extra or {}).get("epoch")
            if isinstance(epoch, str):
                self.epoch = epoch
            return frame
        if frame.offset is not None:
            if self.offset is not None and frame.offset <= self.offset:
                return None
            self.offset = frame.offset
        return frame


class Reconnects:
    """What both clients' event loops decide between connects: where to resume, when a
    close is final (``StreamClosed``), when to give up (``Unreachable``: at the very first
    connect, or after ``max_failures`` failed connects in a row), and how long to wait."""

    def __init__(
        self, client: ClientBase[Any, Any], since: int | None, max_failures: int | None
    ) -> None:
        self.client = client
        self.resume = Resume(since)
        self.max_failures = max_failures
        self.failures = 0
        self.connected = False

    def url(self) -> str:
        return self.client._ws_url(self.resume.offset, self.resume.epoch)

    def opened(self) -> None:
        self.failures = 0
        self.connected = True

    def closed(self, code: int | None, reason: str) -> None:
        """The server closed the socket: reconnect, unless the code says it cannot help."""
        if code is not None and code in FATAL_CLOSE_CODES:
            raise StreamClosed(code, reason) from None

    def failed(self, exc: Exception) -> None:
        self.failures += 1
        give_up = self.max_failures is not None and self.failures >= self.max_failures
        if not self.connected or give_up:
            raise self.client._unreachable(exc) from None

    def delay(self) -> float:
        return backoff(self.failures)


def backoff(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before reconnect number ``attempt``: a step of 0.2 s doubling, at
    most 5 s, of which the second half is random ("equal jitter"). A server that restarts
    under a thousand agents does not get a thousand reconnects in the same millisecond,
    and no client waits less than half its step."""
    step = min(5.0, 0.2 * 2.0 ** min(attempt, 5))  # int ** int is Any to mypy
    return step / 2 + step / 2 * rand()
