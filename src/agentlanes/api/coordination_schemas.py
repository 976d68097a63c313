"""Request bodies of the coordination routes: types and shapes, with the services' rules
written into the schemas (api/fields.py); the services check the values and name the field.
Unknown fields are refused, as in ``schemas.py``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictInt, StrictStr

from agentlanes.api import fields
from agentlanes.api.fields import Limit
from agentlanes.api.schemas import Body, EmptyBody, TokenBody
from agentlanes.services.coordination import messages, tasks
from agentlanes.settings import LIMITS

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
    title: StrictStr = fields.text(LIMITS.task_title_chars, required=True, single_line=True)
    description: StrictStr | None = fields.text(LIMITS.task_description_chars)
    priority: StrictInt | None = fields.integer(
        tasks.PRIORITY_MIN, tasks.PRIORITY_MAX, description="0 = most urgent; default 2"
    )
    paths: list[StrictStr] | None = fields.patterns("File patterns the task will touch")
    depends_on: list[StrictStr] | None = fields.ids(
        LIMITS.task_dependencies, description="Ids of tasks (of this project) it waits for"
    )
    parent_id: StrictStr | None = Field(None, description="Id of a task of this project")


class TaskStatusBody(TokenBody):
    status: Literal["pending", "in_progress", "blocked", "done", "cancelled"] = fields.one_of(
        *tasks.STATUSES,
        required=True,
        description="The new status; allowed moves depend on the current one (409 otherwise)",
    )
    note: StrictStr | None = fields.text(LIMITS.task_note_chars)


class NoteBody(TokenBody):
    body: StrictStr = fields.text(LIMITS.task_note_chars, required=True)


class CheckpointBody(TokenBody):
    name: StrictStr = fields.text(LIMITS.checkpoint_name_chars, required=True)
    task_ids: list[StrictStr] = fields.ids(
        LIMITS.checkpoint_tasks, required=True, description="Ids of tasks of this project"
    )
    description: StrictStr | None = fields.text(LIMITS.checkpoint_description_chars)


class ResolveBody(TokenBody):
    status: Literal["passed", "failed"] = fields.one_of("passed", "failed", required=True)
    note: StrictStr | None = fields.text(LIMITS.checkpoint_description_chars)


class MessageBody(TokenBody):
    to: StrictStr = Field(
        ...,
        json_schema_extra={
            "anyOf": [
                {"const": messages.BROADCAST},
                {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 64,
                    "not": {"type": "string", "pattern": f"[^{fields.NAME_CHARS}]"},
                },
            ],
            "description": "A live agent's name or display name (claude-1), a registered "
            "agent's name, or `broadcast`; another name: 404 AGENT_NOT_FOUND",
        },
    )
    body: StrictStr = Field(
        ...,
        json_schema_extra={
            "minLength": 1,
            "maxLength": Limit("max_message_body_chars"),
            "pattern": fields.NON_BLANK,
        },
    )
    type: StrictStr | None = fields.text(LIMITS.message_type_chars, single_line=True)
    thread_id: StrictStr | None = fields.text(LIMITS.message_thread_chars, single_line=True)
    human: StrictStr | None = fields.name(
        "A person speaking with the project key alone, under this name (no session token "
        "with it); the message is marked human (`from_kind`)"
    )


class LeaseBody(TokenBody):
    resource: StrictStr = fields.resource()
    ttl_seconds: StrictInt | None = fields.integer(
        1, Limit("lease_max_seconds"), description="Default: the lease_default_seconds setting"
    )


class RenewBody(TokenBody):
    ttl_seconds: StrictInt | None = fields.integer(
        1, Limit("lease_max_seconds"), description="Default: the lease_default_seconds setting"
    )


class ValidateBody(Body):
    resource: StrictStr = fields.resource()
    fencing_token: StrictInt = Field(
        ...,
        json_schema_extra={"minimum": 1, "description": "The fencing token of the grant to check"},
    )


class ConsensusBody(TokenBody):
    action: StrictStr = fields.text(LIMITS.consensus_action_chars, required=True, single_line=True)
    subject: StrictStr | None = fields.text(LIMITS.consensus_subject_chars)
    reason: StrictStr = fields.text(LIMITS.consensus_reason_chars, required=True)
    timeout_seconds: StrictInt | None = fields.integer(
        1,
        Limit("consensus_max_timeout_seconds"),
        description="Default: the consensus_default_timeout_seconds setting",
    )


class VoteBody(TokenBody):
    vote: Literal["approve", "reject"] = fields.one_of("approve", "reject", required=True)
    comment: StrictStr | None = fields.text(LIMITS.consensus_comment_chars)


class AgentBody(Body):
    role: StrictStr | None = Field(
        None,
        json_schema_extra={
            "minLength": 1,
            "maxLength": 64,
            "not": {"type": "string", "pattern": "[^A-Za-z0-9._ -]"},
            "description": "1-64 of A-Z a-z 0-9 . _ - and spaces",
        },
    )
    config: dict[str, Any] | None = fields.json_object(
        LIMITS.agent_config_bytes,
        "Settings for the agent; keys the project does not declare are dropped",
    )

    SIZED = {"config": LIMITS.agent_config_bytes}
