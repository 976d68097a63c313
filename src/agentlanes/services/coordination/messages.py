"""Messages between agents: to one agent name or ``broadcast``, with per-recipient read and
acknowledgement state. Each message is written with its ``message.created`` event, so every
subscriber (the recipient's attached socket among them) gets it live, body included."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, or_
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.clock import iso, utcnow
from agentlanes.errors import InvalidInput, NotFound
from agentlanes.services import validation
from agentlanes.services.agent_lookup import live_session_named, not_found
from agentlanes.services.context import ServiceContext
from agentlanes.services.paging import FIRST_PAGE, Page, PageRequest
from agentlanes.services.projection import LiveSession
from agentlanes.services.session_auth import active_session
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.coordination import Message, MessageReceipt, RegisteredAgent
from agentlanes.store.models import Project

BROADCAST = "broadcast"
DEFAULT_TYPE = "message"


HUMAN = "human"
AGENT = "agent"


@dataclass(frozen=True)
class MessageInput:
    to: str | None = None
    body: str | None = None
    type: str | None = None
    thread_id: str | None = None
    # A person speaking with the project key alone, under this name (SPEC "Many agents,
    # one working tree"): no session; the message is marked human.
    human: str | None = None


def message_view(m: Message, receipt: MessageReceipt | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        # Numbered per project (SPEC: not one sequence across projects).
        "message_id": m.number,
        "from": m.sender,
        # "agent", or "human": a person with the project key (lanes message send --as).
        "from_kind": m.sender_kind or AGENT,
        "from_session_id": m.sender_session_id,
        "to": m.recipient,
        "type": m.type,
        "thread_id": m.thread_id,
        "body": m.body,
        "created_at": iso(m.created_at),
    }
    # The reader's own state (null in the sender's copy and in the event).
    view["read_at"] = iso(receipt.read_at) if receipt else None
    view["acked_at"] = iso(receipt.acked_at) if receipt else None
    view["delivered_at"] = iso(receipt.delivered_at) if receipt else None
    return view


async def send(
    ctx: ServiceContext, project: Project, data: MessageInput, token: str | None
) -> dict[str, Any]:
    """Send a message from the caller's agent (or, with ``human``, from a person with the
    project key alone). The recipient need not be online, but must be known: a live
    session's agent name or display name (``claude-1``: stored as its agent name), a
    registered agent, or ``broadcast``; another name is a 404 ``AGENT_NOT_FOUND`` naming
    the live agents."""
    if data.human is not None:
        if not validation.AGENT_NAME_RE.match(data.human):
            raise InvalidInput("human", "must be a name of 1-64 of A-Z a-z 0-9 . _ -")
        if token:
            raise InvalidInput(
                "human", "a person speaks without a session: send no session token with it"
            )
    if data.to is None:
        raise InvalidInput("to", "required: an agent name or broadcast")
    if data.to != BROADCAST and not validation.AGENT_NAME_RE.match(data.to):
        raise InvalidInput("to", "must be an agent name (1-64 of A-Z a-z 0-9 . _ -) or broadcast")
    if data.body is None:
        raise InvalidInput("body", "required")
    if not data.body.strip():
        raise InvalidInput("body", "must not be empty")
    if len(data.body) > ctx.settings.max_message_body_chars:
        raise InvalidInput(
            "body", f"must be at most {ctx.settings.max_message_body_chars} characters"
        )
    kind = validation.check_text(
        data.type, "type", max_chars=LIMITS.message_type_chars, single_line=True
    )
    thread = validation.check_text(
        data.thread_id, "thread_id", max_chars=LIMITS.message_thread_chars, single_line=True
    )
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = (
            None
            if data.human is not None
            else await active_session(tx.db, project, token, within_ttl=True)
        )
        current = await ctx.projections.current(tx.db, project.id)
        live = await current.live(ctx.liveness, utcnow())
        if data.human is not None and live_session_named(live, data.human) is not None:
            raise InvalidInput(
                "human", f"{data.human!r} is a live agent's name: a person speaks as themselves"
            )
        recipient = await _recipient(tx.db, project.id, data.to, live)
        # The number is the offset of the message.created event written below: under
        # the project lock nothing else takes it meanwhile.
        last = await queries.last_offset_of(await tx.db.connection(), project.id)
        message = Message(
            number=last + 1,
            project_id=project.id,
            sender=session.agent_name if session is not None else str(data.human),
            sender_kind=AGENT if session is not None else HUMAN,
            sender_session_id=session.id if session is not None else None,
            recipient=recipient,
            type=kind or DEFAULT_TYPE,
            thread_id=thread,
            body=data.body,
            created_at=utcnow(),
        )
        tx.db.add(message)
        await tx.db.flush()  # the id
        view = message_view(message)
        event = await tx.emit("message.created", {"message": view})
        assert event["offset"] == message.number
    return view


async def _recipient(
    db: AsyncSession, project_id: int, to: str, live: Sequence[LiveSession]
) -> str:
    """The agent name a message to ``to`` goes to: ``broadcast``; a live session's agent
    name, or the agent name behind a display name; a registered agent's name. Else 404."""
    if to == BROADCAST:
        return to
    session = live_session_named(live, to)
    if session is not None:
        return session.agent_name
    registered = (
        await db.exec(
            select(RegisteredAgent.name).where(
                RegisteredAgent.project_id == project_id, RegisteredAgent.name == to
            )
        )
    ).first()
    if registered is not None:
        return to
    raise not_found(to, live)


