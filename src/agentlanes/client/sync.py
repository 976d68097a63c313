"""The blocking client: one method per endpoint, typed results, errors as exceptions."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from agentlanes.client import calls
from agentlanes.client import models as m
from agentlanes.client.base import ClientBase, Reconnects
from agentlanes.client.calls import Call

T = TypeVar("T")


class Client(ClientBase[httpx.BaseTransport, Any]):
    """Talk to an agentlanes server. ``Client.from_env()`` reads the local configuration.

    After ``checkin`` the client keeps the session token and sends it with the calls that
    act as that session (heartbeat, status, checkout, conflict checks). ``transport``: an
    ``httpx.BaseTransport`` for its HTTP calls (``httpx.MockTransport`` in tests); the
    ``events()`` WebSocket does not use it.
    """

    _http: httpx.Client

    def _open_http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=self.timeout, transport=self.transport)

    def _runner(self) -> Callable[[Call[Any]], Any]:
        return self.run

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def run(self, call: Call[T]) -> T:
        """Send one prepared call and parse its answer (raises ApiError / Unreachable)."""
        request = self._request_args(call)
        try:
            response = self._http.request(**request)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None
        return self._result(call, response.status_code, response.text)

    def request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        params: dict[str, Any] | None = None,
        with_token: bool = True,
    ) -> Any:
        """Any endpoint under the server's base URL, as plain JSON (for routes this client
        has no typed method for yet). Sends the session token when there is one."""
        return self.run(calls.any_route(method, path, body, params, with_token=with_token))

    # -- sessions --------------------------------------------------------------------------
    def checkin(
        self,
        agent_name: str | None = None,
        declared_area: str | None = None,
        declared_files: list[str] | None = None,
        *,
        meta: dict[str, Any] | None = None,
        claims: list[dict[str, Any]] | None = None,
    ) -> m.CheckinResult:
        """Start a session; the client keeps its token for the calls that follow.
        ``claims``: lines claimed by range, ``[{"path", "base", "ranges", "symbol"?}]``
        (``agentlanes.client.symbols.claims_of`` reads a symbol's)."""
        result = self.run(calls.checkin(agent_name, declared_area, declared_files, meta, claims))
        self.session_token = result.session_token
        return result

    def heartbeat(self) -> m.HeartbeatResult:
        """Keep the session alive (410 ``SESSION_ENDED`` once it has ended)."""
        return self.run(calls.heartbeat())

    def status(
        self,
        *,
        declared_area: str | None = None,
        declared_files: list[str] | None = None,
        status_text: str | None = None,
        edits: list[dict[str, Any]] | None = None,
    ) -> m.StatusResult:
        """Change the session's area, files, status text or edits; returns fresh conflicts.

        ``edits``: what this session changed, per file, against ``HEAD`` (SPEC "Line-level
        claims"): ``[{"path", "base", "ranges": [[start, end], ...]}]``, ``base`` the file's
        blob id at ``HEAD`` (None for a new file), ``ranges`` the base lines each
        ``git diff -U0`` hunk replaces (``[]``: no change left, the file's edits are
        dropped). ``agentlanes.hooks.edits.file_edits(root, paths)`` reads them off git.
        Each call replaces the edits of the files it lists; an edit's path joins the
        claims."""
        return self.run(calls.status(declared_area, declared_files, status_text, edits))

    def checkout(
        self,
        outcome_status: m.OutcomeStatus | None = None,
        work_summary: str | None = None,
        *,
        files_touched: list[str] | None = None,
    ) -> m.CheckoutResult:
        """End the session with an outcome (completed, partial, failed)."""
        return self.run(calls.checkout(outcome_status, work_summary, files_touched))

    def news(
        self, after: str | None = None, *, limit: int | None = None, deliver: bool = False
    ) -> Any:
        """What concerns this session after the cursor ``after`` (None: a summary of the
        current state and a cursor): ``{"items", "cursor", "more", "recovered"}``.
        ``deliver``: the items go into an agent's context, so its messages count as
        delivered."""
        return self.run(calls.news(after, limit, deliver))

    def presence(self) -> m.Presence:
        """The project's live sessions, oldest first, and the offset they reflect."""
        return self.run(calls.presence())

    def check_conflicts(
        self,
        paths: list[str] | None = None,
        *,
        patterns: list[str] | None = None,
        declared_area: str | None = None,
    ) -> m.ConflictCheck:
        """What these paths / patterns / area collide with; the own session is left out."""
        return self.run(calls.check_conflicts(paths, patterns, declared_area))

    def session_conflicts(
        self, session_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> m.SessionConflicts:
        """A page of the current conflicts of a live session of the project (answers and
        events carry only the first ones): pass the page's ``next_cursor`` for the next."""
        return self.run(calls.session_conflicts(session_id, cursor, limit))

    def project(self) -> m.ProjectInfo:
        """The project the API key opens (its conflict mode and heartbeat settings)."""
        return self.run(calls.project())

    def event_log(
        self, since: int | None = None, *, limit: int | None = None, epoch: str | None = None
    ) -> m.EventLog:
        """Events after ``since`` over HTTP (of history ``epoch``, when given)."""
        return self.run(calls.event_log(since, limit, epoch))

    # -- waiting for a lane (SPEC) ---------------------------------------------------------
    def queue_wait(
        self,
        paths: list[str],
        *,
        timeout_seconds: int | None = None,
        urgency: m.Urgency | None = None,
    ) -> m.WaitResult:
        """Wait for paths others hold: ``granted`` at once when nothing holds them (they
        joined the claims), else queued with its place in line and the holders. The
        grant comes later as ``claim.granted`` (an event, a news item); follow
        ``events(since=result.offset)`` to miss nothing."""
        return self.run(calls.queue_wait(paths, timeout_seconds, urgency))

    def queue(
        self,
        *,
        session_id: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> m.QueueList:
        """The project's waits in line order, with positions and holders."""
        return self.run(calls.queue_list(session_id, limit, offset))

    def queue_cancel(self, queue_id: str) -> m.Wait:
        """Stop waiting (this session's own wait); those behind it move up."""
        return self.run(calls.queue_cancel(queue_id))

    def ask(self, to: str, paths: list[str], reason: str) -> m.ReleaseRequest:
        """Ask the holder ``to`` (name or display name) to release ``paths``: news to it;
        its release (or message) is news to this session."""
        return self.run(calls.ask(to, paths, reason))

    def hotspots(self, days: int | None = None, *, limit: int | None = None) -> m.Hotspots:
        """The paths most refused and waited for in the last ``days`` days."""
        return self.run(calls.hotspots(days, limit))

    # -- event stream ----------------------------------------------------------------------
    def events(
        self,
        since: int | None = None,
        *,
        attach: bool = False,
        max_failures: int | None = None,
        idle_timeout: float | None = None,
        news: Callable[[], str | None] | None = None,
    ) -> EventStream:
        """Every frame of the live stream, reconnecting with ``since`` on its own.

        Iterate it (``for event in client.events(): ...``), or hold it in a ``with``
        block, which closes the socket on leaving (``with client.events() as stream:``);
        ``stream.close()`` does the same. The socket opens at the first frame asked for.

        Without ``since`` the first frame is a ``presence.snapshot``; after a reconnect the
        server replays what was missed (``replay.complete`` ends the replay). ``attach``
        ties the session's liveness to the socket. ``max_failures`` consecutive failed
        connects raise Unreachable (None: keep trying); a server that cannot be
        reached at the very first connect raises Unreachable at once. ``idle_timeout``
        ends the iterator after that many seconds without a frame. ``news`` (with
        ``attach``): subscribe the session to its news after each (re)connect, from the
        cursor it returns (None: a summary first); ``news`` frames come among the others.
        """
        return EventStream(self._frames(since, attach, max_failures, idle_timeout, news))

    def _frames(
        self,
        since: int | None,
        attach: bool,
        max_failures: int | None,
        idle_timeout: float | None,
        news: Callable[[], str | None] | None,
    ) -> Generator[m.Event, None, None]:
        from websockets.exceptions import ConnectionClosed, InvalidHandshake
        from websockets.sync.client import connect

        stream = Reconnects(self, since, max_failures)
        while True:
            try:
                with connect(
                    stream.url(), additional_headers=self._ws_headers(), open_timeout=self.timeout
                ) as ws:
                    stream.opened()
                    if attach:
                        ws.send(self._attach_frame())
                        if news is not None:
                            ws.send(_news_frame(news()))
                    while True:
                        try:
                            raw = ws.recv(timeout=idle_timeout)
                        except TimeoutError:
                            return
                        frame = stream.resume.accept(raw)
                        if frame is not None:
                            yield frame
            except ConnectionClosed as exc:
                code, reason = (exc.rcvd.code, exc.rcvd.reason) if exc.rcvd else (None, "")
                stream.closed(code, reason)
            except (OSError, InvalidHandshake, TimeoutError) as exc:
                stream.failed(exc)
            time.sleep(stream.delay())


class EventStream(Iterator[m.Event]):
    """The frames of ``Client.events()``: an iterator that is also a context manager.
    Closing it (``close()``, or leaving its ``with`` block) closes the socket and ends
    the iteration; an iteration abandoned without either closes it when the stream is
    garbage collected."""

    def __init__(self, frames: Generator[m.Event, None, None]) -> None:
        self._frames = frames

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> m.Event:
        return next(self._frames)

    def close(self) -> None:
        """Close the socket (the frames' generator exits its ``connect`` block)."""
        self._frames.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _news_frame(after: str | None) -> str:
    import json

    return json.dumps({"type": "news", **({"after": after} if after else {})})
