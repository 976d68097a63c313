"""Typed results of the client: the contract's shapes (SPEC.md), forward compatible.

- Times are ``datetime``, aware and in UTC (the server writes ISO 8601 with ``Z``; a time
  without an offset is read as UTC).
- A field with a closed set of values (a status, a mode) is a ``Literal`` of the values
  this client knows. A value it does not know (a newer server's) does not fail the
  answer: it arrives as :class:`Unknown`, a ``str`` holding the server's word, so code
  keeps running and mypy makes a ``match`` over the field handle that case. A value
  that is not a string at all is a pydantic ``ValidationError`` naming the field.
- Every model keeps fields it does not know (``extra="allow"``), so a newer server does not
  break an older client; ``raw()`` gives the JSON object back (times as the server's ISO
  strings, unknown fields included).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic_core import core_schema

from agentlanes.clock import iso


class Unknown(str):
    """A value of a closed field (a status, a mode) that this client does not know yet,
    as the server sent it: ``isinstance(value, Unknown)`` tells it from the known ones,
    and it compares and serialises as the plain string."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Unknown({str.__repr__(self)})"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(cls, core_schema.str_schema())


def _utc(value: datetime) -> datetime:
    """Aware and in UTC: the server writes UTC; a time without an offset is read as UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _wire(value: datetime) -> str:
    """The server's own spelling (microseconds, ``Z``), so ``raw()`` gives its string back."""
    return iso(value) or ""


# A time as the client hands it out: an aware UTC datetime; ISO 8601 again in ``raw()``.
Timestamp = Annotated[
    datetime, AfterValidator(_utc), PlainSerializer(_wire, return_type=str, when_used="json")
]

# The values of the closed fields (SPEC.md), for type hints and for arguments.
SessionStatus = Literal["active", "checked_out", "timed_out", "blocked", "superseded"]
OutcomeStatus = Literal["completed", "partial", "failed"]
ConflictMode = Literal["warn", "block"]
TaskStatus = Literal["pending", "in_progress", "blocked", "done", "cancelled"]
CheckpointStatus = Literal["pending", "passed", "failed"]
LeaseStatus = Literal["active", "released", "expired"]
ConsensusStatus = Literal["pending", "approved", "rejected", "expired"]
Vote = Literal["approve", "reject"]
Urgency = Literal["low", "normal", "high"]
WaitStatus = Literal["waiting", "granted", "cancelled", "timed_out", "ended"]

# The known values first: a value outside them becomes ``Unknown`` instead of an error.
Active = Annotated[Literal["active"] | Unknown, Field(union_mode="left_to_right")]
CheckedOut = Annotated[Literal["checked_out"] | Unknown, Field(union_mode="left_to_right")]
Outcome = Annotated[OutcomeStatus | Unknown, Field(union_mode="left_to_right")]
Mode = Annotated[ConflictMode | Unknown, Field(union_mode="left_to_right")]


class Model(BaseModel):
    """A result: keeps the fields it does not know, reads a closed field's unknown value
    as ``Unknown`` and times as aware UTC datetimes (see the module's docstring)."""

    model_config = ConfigDict(extra="allow", frozen=False)

    def raw(self) -> dict[str, Any]:
        """The object as JSON-ready data (times as ISO 8601 strings), unknown fields
        included."""
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


