"""Alembic's entry point. agentlanes runs it only through ``agentlanes.store.migrate``,
which hands over a connection that already holds the migration lock."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from agentlanes.store import coordination, models  # noqa: F401  (registers the tables)

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations with `agentlanes db upgrade` (agentlanes.store.migrate)")

context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    # SQLite alters most things only by copying a table; batch mode does that for us.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
