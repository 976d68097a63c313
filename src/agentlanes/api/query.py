"""Query-string values parsed with errors that name the parameter (400 VALIDATION_ERROR)."""

from __future__ import annotations

from agentlanes.errors import InvalidInput


def int_param(name: str, raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidInput(name, "must be an integer") from None


def bool_param(name: str, raw: str | None) -> bool | None:
    if raw is None or raw == "":
        return None
    value = raw.strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise InvalidInput(name, "must be true or false")
