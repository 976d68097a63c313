"""projects: epoch, key rotation and revocation

Revision ID: 0002_project_keys
Revises: 0001_baseline
Create Date: 2026-11-23 21:43:38.751035

``epoch`` names the life of a project's event log (clients compare it to tell a reset
log from a continued one): every existing project gets a random one. The key columns
let ``rotate-key`` keep the replaced key valid for a grace period, and ``revoke-key``
shut every key out.

Each column is added only when missing: a database that a newer build's ``create_all``
made before it had a version (stamped at the baseline) may have some already.
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0002_project_keys"
down_revision = "0001_baseline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    have = {c["name"] for c in inspector.get_columns("projects")}
    indexes = {i["name"] for i in inspector.get_indexes("projects")}
    new_columns = [
        # A constant server default lets NOT NULL be added to filled tables on every
        # backend (SQLite refuses NOT NULL without one); the rows get random epochs below.
        sa.Column(
            "epoch",
            sqlmodel.sql.sqltypes.AutoString(length=32),
            nullable=False,
            server_default="",
        ),
        sa.Column(
            "previous_api_key_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True
        ),
        sa.Column("previous_key_expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("key_revoked_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
    ]
    with op.batch_alter_table("projects", schema=None) as batch_op:
        for column in new_columns:
            if column.name not in have:
                batch_op.add_column(column)
        if "ix_projects_previous_api_key_hash" not in indexes:
            batch_op.create_index(
                "ix_projects_previous_api_key_hash", ["previous_api_key_hash"], unique=False
            )

    projects = sa.table("projects", sa.column("id", sa.Integer), sa.column("epoch", sa.String))
    ids = bind.execute(
        sa.select(projects.c.id).where(sa.or_(projects.c.epoch == "", projects.c.epoch.is_(None)))
    ).scalars()
    for project_id in list(ids):
        bind.execute(
            projects.update().where(projects.c.id == project_id).values(epoch=secrets.token_hex(8))
        )
    if bind.dialect.name != "sqlite":
        # SQLite cannot drop a default without copying the table; there it stays, unused.
        op.alter_column("projects", "epoch", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_index("ix_projects_previous_api_key_hash")
        batch_op.drop_column("key_revoked_at")
        batch_op.drop_column("previous_key_expires_at")
        batch_op.drop_column("previous_api_key_hash")
        batch_op.drop_column("epoch")
