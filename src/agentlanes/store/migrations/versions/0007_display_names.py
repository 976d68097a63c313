"""display names and human messages

Revision ID: 0007_display_names
Revises: 0006_line_level_claims
Create Date: 2026-11-27 21:10:00.000000

``sessions.display_name`` keeps each session's short name (``claude-1``), given at
check-in and unique among the project's live sessions (SPEC "Many agents, one working
tree"); a session of an older release has none and is shown under its agent name.
``messages.sender_kind`` tells a person's message (``human``: sent with the project key
and ``--as NAME``) from an agent's (``agent``, every existing row). Added only when
missing, as in 0002.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_display_names"
down_revision = "0006_line_level_claims"
branch_labels = None
depends_on = None


def _columns(table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    if "display_name" not in _columns("sessions"):
        with op.batch_alter_table("sessions", schema=None) as batch_op:
            batch_op.add_column(sa.Column("display_name", sa.String(length=64), nullable=True))
    if "sender_kind" not in _columns("messages"):
        with op.batch_alter_table("messages", schema=None) as batch_op:
            batch_op.add_column(
                sa.Column(
                    "sender_kind", sa.String(length=8), nullable=False, server_default="agent"
                )
            )


def downgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("sender_kind")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("display_name")
