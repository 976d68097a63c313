"""Time in one place: aware UTC datetimes everywhere, ISO-8601 with ``Z`` on the wire."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Now, in UTC (aware; SQLModel's UTCDateTime stores it on every backend)."""
    return datetime.now(UTC)


def iso(value: datetime | None) -> str | None:
    """ISO-8601 UTC with a ``Z`` suffix, or None."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
