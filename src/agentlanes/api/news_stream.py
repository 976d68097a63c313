"""The agent's news on its event socket (SPEC "The agent's news"): after ``{"type": "news",
"after": CURSOR}`` on a socket that attached the session, each item that concerns it goes
out as ``{"type": "news", "item": {...}}`` as the events that make it arrive.

The items come from the same place as ``GET /api/v1/news`` (``services/news.py``): the
live projection's recent events, after this socket's own news cursor. The socket's pump
calls :meth:`NewsPush.push` after each event it sends; the cost is that event's item, not
the swarm's size.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentlanes.errors import AgentlanesError, InvalidInput, SessionEnded
from agentlanes.services import news
from agentlanes.services.context import ServiceContext
from agentlanes.services.sessions import current_projection
from agentlanes.store.models import Project


class NewsPush:
    """One attached session's news on one socket."""

    def __init__(self, ctx: ServiceContext, project: Project, session_id: str, send: Any) -> None:
        self.ctx = ctx
        self.project = project
        self.session_id = session_id
        self.send = send  # async (frame: dict) -> None
        self.cursor: tuple[int, str] | None = None
        self.ended = False
        self._lock = asyncio.Lock()

    async def start(self, after: str | None) -> None:
        """Send what is waiting after ``after`` (a summary without it, or when it is too
        old), then follow the events."""
        cursor = news.parse_cursor(after)
        async with self._lock:
            assert self.project.id is not None
            current = await current_projection(self.ctx, self.project.id)
            mine = current.sessions.get(self.session_id)
            if mine is None:
                raise SessionEnded(self.session_id, "checked_out")
            while True:
                answer = await news.answer(
                    self.ctx, self.project, current, mine, cursor, self.ctx.settings.news_max_items
                )
                for item in answer["items"]:
                    await self.send({"type": "news", "item": item})
                cursor = news.parse_cursor(answer["cursor"])
                if not answer["more"]:
                    break
            self.cursor = cursor

    async def push(self) -> None:
        """Send the items of the events applied since the last push."""
        if self.cursor is None or self.ended:
            return
        async with self._lock:
            assert self.project.id is not None
            current = await current_projection(self.ctx, self.project.id)
            mine = current.sessions.get(self.session_id)
            if mine is None:
                self.ended = True  # the session ended: its news with it
                return
            offset, epoch = self.cursor
            if not news.covered(current, self.cursor, self.project.epoch):
                answer = await news.answer(self.ctx, self.project, current, mine, None, 1)
                for item in answer["items"]:
                    await self.send({"type": "news", "item": item})
                self.cursor = news.parse_cursor(answer["cursor"])
                return
            last = offset
            # A copy: the kept events may change while a frame is being sent.
            for recent in list(news.events_after(current, offset)):
                item = news.item_for(self.ctx, self.project, current, mine, recent)
                if item is not None:
                    await self.send({"type": "news", "item": item})
                last = recent.offset
            self.cursor = (last, epoch)


async def subscribe(
    ctx: ServiceContext,
    project: Project,
    attached: dict[str, None],
    message: dict[str, Any],
    send: Any,
) -> NewsPush | None:
    """Handle a client ``news`` frame: a NewsPush for the attached session, or an error
    frame (and None) when the socket attached none or the cursor is not one."""
    after = message.get("after")
    try:
        if after is not None and not isinstance(after, str):
            raise InvalidInput("after", "must be a cursor string")
        if not attached:
            raise InvalidInput("type", "news needs a session: send attach first")
        session_id = next(reversed(attached))
        push = NewsPush(ctx, project, session_id, send)
        await push.start(after)
    except AgentlanesError as exc:
        await send({"type": "error", **exc.body()})
        return None
    return push
