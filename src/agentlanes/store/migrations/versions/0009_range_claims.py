"""range claims: the lines a session claims before editing them

Revision ID: 0009_range_claims
Revises: 0008_queue
Create Date: 2026-11-27 21:00:00.000000

``sessions.claims`` keeps each session's range claims (``[{"path", "base", "ranges",
"symbol"?}]``: a function or a method of a file, read on the agent side), graded against
the other sessions' range claims and edits by lines (SPEC "Line-level claims"). Rows
without it claim no ranges. Added only when missing, as in 0002.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_range_claims"
down_revision = "0008_queue"
branch_labels = None
depends_on = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("sessions")}
    if "claims" not in have:
        with op.batch_alter_table("sessions", schema=None) as batch_op:
            batch_op.add_column(sa.Column("claims", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("claims")
