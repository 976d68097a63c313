"""Time in one place: naive UTC datetimes in storage, ISO-8601 with ``Z`` on the wire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def utcnow() -> datetime:
    """Now, as a naive UTC datetime (what the database columns hold)."""
    return datetime.now(UTC).replace(tzinfo=None)


def iso(value: datetime | None) -> str | None:
    """ISO-8601 UTC with a ``Z`` suffix, or None."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat(timespec="microseconds") + "Z"


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)
