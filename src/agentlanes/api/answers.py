"""The shapes of successful answers, for the OpenAPI document (``responses=`` on the routes).

The services build the answers as dicts (services/views.py); these models only describe
them. They are open (a field added later does not break a client generated from the
document); a conflict is api/schemas.py's ``ConflictOut``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, TypedDict

from litestar.openapi import ResponseSpec
from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from agentlanes.api.schemas import ConflictOut

# An answer that lists conflicts is bounded (SPEC "One agent cannot hurt another").
BOUNDED = (
    "At most answer_max_conflicts (100) conflicts, certain ones first, each with at most "
    "answer_max_files (10) overlapping files; the rest at "
    "GET /api/v1/sessions/{session_id}/conflicts"
)
TOTAL = "How many conflicts there are in all"
TRUNCATED = "Some conflict or some overlapping file is left out of this answer"


class EditOut(BaseModel):
    path: str
    base: str | None = Field(description="The file's blob id at HEAD; null: new since HEAD")
    ranges: list[list[int]] = Field(description="Base lines [start, end]; [a+1, a] inserts")
    digests: list[str | None] | None = Field(
        default=None, description="One per range, when sent: a digest of its new text"
    )

    @model_serializer(mode="wrap")
    def _absent_when_none(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # As the service sends it: no digests key for an edit sent without them.
        out: dict[str, Any] = dump(self)
        if out.get("digests") is None:
            out.pop("digests", None)
        return out


class ClaimOut(BaseModel):
    path: str
    base: str | None = Field(description="The file's blob id at HEAD; null: new since HEAD")
    ranges: list[list[int]] = Field(description="Base lines [start, end] it claims")
    symbol: str | None = Field(default=None, description="The symbol they were read from")

    @model_serializer(mode="wrap")
    def _absent_when_none(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # As the service sends it: no symbol key for a claim sent without one.
        out: dict[str, Any] = dump(self)
        if out.get("symbol") is None:
            out.pop("symbol", None)
        return out


class SessionView(BaseModel):
    """A live session as presence lists it (never its token)."""

    session_id: str
    agent_name: str
    display_name: str = Field(
        description="Its short name (claude-1): unique among the project's live sessions, "
        "for the session's life; accepted wherever an agent name is taken"
    )
    declared_area: str | None
    declared_files: list[str]
    status_text: str | None
    meta: dict[str, Any]
    started_at: datetime
    last_heartbeat_at: datetime
    expires_at: datetime
    edits: list[EditOut] = Field(
        default_factory=list,
        description="What it changed, per file (SPEC Line-level claims)",
    )
    claims: list[ClaimOut] = Field(
        default_factory=list,
        description="The lines it claims by range, before editing them (SPEC Line-level "
        "claims): each file also joins its claims, graded by lines",
    )


class CheckinAnswer(BaseModel):
    session_id: str
    session_token: str
    agent_name: str
    display_name: str = Field(description="Its short name (claude-1), see SessionView")
    declared_area: str | None
    declared_files: list[str]
    claims: list[ClaimOut] = Field(default_factory=list, description="Its range claims")
    meta: dict[str, Any]
    status: Literal["active"]
    heartbeat_interval_seconds: int
    heartbeat_ttl_seconds: int
    started_at: datetime
    expires_at: datetime
    conflicts: list[ConflictOut] = Field(description=BOUNDED)
    conflicts_total: int = Field(description=TOTAL)
    truncated: bool = Field(description=TRUNCATED)


class HeartbeatAnswer(BaseModel):
    session_id: str
    status: Literal["active"]
    last_heartbeat_at: datetime
    expires_at: datetime


class StatusAnswer(SessionView):
    status: Literal["active"]
    conflicts: list[ConflictOut] = Field(description=BOUNDED)
    conflicts_total: int = Field(description=TOTAL)
    truncated: bool = Field(description=TRUNCATED)


class CheckoutAnswer(BaseModel):
    session_id: str
    status: Literal["checked_out"]
    outcome_status: Literal["completed", "partial", "failed"]
    ended_at: datetime


class PresenceAnswer(BaseModel):
    sessions: list[SessionView]
    offset: int
    epoch: str


class SessionConflictsAnswer(BaseModel):
    session_id: str
    conflicts: list[ConflictOut] = Field(
        description="This page: certain conflicts first, then oldest session first"
    )
    conflicts_total: int = Field(description=TOTAL)
    truncated: bool = Field(description="Some conflict or overlapping file is not on this page")
    next_cursor: str | None = Field(
        description="Pass as ?cursor= for the next page (opaque); null on the last page"
    )


class ConflictsAnswer(BaseModel):
    conflicts: list[ConflictOut] = Field(description=BOUNDED)
    conflicts_total: int = Field(description=TOTAL)
    truncated: bool = Field(description=TRUNCATED)


class ProjectView(BaseModel):
    slug: str
    name: str
    conflict_mode: Literal["warn", "block"]
    block_on: Literal["claims", "lines"] = Field(
        description="What block mode refuses on (SPEC Line-level claims)"
    )
    line_margin: int = Field(description="Unchanged lines between edits that still meet")
    heartbeat_interval_seconds: int
    heartbeat_ttl_seconds: int
    agent_config_keys: list[str]
    auto_queue: bool = Field(
        default=False, description="A refused scope change is queued for the session at once"
    )
    created_at: datetime


class ClaimedBy(BaseModel):
    session_id: str
    agent_name: str


class TaskView(BaseModel):
    task_id: str
    title: str
    description: str | None
    priority: int
    status: Literal["pending", "in_progress", "blocked", "done", "cancelled"]
    paths: list[str]
    depends_on: list[str]
    parent_id: str | None
    created_by: str | None
    claimed_by: ClaimedBy | None
    claimed_at: datetime | None
    stale_since: datetime | None
    created_at: datetime
    updated_at: datetime


class NoteView(BaseModel):
    note_id: int
    task_id: str
    author: str
    kind: Literal["agent", "system"]
    body: str
    created_at: datetime


class BlockedBy(BaseModel):
    dependencies: list[str]
    checkpoints: list[str]


class TaskDetail(TaskView):
    notes: list[NoteView]
    blocked_by: BlockedBy


class TaskList(BaseModel):
    tasks: list[TaskView]
    total: int
    limit: int
    offset: int


class ReadyTasks(BaseModel):
    tasks: list[TaskView]


class LeaseView(BaseModel):
    lease_id: str
    resource: str
    session_id: str
    agent_name: str
    fencing_token: int
    ttl_seconds: int
    status: str
    acquired_at: datetime
    renewed_at: datetime | None
    expires_at: datetime
    ended_at: datetime | None
    end_reason: str | None


class LeaseList(BaseModel):
    leases: list[LeaseView]
    total: int
    limit: int
    offset: int


class LeaseCheck(BaseModel):
    valid: bool
    reason: str
    resource: str
    fencing_token: int
    latest_fencing_token: int
    lease: LeaseView | None


class CheckpointView(BaseModel):
    checkpoint_id: str
    name: str
    description: str | None
    task_ids: list[str]
    status: Literal["pending", "passed", "failed"]
    created_by: str | None
    resolved_by: str | None
    note: str | None
    created_at: datetime
    resolved_at: datetime | None


class CheckpointResolved(CheckpointView):
    unblocked_task_ids: list[str]


class CheckpointList(BaseModel):
    checkpoints: list[CheckpointView]
    total: int
    limit: int
    offset: int


class VoteView(BaseModel):
    agent_name: str
    vote: Literal["approve", "reject"]
    comment: str | None
    created_at: datetime


class ConsensusView(BaseModel):
    consensus_id: str
    action: str
    subject: str | None
    reason: str
    requester: str
    requester_session_id: str | None
    eligible_voters: list[str]
    required_approvals: int
    approvals: int
    rejections: int
    votes: list[VoteView]
    status: Literal["pending", "approved", "rejected", "expired"]
    timeout_seconds: int
    created_at: datetime
    expires_at: datetime
    resolved_at: datetime | None


class ConsensusList(BaseModel):
    requests: list[ConsensusView]
    total: int
    limit: int
    offset: int


class AgentView(BaseModel):
    agent_id: str
    name: str
    role: str | None
    config: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class AgentSaved(AgentView):
    dropped_keys: list[str]


class AgentList(BaseModel):
    agents: list[AgentView]
    allowed_config_keys: list[str]
    total: int
    limit: int
    offset: int


# A TypedDict, not a model: one of its keys is `from`.
MessageView = TypedDict(
    "MessageView",
    {
        "message_id": int,
        "from": str,
        "from_kind": Literal["agent", "human"],
        "from_session_id": str | None,
        "to": str,
        "type": str,
        "thread_id": str | None,
        "body": str,
        "created_at": datetime,
        "read_at": datetime | None,
        "acked_at": datetime | None,
        "delivered_at": datetime | None,
    },
)


class Inbox(TypedDict):
    agent_name: str
    messages: list[MessageView]
    total: int
    unread: int
    limit: int
    offset: int


class RealtimeToken(BaseModel):
    token: str
    expires_at: datetime


class EventView(BaseModel):
    offset: int
    type: str
    ts: datetime
    data: dict[str, Any]


class EventLog(BaseModel):
    events: list[EventView]
    offset: int
    last_offset: int
    recovered: bool
    epoch: str


class Health(BaseModel):
    status: Literal["ok"]


class Readiness(BaseModel):
    status: Literal["ready", "unavailable"]
    checks: dict[str, str]


def answer(status: int, model: Any, description: str) -> dict[int, ResponseSpec]:
    """``responses=`` for a route whose answer at ``status`` is ``model``."""
    return {
        status: ResponseSpec(data_container=model, description=description, generate_examples=False)
    }


# -- waiting for a lane (SPEC "Waiting for a lane") -------------------------------------------


class Holder(BaseModel):
    session_id: str
    agent_name: str
    display_name: str
    paths: list[str] = Field(description="Their patterns that hold the wait's paths")


class WaitView(BaseModel):
    queue_id: str
    session_id: str
    agent_name: str
    display_name: str
    paths: list[str]
    urgency: Literal["low", "normal", "high"]
    status: Literal["waiting", "granted", "cancelled", "timed_out", "ended"]
    auto: bool = Field(description="Queued by the server (auto_queue) after a refusal")
    timeout_seconds: int
    created_at: datetime
    expires_at: datetime
    ended_at: datetime | None


class QueueWaiting(BaseModel):
    granted: Literal[False]
    queue_id: str
    session_id: str
    position: int = Field(description="1: first in line for all its paths")
    holders: list[Holder]
    paths: list[str]
    urgency: Literal["low", "normal", "high"]
    expires_at: datetime
    offset: int = Field(description="The event offset of queue.joined: follow the socket from it")


class QueueGranted(BaseModel):
    granted: Literal[True]
    queue_id: str
    session_id: str
    paths: list[str]
    declared_files: list[str] = Field(description="The session's claims now")
    offset: int


class PlacedWait(WaitView):
    position: int
    holders: list[Holder]


class QueueList(BaseModel):
    waits: list[PlacedWait]
    total: int
    limit: int
    offset: int


class ReleaseRequestView(BaseModel):
    from_session_id: str
    from_agent_name: str
    from_display_name: str
    to_session_id: str
    to_agent_name: str
    to_display_name: str
    paths: list[str]
    held: list[str] = Field(description="The holder's patterns that claim them")
    reason: str
    offset: int
    requested_at: datetime


class Hotspot(BaseModel):
    path: str
    refused: int = Field(description="Check-ins and status changes refused on it")
    waits: int = Field(description="Waits for it that ended in the period")
    waiting_now: int
    wait_seconds_avg: float | None
    wait_seconds_max: float | None


class HotspotList(BaseModel):
    days: int
    hotspots: list[Hotspot]
    total: int
