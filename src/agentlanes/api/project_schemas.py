"""Request bodies of the admin project routes (types, shapes and ranges, as in
``ProjectCreate``; the service checks the cross-field rule: TTL at least the interval)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

from agentlanes.api import fields
from agentlanes.api.schemas import Body
from agentlanes.settings import LIMITS


class ProjectUpdate(Body):
    """PATCH: every field optional; the ones given change, the others stay (a body that
    gives none changes nothing)."""

    name: StrictStr | None = fields.text(
        LIMITS.project_name_chars, nonblank=True, description="1-200 characters"
    )
    conflict_mode: Literal["warn", "block"] | None = None
    heartbeat_interval_seconds: StrictInt | None = fields.heartbeat_interval(
        "At most heartbeat_ttl_seconds (the new or the current one)"
    )
    heartbeat_ttl_seconds: StrictInt | None = fields.heartbeat_ttl()
    agent_config_keys: list[StrictStr] | None = fields.config_keys(
        "Replaces the list of agent config keys (1-64 of A-Z a-z 0-9 _ . -)"
    )
    block_on: Literal["claims", "lines"] | None = fields.block_on()
    line_margin: StrictInt | None = fields.line_margin()
    # Waiting for a lane (SPEC).
    auto_queue: StrictBool | None = Field(
        None, description="Queue a refused scope change for the session at once"
    )


class KeyRotation(Body):
    grace_seconds: StrictInt | None = fields.integer(
        0,
        LIMITS.key_rotation_grace_max_seconds,
        description="Seconds the replaced key keeps working (default: key_rotation_grace_seconds)",
    )
