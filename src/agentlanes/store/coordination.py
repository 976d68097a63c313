"""Tables of the coordination features: tasks, checkpoints, messages, leases, votes, agents.

Every row belongs to one project; every write to them runs in the project's transaction
(``ServiceContext.project_tx``), so races are decided by the project row lock.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from agentlanes.store.models import NEVER_REUSED


class Task(SQLModel, table=True):
    __tablename__ = "tasks"
    __table_args__ = (
        Index("ix_tasks_project_status", "project_id", "status"),
        Index("ix_tasks_claimed_session", "claimed_session_id"),
    )

    id: str = Field(primary_key=True, max_length=40)
    project_id: int = Field(foreign_key="projects.id")
    title: str = Field(max_length=200)
    description: str | None = Field(default=None)
    # Lower is more urgent (0 = urgent ... 4 = someday); the ready list sorts by it.
    priority: int
    status: str = Field(max_length=16)
    # Normalised file patterns the work will touch.
    paths: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    depends_on: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    parent_id: str | None = Field(default=None, max_length=40)
    created_by: str | None = Field(default=None, max_length=64)
    claimed_session_id: str | None = Field(default=None, max_length=40)
    claimed_agent_name: str | None = Field(default=None, max_length=64)
    claimed_at: datetime | None = None
    # Set when the claiming session timed out while the task was in progress.
    stale_since: datetime | None = None
    created_at: datetime
    updated_at: datetime


class TaskNote(SQLModel, table=True):
    __tablename__ = "task_notes"
    __table_args__ = NEVER_REUSED

    id: int | None = Field(default=None, primary_key=True)
    task_id: str = Field(foreign_key="tasks.id", index=True, max_length=40)
    # An agent name, or "system" for the notes the server writes (stale claims).
    author: str = Field(max_length=64)
    kind: str = Field(max_length=16)  # "agent" | "system"
    body: str
    created_at: datetime


class Checkpoint(SQLModel, table=True):
    __tablename__ = "checkpoints"
    __table_args__ = (Index("ix_checkpoints_project_status", "project_id", "status"),)

    id: str = Field(primary_key=True, max_length=40)
    project_id: int = Field(foreign_key="projects.id")
    name: str = Field(max_length=200)
    description: str | None = Field(default=None)
    task_ids: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    status: str = Field(max_length=16)  # pending | passed | failed
    created_by: str | None = Field(default=None, max_length=64)
    resolved_by: str | None = Field(default=None, max_length=64)
    resolution_note: str | None = Field(default=None)
    created_at: datetime
    resolved_at: datetime | None = None


class Message(SQLModel, table=True):
    __tablename__ = "messages"
    __table_args__ = (
        Index("ix_messages_project_recipient", "project_id", "recipient", "id"),
        Index("ix_messages_project_thread", "project_id", "thread_id"),
        UniqueConstraint("project_id", "number", name="uq_messages_number"),
        NEVER_REUSED,
    )

    # A sequence, so the inbox pages in send order on every backend.
    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="projects.id")
    # The message_id the API shows: numbered per project (the offset of the event that
    # announced it), so no project learns another's volume from it.
    number: int = Field(sa_column=Column(BigInteger, nullable=False))
    sender: str = Field(max_length=64)
    # "agent" (a session sent it) or "human" (a person, with the project key only).
    sender_kind: str = Field(
        default="agent", max_length=8, sa_column_kwargs={"server_default": "agent"}
    )
    sender_session_id: str | None = Field(default=None, max_length=40)
    recipient: str = Field(max_length=64)  # an agent name, or "broadcast"
    type: str = Field(max_length=64)
    thread_id: str | None = Field(default=None, max_length=128)
    body: str
    created_at: datetime


class MessageReceipt(SQLModel, table=True):
    """One recipient's read and acknowledgement state (broadcasts get one per reader)."""

    __tablename__ = "message_receipts"
    __table_args__ = (
        UniqueConstraint("message_id", "agent_name", name="uq_receipt"),
        NEVER_REUSED,
    )

    id: int | None = Field(default=None, primary_key=True)
    message_id: int = Field(foreign_key="messages.id", index=True)
    agent_name: str = Field(max_length=64)
    read_at: datetime | None = None
    acked_at: datetime | None = None
    # Put in the agent's context (its news, by a hook): SPEC "The agent's news".
    delivered_at: datetime | None = None


class Lease(SQLModel, table=True):
    __tablename__ = "leases"
    __table_args__ = (
        Index("ix_leases_project_status", "project_id", "status", "expires_at"),
        Index("ix_leases_session", "session_id"),
        # At most one active lease per resource, whatever the code above it does.
        Index(
            "uq_leases_active_resource",
            "project_id",
            "resource",
            unique=True,
            postgresql_where=text("status = 'active'"),
            sqlite_where=text("status = 'active'"),
        ),
    )

    id: str = Field(primary_key=True, max_length=40)
    project_id: int = Field(foreign_key="projects.id")
    resource: str = Field(max_length=256)
    session_id: str = Field(max_length=40)
    agent_name: str = Field(max_length=64)
    fencing_token: int = Field(sa_column=Column(BigInteger, nullable=False))
    ttl_seconds: int
    status: str = Field(max_length=16)  # active | released | expired
    acquired_at: datetime
    renewed_at: datetime | None = None
    expires_at: datetime
    ended_at: datetime | None = None
    end_reason: str | None = Field(default=None, max_length=32)


class LeaseCounter(SQLModel, table=True):
    """The last fencing token granted per resource: never reset, so tokens only grow."""

    __tablename__ = "lease_counters"

    project_id: int = Field(foreign_key="projects.id", primary_key=True)
    resource: str = Field(max_length=256, primary_key=True)
    last_token: int = Field(sa_column=Column(BigInteger, nullable=False))


class ConsensusRequest(SQLModel, table=True):
    __tablename__ = "consensus_requests"
    __table_args__ = (Index("ix_consensus_project_status", "project_id", "status", "expires_at"),)

    id: str = Field(primary_key=True, max_length=40)
    project_id: int = Field(foreign_key="projects.id")
    action: str = Field(max_length=200)
    subject: str | None = Field(default=None, max_length=500)
    reason: str
    requester: str = Field(max_length=64)
    requester_session_id: str = Field(max_length=40)
    eligible_voters: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    status: str = Field(max_length=16)  # pending | approved | rejected | expired
    timeout_seconds: int
    created_at: datetime
    expires_at: datetime
    resolved_at: datetime | None = None


class ConsensusVote(SQLModel, table=True):
    __tablename__ = "consensus_votes"
    __table_args__ = (
        UniqueConstraint("request_id", "agent_name", name="uq_consensus_vote"),
        NEVER_REUSED,
    )

    id: int | None = Field(default=None, primary_key=True)
    request_id: str = Field(foreign_key="consensus_requests.id", index=True, max_length=40)
    agent_name: str = Field(max_length=64)
    vote: str = Field(max_length=8)  # approve | reject
    comment: str | None = Field(default=None)
    created_at: datetime


class RegisteredAgent(SQLModel, table=True):
    __tablename__ = "agents"
    __table_args__ = (UniqueConstraint("project_id", "name", name="uq_agents_name"),)

    id: str = Field(primary_key=True, max_length=40)
    project_id: int = Field(foreign_key="projects.id")
    name: str = Field(max_length=64)
    role: str | None = Field(default=None, max_length=64)
    config: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    created_at: datetime
    updated_at: datetime
