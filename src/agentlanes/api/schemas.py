"""Request bodies: types and shapes only; the services check the rest against settings.

Unknown fields are refused (a typo such as ``declared_file`` should not pass silently).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, field_validator


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _no_nul_bytes(cls, value: Any) -> Any:
        # PostgreSQL text cannot hold NUL; refuse it everywhere with the field's name.
        if _has_nul(value):
            raise ValueError("must not contain NUL bytes")
        return value


class TokenBody(Body):
    session_token: StrictStr | None = None


class ProjectCreate(Body):
    name: StrictStr
    slug: StrictStr | None = None
    conflict_mode: Literal["warn", "block"] | None = None
    heartbeat_interval_seconds: StrictInt | None = None
    heartbeat_ttl_seconds: StrictInt | None = None
    agent_config_keys: list[StrictStr] | None = None


class CheckinBody(Body):
    agent_name: StrictStr | None = None
    declared_area: StrictStr | None = None
    declared_files: list[StrictStr] | None = None
    meta: dict[str, Any] | None = None


class StatusBody(TokenBody):
    declared_area: StrictStr | None = None
    declared_files: list[StrictStr] | None = None
    status_text: StrictStr | None = None


class CheckoutBody(TokenBody):
    outcome_status: Literal["completed", "partial", "failed"] | None = None
    work_summary: StrictStr | None = None
    files_touched: list[StrictStr] | None = None


class ConflictCheckBody(TokenBody):
    paths: list[StrictStr] | None = None
    patterns: list[StrictStr] | None = None
    declared_area: StrictStr | None = None


class EmptyBody(TokenBody):
    pass


# -- response shapes of a conflict (SPEC "Sessions"; read by clients and the OpenAPI) -----


class OverlappingFileOut(BaseModel):
    """One of their patterns sharing a path with one of mine (or a staged path)."""

    pattern: str  # mine, or the staged path
    their_pattern: str
    example: str  # a path both claim
    certain: bool  # claimed by both without reading a slash-less literal as a directory
    if_directory: str | None = (
        None  # when not certain: the prefix of example that must be a directory
    )


class ConflictOut(BaseModel):
    """Another live session my scope collides with. ``certain``: the areas are the same or
    some file overlap is certain (what ``block`` mode refuses on)."""

    session_id: str
    agent_name: str
    declared_area: str | None = None
    overlapping_area: bool
    certain: bool
    overlapping_files: list[OverlappingFileOut]
