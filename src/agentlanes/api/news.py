"""The agent's news over HTTP (SPEC "The agent's news"): ``GET /api/v1/news``, and
``POST /api/v1/news`` for a caller that puts the items in an agent's context (it marks the
messages among them delivered)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.openapi.spec import OpenAPIType
from litestar.params import JSONBody, QueryParameter
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
)

from agentlanes.api.answers import answer
from agentlanes.api.deps import Ctx, Proj, Req, api_key_guard, session_token
from agentlanes.api.openapi import SESSION_REQUIRED, contract
from agentlanes.api.query import MAX_INT, QueryInt, int_range
from agentlanes.api.schemas import TokenBody
from agentlanes.services import news

After = Annotated[
    str | None,
    QueryParameter(
        schema_extra={
            "one_of": None,
            "description": "The cursor of an earlier answer; absent: the current state's summary",
            "type": OpenAPIType.STRING,
            "pattern": news.CURSOR_PATTERN,
        }
    ),
]
Limit = Annotated[
    QueryInt | None,
    int_range(1, 1000, "How many items at most (default and most: news_max_items, 50)"),
]


class NewsItem(BaseModel):
    """One thing that concerns the session; further fields name what it refers to
    (``session_id``, ``agent_name``, ``path``, ``your_pattern``, ``their_pattern``,
    ``certain``, ``message_id``, ``task_id``, ``resource``, ``consensus_id``...)."""

    model_config = ConfigDict(extra="allow")

    cursor: str = Field(description="Read on after this item with ?after=")
    kind: news.Kind
    at: datetime | None
    text: str = Field(description="One line for an LLM: who, which path, whether certain")


class NewsAnswer(BaseModel):
    items: list[NewsItem]
    cursor: str = Field(description="Where to read next (the current position without items)")
    more: bool = Field(description="More items wait after cursor")
    recovered: bool = Field(
        description="False: the cursor was too old or of another history; the one item "
        "sums up the current state instead of the missed items"
    )
    epoch: str


class NewsBody(TokenBody):
    after: StrictStr | None = Field(
        default=None,
        pattern=news.CURSOR_PATTERN,
        json_schema_extra={
            "pattern": news.CURSOR_PATTERN,
            "description": "The cursor of an earlier answer; absent: the current state's summary",
        },
    )
    limit: StrictInt | None = Field(
        default=None, ge=1, le=1000, description="At most news_max_items (50) are sent"
    )
    deliver: StrictBool = Field(
        default=False,
        description="The caller puts these items in the agent's context: the messages "
        "among them count as delivered (delivered_at)",
    )


def _json_integer(value: Any) -> Any:
    """JSON has numbers: 4.0 is the integer 4 (as JSON Schema's ``integer`` says)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


MessageId = Annotated[StrictInt, BeforeValidator(_json_integer), Field(ge=0, le=MAX_INT)]


class DeliveredBody(TokenBody):
    message_ids: list[MessageId] = Field(
        max_length=news.DELIVERED_MAX,
        description="Messages put in the context",
        json_schema_extra={"items": {"type": "integer", "minimum": 0, "maximum": MAX_INT}},
    )


class DeliveredAnswer(BaseModel):
    agent_name: str
    delivered: list[int] = Field(description="The ids newly marked delivered")


class NewsController(Controller):
    path = "/api/v1/news"
    tags = ["news"]
    guards = [api_key_guard]

    @get(
        "/",
        opt=contract(410, session=SESSION_REQUIRED),
        responses=answer(200, NewsAnswer, "The items after the cursor, oldest first"),
        summary="What concerns this session since the cursor (the agent's news)",
    )
    async def read(
        self, request: Req, ctx: Ctx, project: Proj, after: After = None, limit: Limit = None
    ) -> dict[str, Any]:
        return await news.news(ctx, project, session_token(request), after=after, limit=limit)

    @post(
        "/",
        status_code=200,
        opt=contract(410, session=SESSION_REQUIRED),
        responses=answer(200, NewsAnswer, "The items after the cursor, oldest first"),
        summary="The agent's news, marking its messages delivered (put in the agent's context)",
    )
    async def deliver(
        self, request: Req, ctx: Ctx, project: Proj, data: JSONBody[NewsBody]
    ) -> dict[str, Any]:
        return await news.news(
            ctx,
            project,
            session_token(request, data),
            after=data.after,
            limit=data.limit,
            deliver=data.deliver,
        )

    @post(
        "/delivered",
        status_code=200,
        opt=contract(410, session=SESSION_REQUIRED),
        responses=answer(200, DeliveredAnswer, "The messages newly marked delivered"),
        summary="Mark messages delivered: a hook put them in the agent's context",
    )
    async def delivered(
        self, request: Req, ctx: Ctx, project: Proj, data: JSONBody[DeliveredBody]
    ) -> dict[str, Any]:
        return await news.delivered(ctx, project, session_token(request, data), data.message_ids)
