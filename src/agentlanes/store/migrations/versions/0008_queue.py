"""waiting for a lane: queue entries, lane statistics, projects.auto_queue

Revision ID: 0008_queue
Revises: 0007_display_names
Create Date: 2026-11-27 22:00:00.000000

``queue_entries`` holds the sessions waiting for paths others hold (SPEC "Waiting for a
lane"); ``lane_stats`` the paths refused and waited for, for the hotspots;
``projects.auto_queue`` (off for every existing project) queues a refused scope change at
once. Created only when missing, as in 0002.
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0008_queue"
down_revision = "0007_display_names"
branch_labels = None
depends_on = None


def _tables() -> set[str]:
    return set(sa.inspect(op.get_bind()).get_table_names())


def upgrade() -> None:
    if "auto_queue" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("projects")}:
        # A plain ADD COLUMN (no batch): a batch would rebuild projects on SQLite and drop
        # its AUTOINCREMENT (ids never reused, 0003).
        op.add_column(
            "projects",
            sa.Column("auto_queue", sa.Boolean(), nullable=False, server_default=sa.false()),
        )
    tables = _tables()
    if "queue_entries" not in tables:
        op.create_table(
            "queue_entries",
            sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
            sa.Column("project_id", sa.Integer(), nullable=False),
            sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
            sa.Column("agent_name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
            sa.Column("display_name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
            sa.Column("paths", sa.JSON(), nullable=True),
            sa.Column("urgency", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
            sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
            sa.Column("auto", sa.Boolean(), nullable=False),
            sa.Column("timeout_seconds", sa.Integer(), nullable=False),
            sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
            sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
            sa.Column("ended_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
            sa.ForeignKeyConstraint(["project_id"], ["projects.id"]),
            sa.PrimaryKeyConstraint("id"),
        )
        op.create_index("ix_queue_project_status", "queue_entries", ["project_id", "status"])
        op.create_index("ix_queue_status_expires", "queue_entries", ["status", "expires_at"])
        op.create_index("ix_queue_session", "queue_entries", ["session_id"])
    if "lane_stats" not in tables:
        op.create_table(
            "lane_stats",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("project_id", sa.Integer(), nullable=False),
            sa.Column("path", sqlmodel.sql.sqltypes.AutoString(length=1024), nullable=False),
            sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
            sa.Column("agent_name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
            sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
            sa.Column("wait_seconds", sa.Float(), nullable=True),
            sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True),
            sa.ForeignKeyConstraint(["project_id"], ["projects.id"]),
            sa.PrimaryKeyConstraint("id"),
            sqlite_autoincrement=True,
        )
        op.create_index("ix_lane_stats_project_at", "lane_stats", ["project_id", "at"])


def downgrade() -> None:
    op.drop_index("ix_lane_stats_project_at", table_name="lane_stats")
    op.drop_table("lane_stats")
    op.drop_index("ix_queue_session", table_name="queue_entries")
    op.drop_index("ix_queue_status_expires", table_name="queue_entries")
    op.drop_index("ix_queue_project_status", table_name="queue_entries")
    op.drop_table("queue_entries")
    op.drop_column("projects", "auto_queue")
