"""Alembic migrations of the agentlanes schema (run by ``agentlanes.store.migrate``)."""
