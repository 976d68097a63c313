"""line-level claims: sessions' edits, projects' block_on and line_margin

Revision ID: 0006_line_level_claims
Revises: 0005_session_claim_times
Create Date: 2026-11-25 20:20:00.000000

``sessions.edits`` keeps what each agent changed per file (base blob and the base line
ranges its hunks replace), so overlaps can be graded ``lines`` / ``file`` (SPEC
"Line-level claims"). ``projects.block_on`` (``claims``, today's rule, for every existing
project) and ``projects.line_margin`` (0) are the project's settings for it. Added only
when missing, as in 0002.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_line_level_claims"
down_revision = "0005_session_claim_times"
branch_labels = None
depends_on = None


def _columns(table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    if "edits" not in _columns("sessions"):
        with op.batch_alter_table("sessions", schema=None) as batch_op:
            batch_op.add_column(sa.Column("edits", sa.JSON(), nullable=True))
    have = _columns("projects")
    with op.batch_alter_table("projects", schema=None) as batch_op:
        if "block_on" not in have:
            batch_op.add_column(
                sa.Column("block_on", sa.String(length=8), nullable=False, server_default="claims")
            )
        if "line_margin" not in have:
            batch_op.add_column(
                sa.Column("line_margin", sa.Integer(), nullable=False, server_default="0")
            )


def downgrade() -> None:
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_column("line_margin")
        batch_op.drop_column("block_on")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("edits")
