"""The project's recent messages, whoever they are for, with every reader's state: what a
dashboard shows (an agent's own view is its inbox)."""

from __future__ import annotations

from typing import Any

from sqlmodel import col, select

from agentlanes.clock import iso
from agentlanes.errors import InvalidInput
from agentlanes.services.context import ServiceContext
from agentlanes.services.coordination.messages import message_view
from agentlanes.settings import LIMITS
from agentlanes.store.coordination import Message, MessageReceipt
from agentlanes.store.models import Project

DEFAULT_LIMIT = 100


async def recent_messages(
    ctx: ServiceContext, project: Project, *, limit: int | None = None
) -> dict[str, Any]:
    """The newest ``limit`` messages, newest first, each with ``receipts``: one
    ``{agent_name, read_at, acked_at, delivered_at}`` per agent that has had it in its
    context (its news) or read it."""
    if limit is None:
        limit = DEFAULT_LIMIT
    if not 1 <= limit <= LIMITS.message_board_limit:
        raise InvalidInput("limit", f"must be 1-{LIMITS.message_board_limit}")
    assert project.id is not None
    async with ctx.db.read() as db:
        rows = (
            await db.exec(
                select(Message)
                .where(Message.project_id == project.id)
                .order_by(col(Message.id).desc())
                .limit(limit)
            )
        ).all()
        ids = [m.id for m in rows]
        receipts = (
            (
                await db.exec(
                    select(MessageReceipt)
                    .where(col(MessageReceipt.message_id).in_(ids))
                    .order_by(col(MessageReceipt.id))
                )
            ).all()
            if ids
            else []
        )
    by_message: dict[int, list[dict[str, Any]]] = {}
    for r in receipts:
        by_message.setdefault(r.message_id, []).append(
            {
                "agent_name": r.agent_name,
                "read_at": iso(r.read_at),
                "acked_at": iso(r.acked_at),
                "delivered_at": iso(r.delivered_at),
            }
        )
    messages = []
    for m in rows:
        view = message_view(m)
        # The per-reader fields of message_view belong to an inbox, not to this list.
        view.pop("read_at", None)
        view.pop("acked_at", None)
        view.pop("delivered_at", None)
        view["receipts"] = by_message.get(m.id or 0, [])
        messages.append(view)
    return {"messages": messages}