class Edit(Model):
    """What a session changed in one file against ``HEAD`` (SPEC "Line-level claims")."""

    path: str
    base: str | None = None  # the file's blob id at HEAD; None: new since HEAD
    ranges: list[list[int]] = Field(default_factory=list)  # base lines [start, end]
    # One per range, when sent: a digest of its new text (identical changes do not meet).
    digests: list[str | None] | None = None

    @model_serializer(mode="wrap")
    def _absent_when_none(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = dump(self)  # as the server sends it: no key for none
        if out.get("digests") is None:
            out.pop("digests", None)
        return out


class Claim(Model):
    """Lines of one file a session claims before editing them (SPEC "Line-level claims":
    range claims): ``lanes checkin --files 'src/auth.py#Login.check'``."""

    path: str
    base: str | None = None  # the file's blob id at HEAD the lines count in
    ranges: list[list[int]] = Field(default_factory=list)  # base lines [start, end]
    symbol: str | None = None  # the symbol they were read from

    @model_serializer(mode="wrap")
    def _absent_when_none(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = dump(self)  # as the server sends it: no key for none
        if out.get("symbol") is None:
            out.pop("symbol", None)
        return out


class Session(Model):
    """A live session as presence shows it (never with its token): the server's
    ``SessionView`` (tests/unit/test_client_models.py keeps the two alike)."""

    session_id: str
    agent_name: str
    # Its short name (claude-1), unique among the live sessions; an older server sends
    # none (use ``shown``).
    display_name: str | None = None
    declared_area: str | None = None
    declared_files: list[str] = Field(default_factory=list)
    status_text: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    started_at: Timestamp
    last_heartbeat_at: Timestamp
    expires_at: Timestamp
    # What the session changed, per file, against HEAD; an older server sends none.
    edits: list[Edit] = Field(default_factory=list)
    # The lines it claims by range; an older server sends none.
    claims: list[Claim] = Field(default_factory=list)

    @property
    def shown(self) -> str:
        """The name to show a person: the display name, else the agent name."""
        return self.display_name or self.agent_name


class CheckinResult(Model):
    session_id: str
    session_token: str
    agent_name: str
    display_name: str | None = None  # its short name (claude-1); an older server: none
    declared_area: str | None = None
    declared_files: list[str] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)  # its range claims
    status: Active = "active"
    heartbeat_interval_seconds: int
    heartbeat_ttl_seconds: int
    expires_at: Timestamp
    conflicts: list[Conflict] = Field(default_factory=list)
    # Answers are bounded: how many conflicts in all, and whether some are left out
    # (the rest: session_conflicts). An older server sends neither.
    conflicts_total: int | None = None
    truncated: bool = False


class HeartbeatResult(Model):
    session_id: str
    status: Active = "active"
    last_heartbeat_at: Timestamp
    expires_at: Timestamp


class StatusResult(Session):
    status: Active = "active"
    conflicts: list[Conflict] = Field(default_factory=list)
    conflicts_total: int | None = None
    truncated: bool = False


class CheckoutResult(Model):
    session_id: str
    status: CheckedOut = "checked_out"
    outcome_status: Outcome
    ended_at: Timestamp


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
    conflict_mode: Mode
    heartbeat_interval_seconds: int
    heartbeat_ttl_seconds: int
    # A refused scope change is queued for the session at once (an older server: None).
    auto_queue: bool | None = None


class Event(Model):
    """One frame of the event stream: a state change (with ``offset`` and ``ts``), or a
    control frame (``presence.snapshot``, ``replay.complete``, ``attached``, ``pong``,
    ``error``). ``type`` stays a ``str``: the set of event types grows (``task.*``).
    ``data`` is the event's JSON as sent (its times are strings)."""

    type: str
    offset: int | None = None
    ts: Timestamp | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class EventLog(Model):
    events: list[Event] = Field(default_factory=list)
    offset: int = 0
    last_offset: int = 0
    recovered: bool = True
    epoch: str | None = None


# -- waiting for a lane (SPEC "Waiting for a lane") -------------------------------------------


class Holder(Model):
    """A live session holding some of a wait's paths."""

    session_id: str
    agent_name: str
    display_name: str | None = None
    paths: list[str] = Field(default_factory=list)  # their patterns that hold them


class WaitResult(Model):
    """``queue_wait``'s answer: ``granted`` (the paths joined the claims at once) or
    queued, with its place in line and who holds the paths. ``offset``: the event offset
    to follow the socket from (``events(since=offset)``) so that no grant is missed."""

    granted: bool
    queue_id: str
    session_id: str | None = None
    paths: list[str] = Field(default_factory=list)
    position: int | None = None
    holders: list[Holder] = Field(default_factory=list)
    urgency: Annotated[Urgency | Unknown, Field(union_mode="left_to_right")] | None = None
    expires_at: Timestamp | None = None
    declared_files: list[str] | None = None
    offset: int | None = None


class Wait(Model):
    queue_id: str
    session_id: str
    agent_name: str
    display_name: str | None = None
    paths: list[str] = Field(default_factory=list)
    urgency: Annotated[Urgency | Unknown, Field(union_mode="left_to_right")] = "normal"
    status: Annotated[WaitStatus | Unknown, Field(union_mode="left_to_right")] = "waiting"
    auto: bool = False
    timeout_seconds: int | None = None
    created_at: Timestamp | None = None
    expires_at: Timestamp | None = None
    ended_at: Timestamp | None = None
    # In GET /queue: its place in line (1: first for all its paths) and the holders.
    position: int | None = None
    holders: list[Holder] = Field(default_factory=list)


class QueueList(Model):
    waits: list[Wait] = Field(default_factory=list)
    total: int = 0
    limit: int | None = None
    offset: int | None = None


class ReleaseRequest(Model):
    from_agent_name: str
    to_session_id: str
    to_agent_name: str
    to_display_name: str | None = None
    paths: list[str] = Field(default_factory=list)
    held: list[str] = Field(default_factory=list)
    reason: str = ""
    offset: int | None = None


class Hotspot(Model):
    path: str
    refused: int = 0
    waits: int = 0
    waiting_now: int = 0
    wait_seconds_avg: float | None = None
    wait_seconds_max: float | None = None


class Hotspots(Model):
    days: int
    hotspots: list[Hotspot] = Field(default_factory=list)
    total: int = 0
