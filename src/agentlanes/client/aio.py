"""The asyncio client: the same methods as ``Client``, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from agentlanes.client import calls
from agentlanes.client import models as m
from agentlanes.client.base import ClientBase, Reconnects
from agentlanes.client.calls import Call

T = TypeVar("T")


class AsyncClient(ClientBase[httpx.AsyncBaseTransport, Coroutine[Any, Any, Any]]):
    """Talk to an agentlanes server from asyncio code. See ``Client`` for the methods;
    ``transport`` here is an ``httpx.AsyncBaseTransport``."""

    _http: httpx.AsyncClient

    def _open_http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, timeout=self.timeout, transport=self.transport)

    def _runner(self) -> Callable[[Call[Any]], Coroutine[Any, Any, Any]]:
        return self.run

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def run(self, call: Call[T]) -> T:
        """Send one prepared call and parse its answer (raises ApiError / Unreachable)."""
        request = self._request_args(call)
        try:
            response = await self._http.request(**request)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None
        return self._result(call, response.status_code, response.text)

    async def request(
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
        return await self.run(calls.any_route(method, path, body, params, with_token=with_token))

    # -- sessions --------------------------------------------------------------------------
    async def checkin(
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
        result = await self.run(
            calls.checkin(agent_name, declared_area, declared_files, meta, claims)
        )
        self.session_token = result.session_token
        return result

    async def heartbeat(self) -> m.HeartbeatResult:
        """Keep the session alive (410 ``SESSION_ENDED`` once it has ended)."""
        return await self.run(calls.heartbeat())

    async def status(
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
        return await self.run(calls.status(declared_area, declared_files, status_text, edits))

    async def checkout(
        self,
        outcome_status: m.OutcomeStatus | None = None,
        work_summary: str | None = None,
        *,
        files_touched: list[str] | None = None,
    ) -> m.CheckoutResult:
        """End the session with an outcome (completed, partial, failed)."""
        return await self.run(calls.checkout(outcome_status, work_summary, files_touched))

    async def news(
        self, after: str | None = None, *, limit: int | None = None, deliver: bool = False
    ) -> Any:
        """What concerns this session after the cursor ``after`` (None: a summary of the
        current state and a cursor): ``{"items", "cursor", "more", "recovered"}``.
        ``deliver``: the items go into an agent's context, so its messages count as
        delivered."""
        return await self.run(calls.news(after, limit, deliver))

    async def presence(self) -> m.Presence:
        """The project's live sessions, oldest first, and the offset they reflect."""
        return await self.run(calls.presence())

    async def check_conflicts(
        self,
        paths: list[str] | None = None,
        *,
        patterns: list[str] | None = None,
        declared_area: str | None = None,
    ) -> m.ConflictCheck:
        """What these paths / patterns / area collide with; the own session is left out."""
        return await self.run(calls.check_conflicts(paths, patterns, declared_area))

    async def session_conflicts(
        self, session_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> m.SessionConflicts:
        """A page of the current conflicts of a live session of the project (answers and
        events carry only the first ones): pass the page's ``next_cursor`` for the next."""
        return await self.run(calls.session_conflicts(session_id, cursor, limit))

    async def project(self) -> m.ProjectInfo:
        """The project the API key opens (its conflict mode and heartbeat settings)."""
        return await self.run(calls.project())

    async def event_log(
        self, since: int | None = None, *, limit: int | None = None, epoch: str | None = None
    ) -> m.EventLog:
        """Events after ``since`` over HTTP (of history ``epoch``, when given)."""
        return await self.run(calls.event_log(since, limit, epoch))

    # -- waiting for a lane (SPEC) ---------------------------------------------------------
    async def queue_wait(
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
        return await self.run(calls.queue_wait(paths, timeout_seconds, urgency))

    async def queue(
        self,
        *,
        session_id: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> m.QueueList:
        """The project's waits in line order, with positions and holders."""
        return await self.run(calls.queue_list(session_id, limit, offset))

    async def queue_cancel(self, queue_id: str) -> m.Wait:
        """Stop waiting (this session's own wait); those behind it move up."""
        return await self.run(calls.queue_cancel(queue_id))

    async def ask(self, to: str, paths: list[str], reason: str) -> m.ReleaseRequest:
        """Ask the holder ``to`` (name or display name) to release ``paths``: news to it;
        its release (or message) is news to this session."""
        return await self.run(calls.ask(to, paths, reason))

    async def hotspots(self, days: int | None = None, *, limit: int | None = None) -> m.Hotspots:
        """The paths most refused and waited for in the last ``days`` days."""
        return await self.run(calls.hotspots(days, limit))

    # -- event stream ----------------------------------------------------------------------
    def events(
        self,
        since: int | None = None,
        *,
        attach: bool = False,
        max_failures: int | None = None,
        idle_timeout: float | None = None,
    ) -> AsyncEventStream:
        """Every frame of the live stream, reconnecting with ``since`` on its own.

        Same behaviour as ``Client.events``: ``async for event in client.events(): ...``,
        or ``async with client.events() as stream:``, which closes the socket on leaving
        (``await stream.aclose()`` does the same).
        """
        return AsyncEventStream(self._frames(since, attach, max_failures, idle_timeout))

    async def _frames(
        self,
        since: int | None,
        attach: bool,
        max_failures: int | None,
        idle_timeout: float | None,
    ) -> AsyncGenerator[m.Event, None]:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed, InvalidHandshake

        stream = Reconnects(self, since, max_failures)
        while True:
            try:
                async with connect(
                    stream.url(), additional_headers=self._ws_headers(), open_timeout=self.timeout
                ) as ws:
                    stream.opened()
                    if attach:
                        await ws.send(self._attach_frame())
                    while True:
                        try:
                            raw = await asyncio.wait_for(ws.recv(), idle_timeout)
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
            await asyncio.sleep(stream.delay())


class AsyncEventStream(AsyncIterator[m.Event]):
    """The frames of ``AsyncClient.events()``: an async iterator that is also an async
    context manager. Closing it (``await aclose()``, or leaving its ``async with`` block)
    closes the socket and ends the iteration."""

    def __init__(self, frames: AsyncGenerator[m.Event, None]) -> None:
        self._frames = frames

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> m.Event:
        return await anext(self._frames)

    async def aclose(self) -> None:
        """Close the socket (the frames' generator exits its ``connect`` block)."""
        await self._frames.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