def _inbox_condition(project_id: int, agent: str) -> Any:
    """Messages to the agent, and broadcasts from anyone else."""
    return and_(
        col(Message.project_id) == project_id,
        or_(
            col(Message.recipient) == agent,
            and_(col(Message.recipient) == BROADCAST, col(Message.sender) != agent),
        ),
    )


async def inbox(
    ctx: ServiceContext,
    project: Project,
    token: str | None,
    *,
    unread: bool = False,
    unacked: bool = False,
    type_: str | None = None,
    thread_id: str | None = None,
    after_id: int | None = None,
    page: PageRequest = FIRST_PAGE,
) -> dict[str, Any]:
    """The caller's agent's messages, oldest first, with this agent's read/ack state.

    Pages by ``limit``/``offset`` or by ``after_id`` (the last ``message_id`` seen)."""
    if after_id is not None and after_id < 0:
        raise InvalidInput("after_id", "must be 0 or more")
    assert project.id is not None
    async with ctx.db.read() as db:
        session = await active_session(db, project, token, within_ttl=True)
        agent = session.agent_name
        conditions: list[Any] = [_inbox_condition(project.id, agent)]
        if type_ is not None:
            conditions.append(Message.type == type_)
        if thread_id is not None:
            conditions.append(Message.thread_id == thread_id)
        if after_id is not None:
            conditions.append(col(Message.number) > after_id)
        join_on = and_(
            col(MessageReceipt.message_id) == Message.id,
            col(MessageReceipt.agent_name) == agent,
        )
        if unread:
            conditions.append(col(MessageReceipt.read_at).is_(None))
        if unacked:
            conditions.append(col(MessageReceipt.acked_at).is_(None))
        base = select(Message, MessageReceipt).outerjoin(MessageReceipt, join_on).where(*conditions)
        rows = (
            await db.exec(base.order_by(col(Message.id)).limit(page.limit).offset(page.offset))
        ).all()
        total = (
            await db.exec(
                select(func.count())
                .select_from(Message)
                .outerjoin(MessageReceipt, join_on)
                .where(*conditions)
            )
        ).one()
        unread_count = (
            await db.exec(
                select(func.count())
                .select_from(Message)
                .outerjoin(MessageReceipt, join_on)
                .where(_inbox_condition(project.id, agent), col(MessageReceipt.read_at).is_(None))
            )
        ).one()
    return Page(rows, int(total), page).answer(
        "messages", lambda row: message_view(*row), agent_name=agent, unread=int(unread_count)
    )


