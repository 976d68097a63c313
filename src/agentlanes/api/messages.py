"""Messages over HTTP: send, the inbox, read and acknowledge."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.params import FromPath, FromQuery, JSONBody

from agentlanes.api.answers import Inbox, MessageView, answer
from agentlanes.api.coordination_schemas import EmptyBody, MessageBody
from agentlanes.api.deps import Ctx, Proj, Req, api_key_guard, session_token
from agentlanes.api.openapi import SESSION_OPTIONAL, SESSION_REQUIRED, contract
from agentlanes.api.query import (
    MAX_INT,
    Flag,
    PageLimit,
    PageOffset,
    QueryInt,
    bool_param,
    int_range,
    page_param,
)
from agentlanes.errors import NotFound
from agentlanes.services.coordination import messages

AfterId = Annotated[QueryInt | None, int_range(0, MAX_INT, "Only messages with a greater id")]


def _message_id(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or int(raw) > MAX_INT:
        raise NotFound(f"no message {raw!r}")
    return int(raw)


class MessageController(Controller):
    path = "/api/v1/messages"
    tags = ["messages"]
    guards = [api_key_guard]

    @post(
        "/",
        status_code=201,
        opt=contract(404, session=SESSION_OPTIONAL),
        responses=answer(201, MessageView, "The message as sent"),
        summary="Send a message to an agent or broadcast (or, with human, as a person)",
    )
    async def send(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        data: JSONBody[MessageBody],
    ) -> dict[str, Any]:
        body = data
        return await messages.send(
            ctx,
            project,
            messages.MessageInput(
                to=body.to,
                body=body.body,
                type=body.type,
                thread_id=body.thread_id,
                human=body.human,
            ),
            session_token(request, body),
        )

    @get(
        "/inbox",
        opt=contract(session=SESSION_REQUIRED),
        responses=answer(200, Inbox, "A page of the inbox, with the unread count"),
        summary="This agent's messages, broadcasts included",
    )
    async def inbox(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        unread: Flag = None,
        unacked: Flag = None,
        type: FromQuery[str | None] = None,
        thread_id: FromQuery[str | None] = None,
        after_id: AfterId = None,
        limit: PageLimit = None,
        offset: PageOffset = None,
    ) -> dict[str, Any]:
        return await messages.inbox(
            ctx,
            project,
            session_token(request),
            unread=bool(bool_param("unread", unread)),
            unacked=bool(bool_param("unacked", unacked)),
            type_=type,
            thread_id=thread_id,
            after_id=after_id,
            page=page_param(limit, offset),
        )

    @post(
        "/{message_id:str}/read",
        status_code=200,
        opt=contract(session=SESSION_REQUIRED),
        responses=answer(200, MessageView, "The message with its read time"),
        summary="Mark a message read",
    )
    async def read(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        message_id: FromPath[str],
        data: JSONBody[EmptyBody | None] = None,
    ) -> dict[str, Any]:
        return await messages.mark(
            ctx, project, _message_id(message_id), session_token(request, data), ack=False
        )

    @post(
        "/{message_id:str}/ack",
        status_code=200,
        opt=contract(session=SESSION_REQUIRED),
        responses=answer(200, MessageView, "The message with its acknowledgement"),
        summary="Acknowledge a message",
    )
    async def ack(
        self,
        request: Req,
        ctx: Ctx,
        project: Proj,
        message_id: FromPath[str],
        data: JSONBody[EmptyBody | None] = None,
    ) -> dict[str, Any]:
        return await messages.mark(
            ctx, project, _message_id(message_id), session_token(request, data), ack=True
        )
