"""ids never reused; messages numbered per project; browser tokens know their key

Revision ID: 0003_ids_never_reused
Revises: 0002_project_keys
Create Date: 2026-11-25 17:10:00

SPEC ("One agent cannot hurt another"): lifecycles do not leak.

* On SQLite a table without AUTOINCREMENT hands the largest rowid out again once its row
  is deleted: a project made after a DELETE got the deleted one's id. The tables whose
  integer ids are shown or referenced (projects, events, task_notes, messages,
  message_receipts, consensus_votes) are rebuilt with AUTOINCREMENT (SQLite cannot add it
  in place; ``store/migrate.py`` turns foreign keys off around the rebuild, as SQLite's
  own procedure for table changes says, and checks them before the commit). PostgreSQL
  sequences never go back: nothing to do there.
* ``messages.number``: the ``message_id`` the API shows, numbered per project (the
  offset of the ``message.created`` event), not one sequence across projects. Existing
  messages are numbered 1, 2, … per project in send order; a project's event offset is
  at least its message count, so new numbers follow on.
* ``realtime_tokens.api_key_hash``: the key that minted a browser token, so the token
  dies with that key (revoked, or rotated and its grace over).
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0003_ids_never_reused"
down_revision = "0002_project_keys"
branch_labels = None
depends_on = None

# Parents before children does not matter here: foreign keys are off during the rebuild.
AUTOINCREMENT_TABLES = (
    "projects",
    "events",
    "task_notes",
    "messages",
    "message_receipts",
    "consensus_votes",
)


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    message_columns = {c["name"] for c in inspector.get_columns("messages")}
    token_columns = {c["name"] for c in inspector.get_columns("realtime_tokens")}

    if "number" not in message_columns:
        with op.batch_alter_table("messages", schema=None) as batch_op:
            batch_op.add_column(sa.Column("number", sa.BigInteger(), nullable=True))
        # 1, 2, … per project in send order (ids grow with time within a project): one
        # window pass into a keyed scratch table, then one look-up per row (a count per
        # row was quadratic in a project's messages). ROW_NUMBER: SQLite 3.25+, PostgreSQL.
        bind.execute(
            sa.text("CREATE TEMPORARY TABLE message_numbers (id BIGINT PRIMARY KEY, n BIGINT)")
        )
        bind.execute(
            sa.text(
                "INSERT INTO message_numbers (id, n) SELECT id, "
                "ROW_NUMBER() OVER (PARTITION BY project_id ORDER BY id) FROM messages"
            )
        )
        bind.execute(
            sa.text(
                "UPDATE messages SET number = "
                "(SELECT n FROM message_numbers WHERE message_numbers.id = messages.id)"
            )
        )
        bind.execute(sa.text("DROP TABLE message_numbers"))
        with op.batch_alter_table("messages", schema=None) as batch_op:
            batch_op.alter_column("number", existing_type=sa.BigInteger(), nullable=False)
            batch_op.create_unique_constraint("uq_messages_number", ["project_id", "number"])

    if "api_key_hash" not in token_columns:
        with op.batch_alter_table("realtime_tokens", schema=None) as batch_op:
            batch_op.add_column(
                sa.Column(
                    "api_key_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True
                )
            )

    if bind.dialect.name == "sqlite":
        for table in AUTOINCREMENT_TABLES:
            with op.batch_alter_table(
                table, recreate="always", table_kwargs={"sqlite_autoincrement": True}
            ):
                pass


def downgrade() -> None:
    # AUTOINCREMENT stays (it is harmless to the older schema).
    with op.batch_alter_table("realtime_tokens", schema=None) as batch_op:
        batch_op.drop_column("api_key_hash")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_constraint("uq_messages_number", type_="unique")
        batch_op.drop_column("number")
