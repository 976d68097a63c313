"""Request bodies of the queue routes (SPEC "Waiting for a lane"): a wait for a lane and a
release request. Unknown fields are refused, as in ``schemas.py``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictInt, StrictStr

from agentlanes.api import fields
from agentlanes.api.schemas import TokenBody
from agentlanes.settings import LIMITS


def _paths(description: str) -> Any:
    return Field(
        ...,
        json_schema_extra={
            "minItems": 1,
            "maxItems": LIMITS.queue_paths,
            "items": {"type": "string", "format": "glob-pattern", "minLength": 1},
            "description": description,
        },
    )


class QueueBody(TokenBody):
    paths: list[StrictStr] = _paths(
        f"The paths (or patterns) to wait for, at most {LIMITS.queue_paths}; granted when "
        "every one is free for this session"
    )
    timeout_seconds: StrictInt | None = fields.integer(
        1,
        LIMITS.queue_timeout_max_seconds,
        description=f"How long to wait (default {LIMITS.queue_timeout_default_seconds})",
    )
    urgency: Literal["low", "normal", "high"] | None = fields.one_of(
        "low", "normal", "high", description="Order in line: urgency first, then arrival"
    )


class ReleaseRequestBody(TokenBody):
    to: StrictStr = fields.name("The holder: a live agent's name or display name", required=True)
    paths: list[StrictStr] = _paths("The paths to ask it to release")
    reason: StrictStr = fields.text(
        LIMITS.release_reason_chars, required=True, description="Why you need them"
    )
