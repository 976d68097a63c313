"""Typed results of the client: the contract's shapes (SPEC.md), forward compatible.

Every model keeps fields it does not know (``extra="allow"``), so a newer server does not
break an older client; ``raw()`` gives the JSON object back.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=False)

    def raw(self) -> dict[str, Any]:
        """The object as JSON-ready data, unknown fields included."""
        return self.model_dump(mode="json")


class OverlappingFile(Model):
    pattern: str
    their_pattern: str
    example: str
    # Certain unless both claim example only if if_directory (a prefix) is a directory.
    certain: bool = True
    if_directory: str | None = None


class Conflict(Model):
    session_id: str
    agent_name: str
    declared_area: str | None = None
    overlapping_area: bool = False
    certain: bool = True  # the area overlaps or some file overlap is certain
    overlapping_files: list[OverlappingFile] = Field(default_factory=list)
    # More overlapping files than the server's answer_max_files: some are left out.
    files_truncated: bool = False


class Session(Model):
    """A live session as presence shows it (never with its token)."""

    session_id: str
    agent_name: str
    declared_area: str | None = None
    declared_files: list[str] = Field(default_factory=list)
    status_text: str | None = None
    started_at: str | None = None
    last_heartbeat_at: str | None = None
    expires_at: str | None = None
    # What the session changed, per file, against HEAD (SPEC "Line-level claims"):
    # {"path", "base", "ranges"}; an older server sends none.
    edits: list[dict[str, Any]] = Field(default_factory=list)


class CheckinResult(Model):
    session_id: str
    session_token: str
    agent_name: str
    declared_area: str | None = None
    declared_files: list[str] = Field(default_factory=list)
    status: str = "active"
    heartbeat_interval_seconds: int
    heartbeat_ttl_seconds: int
    expires_at: str
    conflicts: list[Conflict] = Field(default_factory=list)
    # Answers are bounded: how many conflicts in all, and whether some are left out
    # (the rest: session_conflicts). An older server sends neither.
    conflicts_total: int | None = None
    truncated: bool = False


class HeartbeatResult(Model):
    session_id: str
    status: str
    last_heartbeat_at: str | None = None
    expires_at: str


class StatusResult(Session):
    status: str = "active"
    conflicts: list[Conflict] = Field(default_factory=list)
    conflicts_total: int | None = None
    truncated: bool = False


class CheckoutResult(Model):
    session_id: str
    status: str
    outcome_status: str
    ended_at: str | None = None


class Presence(Model):
    sessions: list[Session] = Field(default_factory=list)
    offset: int = 0
    # The history the offset belongs to: resume with ``since=offset&epoch=epoch``.
    epoch: str | None = None


class ConflictCheck(Model):
    conflicts: list[Conflict] = Field(default_factory=list)
    conflicts_total: int | None = None
    truncated: bool = False


class SessionConflicts(Model):
    """A page of the current conflicts of one live session (answers and events carry
    only the first ones); ``next_cursor`` asks for the next page, None on the last."""

    session_id: str
    conflicts: list[Conflict] = Field(default_factory=list)
    conflicts_total: int = 0
    truncated: bool = False
    next_cursor: str | None = None


class ProjectInfo(Model):
    slug: str
    name: str
    conflict_mode: str
    heartbeat_interval_seconds: int
    heartbeat_ttl_seconds: int


class Event(Model):
    """One frame of the event stream: a state change (with ``offset``), or a control frame
    (``presence.snapshot``, ``replay.complete``, ``attached``, ``pong``, ``error``)."""

    type: str
    offset: int | None = None
    ts: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class EventLog(Model):
    events: list[Event] = Field(default_factory=list)
    offset: int = 0
    last_offset: int = 0
    recovered: bool = True
    epoch: str | None = None