async def _mine(db: AsyncSession, project_id: int, message_id: int, agent: str) -> Message:
    message = (
        await db.exec(
            select(Message).where(Message.project_id == project_id, Message.number == message_id)
        )
    ).first()
    if message is None or not (
        message.recipient == agent or (message.recipient == BROADCAST and message.sender != agent)
    ):
        raise NotFound(f"no message {message_id} in this agent's inbox")
    return message


async def mark(
    ctx: ServiceContext, project: Project, message_id: int, token: str | None, *, ack: bool
) -> dict[str, Any]:
    """Mark a message read (or acknowledged, which implies read) for the caller's agent.
    Idempotent: the first time writes ``message.read`` / ``message.acked``, later calls
    change nothing and write no event."""
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token, within_ttl=True)
        agent = session.agent_name
        message = await _mine(tx.db, project.id, message_id, agent)
        receipt = (
            await tx.db.exec(
                select(MessageReceipt).where(
                    MessageReceipt.message_id == message.id, MessageReceipt.agent_name == agent
                )
            )
        ).first()
        if receipt is None:
            assert message.id is not None
            receipt = MessageReceipt(message_id=message.id, agent_name=agent)
        now = utcnow()
        changed = False
        if receipt.read_at is None:
            receipt.read_at = now
            changed = True
        if ack and receipt.acked_at is None:
            receipt.acked_at = now
            changed = True
        if changed:
            tx.db.add(receipt)
            await tx.emit(
                "message.acked" if ack else "message.read",
                {
                    "message_id": message.number,
                    "agent_name": agent,
                    "read_at": iso(receipt.read_at),
                    "acked_at": iso(receipt.acked_at),
                },
            )
        view = message_view(message, receipt)
    return view


async def unread_count(ctx: ServiceContext, project: Project, agent: str) -> int:
    """How many messages to ``agent`` (broadcasts included) it has not read."""
    assert project.id is not None
    join_on = and_(
        col(MessageReceipt.message_id) == Message.id,
        col(MessageReceipt.agent_name) == agent,
    )
    async with ctx.db.read() as db:
        count = (
            await db.exec(
                select(func.count())
                .select_from(Message)
                .outerjoin(MessageReceipt, join_on)
                .where(_inbox_condition(project.id, agent), col(MessageReceipt.read_at).is_(None))
            )
        ).one()
    return int(count)


async def mark_delivered(
    ctx: ServiceContext, project: Project, agent: str, message_ids: list[int]
) -> list[int]:
    """Record that these messages were put in ``agent``'s context (its news): each
    receipt's ``delivered_at`` is set once; one ``message.delivered`` event names the
    ones newly delivered. Ids not in the agent's inbox are skipped. Returns those ids."""
    assert project.id is not None
    wanted = sorted(set(message_ids))
    if not wanted:
        return []
    async with ctx.project_tx(project.id) as tx:
        # ``message_ids`` are the public numbers (per project); receipts key on the row id.
        rows = (
            await tx.db.exec(
                select(Message.id, Message.number).where(
                    Message.project_id == project.id,
                    col(Message.number).in_(wanted),
                    _inbox_condition(project.id, agent),
                )
            )
        ).all()
        numbers: dict[int, int] = {}
        for row_id, number in rows:
            assert row_id is not None  # a stored row's id
            numbers[int(row_id)] = int(number)
        mine = set(numbers)
        receipts = {
            r.message_id: r
            for r in (
                await tx.db.exec(
                    select(MessageReceipt).where(
                        col(MessageReceipt.message_id).in_(mine),
                        MessageReceipt.agent_name == agent,
                    )
                )
            ).all()
        }
        now = utcnow()
        delivered = []
        for message_id in sorted(mine, key=numbers.__getitem__):
            receipt = receipts.get(message_id) or MessageReceipt(
                message_id=message_id, agent_name=agent
            )
            if receipt.delivered_at is None:
                receipt.delivered_at = now
                tx.db.add(receipt)
                delivered.append(numbers[message_id])
        if delivered:
            await tx.emit(
                "message.delivered",
                {"message_ids": delivered, "agent_name": agent, "delivered_at": iso(now)},
            )
    return delivered
