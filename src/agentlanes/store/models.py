"""SQLModel tables. Times are aware UTC (SQLModel's UTCDateTime); secrets only as hashes."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, UniqueConstraint
from sqlalchemy import false as sa_false
from sqlmodel import Field, SQLModel

# SQLite reuses the largest rowid once its row is deleted unless the table says
# AUTOINCREMENT: a project made after a DELETE would get the deleted one's id (and any
# state still kept for that id). Every table whose integer id is shown or referenced says
# so (PostgreSQL sequences never go back; the option means nothing there).
NEVER_REUSED = {"sqlite_autoincrement": True}


class Project(SQLModel, table=True):
    __tablename__ = "projects"
    __table_args__ = NEVER_REUSED

    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(max_length=64, unique=True, index=True)
    name: str = Field(max_length=200)
    api_key_hash: str = Field(max_length=64, unique=True, index=True)
    conflict_mode: str = Field(max_length=8)
    # Line-level claims (SPEC): what block mode refuses on ("claims": every certain
    # overlap; "lines": only one whose edits meet, or where only the other side edited),
    # and how many unchanged lines between two edits still count as meeting.
    # Server defaults too (as migration 0006 adds them): rows an older release inserts
    # during a rolling upgrade get today's rule.
    block_on: str = Field(
        default="claims", max_length=8, sa_column_kwargs={"server_default": "claims"}
    )
    line_margin: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    heartbeat_interval_seconds: int
    heartbeat_ttl_seconds: int
    # The offset of the newest event; bumped in the same transaction as each event row.
    last_offset: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, default=0))
    # Names this project's event history: a fresh or restored database has another one, so
    # a client resuming with since=N&epoch=E from another history starts afresh.
    epoch: str = Field(default_factory=lambda: secrets.token_hex(8), max_length=32)
    # Keys an agent's registry config may hold (others are dropped).
    agent_config_keys: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    created_at: datetime
    # Key rotation: the key replaced last keeps working until previous_key_expires_at.
    previous_api_key_hash: str | None = Field(default=None, max_length=64, index=True)
    previous_key_expires_at: datetime | None = None
    # Set by revoke-key: no key opens the project until the next rotate-key.
    key_revoked_at: datetime | None = None
    # Waiting for a lane (SPEC): a refused scope change is queued for the session at once.
    auto_queue: bool = Field(default=False, sa_column_kwargs={"server_default": sa_false()})


class AgentSession(SQLModel, table=True):
    __tablename__ = "sessions"
    __table_args__ = (
        Index("ix_sessions_project_status", "project_id", "status"),
        Index("ix_sessions_status_expires", "status", "expires_at"),
    )

    id: str = Field(primary_key=True, max_length=40)
    project_id: int = Field(foreign_key="projects.id")
    # None for a blocked check-in: no token was ever issued.
    token_hash: str | None = Field(default=None, max_length=64, unique=True, index=True)
    agent_name: str = Field(max_length=64)
    # The short name people read and type (``claude-1``): unique among the project's live
    # sessions, for the session's life (SPEC "Many agents, one working tree"). None in rows
    # older than migration 0007: the agent name stands in for it.
    display_name: str | None = Field(default=None, max_length=64)
    declared_area: str | None = Field(default=None, max_length=256)
    declared_files: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    status: str = Field(max_length=16)
    outcome_status: str | None = Field(default=None, max_length=16)
    status_text: str | None = Field(default=None)
    work_summary: str | None = Field(default=None)
    files_touched: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    # When each declared pattern joined the claims ({pattern: ISO time}); a pattern missing
    # here counts from started_at. Block mode lets the older claim stand.
    claimed_at: dict[str, str] | None = Field(default_factory=dict, sa_column=Column(JSON))
    # What the agent changed, per file ({path: {"base": blob id or None, "ranges":
    # [[start, end], ...]}}; SPEC "Line-level claims").
    edits: dict[str, Any] | None = Field(default_factory=dict, sa_column=Column(JSON))
    # The lines it claims by range ([{"path", "base", "ranges", "symbol"?}]; SPEC
    # "Line-level claims").
    claims: list[dict[str, Any]] | None = Field(default_factory=list, sa_column=Column(JSON))
    started_at: datetime
    last_heartbeat_at: datetime
    expires_at: datetime
    ended_at: datetime | None = None


class Event(SQLModel, table=True):
    """The outbox and the history: written in the same transaction as the change."""

    __tablename__ = "events"
    __table_args__ = (
        UniqueConstraint("project_id", "event_offset", name="uq_events_offset"),
        NEVER_REUSED,
    )

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="projects.id", index=True)
    # "offset" is an SQL keyword; the column is event_offset.
    offset: int = Field(sa_column=Column("event_offset", BigInteger, nullable=False))
    type: str = Field(max_length=64)
    ts: datetime
    data: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))


class RealtimeToken(SQLModel, table=True):
    """Short-lived tokens that let a browser open the event socket."""

    __tablename__ = "realtime_tokens"

    token_hash: str = Field(primary_key=True, max_length=64)
    project_id: int = Field(foreign_key="projects.id")
    # The hash of the API key that minted it: the token dies with that key (revoked, or
    # rotated and its grace over). None: minted before this was kept.
    api_key_hash: str | None = Field(default=None, max_length=64)
    expires_at: datetime = Field(index=True)


class QueueEntry(SQLModel, table=True):
    """A session waiting for paths another session holds (SPEC "Waiting for a lane"):
    ``waiting`` until granted (its paths joined the session's claims in the transaction
    that freed them), cancelled, timed out or ended with its session."""

    __tablename__ = "queue_entries"
    __table_args__ = (
        Index("ix_queue_project_status", "project_id", "status"),
        Index("ix_queue_status_expires", "status", "expires_at"),
        Index("ix_queue_session", "session_id"),
    )

    id: str = Field(primary_key=True, max_length=40)
    project_id: int = Field(foreign_key="projects.id")
    session_id: str = Field(max_length=40)
    agent_name: str = Field(max_length=64)
    display_name: str | None = Field(default=None, max_length=64)
    paths: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    urgency: str = Field(max_length=8)  # low | normal | high
    status: str = Field(max_length=16)  # waiting | granted | cancelled | timed_out | ended
    # Queued by the server itself (a refused scope change with auto_queue on).
    auto: bool = Field(default=False)
    timeout_seconds: int
    created_at: datetime
    expires_at: datetime
    ended_at: datetime | None = None


class LaneStat(SQLModel, table=True):
    """One path refused (a 409 of check-in or status) or waited for (a queue entry that
    ended), for the hotspots (``GET /api/v1/hotspots``); kept hotspot_days_max days."""

    __tablename__ = "lane_stats"
    __table_args__ = (Index("ix_lane_stats_project_at", "project_id", "at"), NEVER_REUSED)

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="projects.id")
    path: str = Field(max_length=1024)
    kind: str = Field(max_length=8)  # refused | waited
    agent_name: str = Field(max_length=64)
    at: datetime
    # How long the wait lasted, and how it ended (granted, cancelled, timed_out, ended).
    wait_seconds: float | None = None
    outcome: str | None = Field(default=None, max_length=16)
