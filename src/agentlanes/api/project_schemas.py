"""Request bodies of the admin project routes (types, shapes and ranges, as in
``ProjectCreate``; the service checks the cross-field rule: TTL at least the interval)."""

from __future__ import annotations

from typing import Literal

from litestar.openapi.spec import OpenAPIType, Schema
from pydantic import Field, StrictInt, StrictStr

from agentlanes.api import fields
from agentlanes.api.schemas import Body
from agentlanes.services.projects import MAX_GRACE_SECONDS


class ProjectUpdate(Body):
    """PATCH: every field optional; the ones given change, the others stay (a body that
    gives none changes nothing)."""

    name: StrictStr | None = fields.text(200, description="1-200 characters")
    conflict_mode: Literal["warn", "block"] | None = None
    heartbeat_interval_seconds: StrictInt | None = fields.integer(
        1, 86_400, description="At most heartbeat_ttl_seconds (the new or the current one)"
    )
    heartbeat_ttl_seconds: StrictInt | None = fields.integer(
        1, 604_800, description="At least heartbeat_interval_seconds"
    )
    agent_config_keys: list[StrictStr] | None = Field(
        None,
        json_schema_extra={
            "items": Schema(
                type=OpenAPIType.STRING,
                min_length=1,
                max_length=64,
                schema_not=Schema(type=OpenAPIType.STRING, pattern="[^A-Za-z0-9_.-]"),
            ),
            "description": "Replaces the list of agent config keys (1-64 of A-Z a-z 0-9 _ . -)",
        },
    )


class KeyRotation(Body):
    grace_seconds: StrictInt | None = fields.integer(
        0,
        MAX_GRACE_SECONDS,
        description="Seconds the replaced key keeps working (default: key_rotation_grace_seconds)",
    )
