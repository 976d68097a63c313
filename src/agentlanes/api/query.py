"""Query-string values parsed with errors that name the parameter (400 VALIDATION_ERROR)."""

from __future__ import annotations

from agentlanes.errors import InvalidInput

MAX_INT = 2**63 - 1  # what every database column here can hold


def int_param(name: str, raw: str | None) -> int | None:
    """An ASCII decimal integer within the databases' 64-bit range, or None when absent."""
    if raw is None or raw == "":
        return None
    text = raw.strip()
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isascii() and digits.isdigit()):
        raise InvalidInput(name, "must be an integer")
    value = int(text)
    if not -MAX_INT <= value <= MAX_INT:
        raise InvalidInput(name, "is out of range")
    return value


def bool_param(name: str, raw: str | None) -> bool | None:
    if raw is None or raw == "":
        return None
    value = raw.strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise InvalidInput(name, "must be true or false")
