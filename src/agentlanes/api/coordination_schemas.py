"""Request bodies of the coordination routes: types and shapes only (the services check
values and name the field). Unknown fields are refused, as in ``schemas.py``."""

from __future__ import annotations

from typing import Any

from pydantic import StrictInt, StrictStr

from agentlanes.api.schemas import Body, EmptyBody, TokenBody

__all__ = [
    "AgentBody",
    "CheckpointBody",
    "ConsensusBody",
    "EmptyBody",
    "LeaseBody",
    "MessageBody",
    "NoteBody",
    "RenewBody",
    "ResolveBody",
    "TaskBody",
    "TaskStatusBody",
    "ValidateBody",
    "VoteBody",
]


class TaskBody(TokenBody):
    title: StrictStr | None = None
    description: StrictStr | None = None
    priority: StrictInt | None = None
    paths: list[StrictStr] | None = None
    depends_on: list[StrictStr] | None = None
    parent_id: StrictStr | None = None


class TaskStatusBody(TokenBody):
    status: StrictStr | None = None
    note: StrictStr | None = None


class NoteBody(TokenBody):
    body: StrictStr | None = None


class CheckpointBody(TokenBody):
    name: StrictStr | None = None
    task_ids: list[StrictStr] | None = None
    description: StrictStr | None = None


class ResolveBody(TokenBody):
    status: StrictStr | None = None
    note: StrictStr | None = None


class MessageBody(TokenBody):
    to: StrictStr | None = None
    body: StrictStr | None = None
    type: StrictStr | None = None
    thread_id: StrictStr | None = None


class LeaseBody(TokenBody):
    resource: StrictStr | None = None
    ttl_seconds: StrictInt | None = None


class RenewBody(TokenBody):
    ttl_seconds: StrictInt | None = None


class ValidateBody(Body):
    resource: StrictStr | None = None
    fencing_token: StrictInt | None = None


class ConsensusBody(TokenBody):
    action: StrictStr | None = None
    subject: StrictStr | None = None
    reason: StrictStr | None = None
    timeout_seconds: StrictInt | None = None


class VoteBody(TokenBody):
    vote: StrictStr | None = None
    comment: StrictStr | None = None


class AgentBody(Body):
    role: StrictStr | None = None
    config: dict[str, Any] | None = None
