"""Read models for the dashboard: every task with why it waits, every recent message with
its readers. Agents use their own views (the ready list, their inbox)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get

from agentlanes.api.deps import Ctx, Proj, api_key_guard
from agentlanes.api.query import QueryInt, int_range
from agentlanes.services.coordination import message_board, task_board
from agentlanes.settings import LIMITS

# An integer (api/query.py: our 400 naming it); documented as the range the service takes.
Limit = Annotated[
    QueryInt | None, int_range(1, LIMITS.message_board_limit, "How many messages at most")
]


class BoardController(Controller):
    path = "/api/v1/board"
    tags = ["dashboard"]
    guards = [api_key_guard]

    @get("/tasks", summary="Every open task, its state and why it is not ready")
    async def tasks(self, ctx: Ctx, project: Proj) -> dict[str, Any]:
        return await task_board.task_board(ctx, project)

    @get("/messages", summary="Recent messages of the project with their readers")
    async def messages(self, ctx: Ctx, project: Proj, limit: Limit = None) -> dict[str, Any]:
        return await message_board.recent_messages(ctx, project, limit=limit)
