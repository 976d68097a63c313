"""message_receipts: delivered_at

Revision ID: 0004_message_delivery
Revises: 0003_ids_never_reused
Create Date: 2026-11-25 17:10:00.000000

A message put in an agent's context (the agent's news, read by its hooks) counts as
delivered, per recipient, beside read and acknowledged. Existing receipts keep no
delivery time (their messages were read or acknowledged already, if anything).

The column is added only when missing, as in 0002.
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0004_message_delivery"
down_revision = "0003_ids_never_reused"
branch_labels = None
depends_on = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("message_receipts")}
    if "delivered_at" not in have:
        with op.batch_alter_table("message_receipts", schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("delivered_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True)
            )


def downgrade() -> None:
    with op.batch_alter_table("message_receipts", schema=None) as batch_op:
        batch_op.drop_column("delivered_at")
