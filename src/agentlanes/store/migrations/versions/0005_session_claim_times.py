"""sessions: when each claimed pattern joined the session's claims

Revision ID: 0005_session_claim_times
Revises: 0004_message_delivery
Create Date: 2026-11-25 17:10:00.000000

``claimed_at`` maps each of a session's declared patterns to the time it joined its
claims (the check-in, or the status change that added it), so ``block`` mode can let the
older claim stand (SPEC: The agents' side). Rows without it count every pattern from the
session's start. Added only when missing, as in 0002.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_session_claim_times"
down_revision = "0004_message_delivery"
branch_labels = None
depends_on = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("sessions")}
    if "claimed_at" not in have:
        with op.batch_alter_table("sessions", schema=None) as batch_op:
            batch_op.add_column(sa.Column("claimed_at", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("claimed_at")
