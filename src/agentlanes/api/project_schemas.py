"""Request bodies of the admin project routes (types and shapes; the service checks ranges)."""

from __future__ import annotations

from typing import Literal

from pydantic import StrictInt, StrictStr

from agentlanes.api.schemas import Body


class ProjectUpdate(Body):
    """PATCH: every field optional; the ones given change, the others stay."""

    name: StrictStr | None = None
    conflict_mode: Literal["warn", "block"] | None = None
    heartbeat_interval_seconds: StrictInt | None = None
    heartbeat_ttl_seconds: StrictInt | None = None
    agent_config_keys: list[StrictStr] | None = None


class KeyRotation(Body):
    # Seconds the replaced key keeps working (default: key_rotation_grace_seconds).
    grace_seconds: StrictInt | None = None
