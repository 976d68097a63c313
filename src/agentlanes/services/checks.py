"""Input checks the coordination services share: text fields, ids, pages. Each refusal is a
400 naming the field."""

from __future__ import annotations

import json
import secrets
from typing import Any

from agentlanes.errors import InvalidInput

MAX_PAGE = 500
MAX_OFFSET = 10_000_000
DEFAULT_PAGE = 100


def new_id(prefix: str) -> str:
    """``<prefix>_<24 hex>``: random, so ids reveal nothing about volume or order."""
    return f"{prefix}_{secrets.token_hex(12)}"


def text(
    value: str | None,
    field: str,
    *,
    max_chars: int,
    required: bool = False,
    single_line: bool = False,
) -> str | None:
    """A trimmed string of 1..max_chars, or None when optional and absent."""
    if value is None:
        if required:
            raise InvalidInput(field, "required")
        return None
    value = value.strip()
    if not value:
        if required:
            raise InvalidInput(field, "must not be empty")
        return None
    if len(value) > max_chars:
        raise InvalidInput(field, f"must be at most {max_chars} characters")
    if single_line and any(ord(ch) < 32 for ch in value):
        raise InvalidInput(field, "must not contain control characters")
    return value


def one_of(value: str | None, field: str, allowed: tuple[str, ...]) -> str | None:
    """``value`` when it is None or one of ``allowed``; a 400 listing them otherwise."""
    if value is not None and value not in allowed:
        raise InvalidInput(field, f"must be one of {', '.join(allowed)}")
    return value


def page(limit: int | None, offset: int | None) -> tuple[int, int]:
    """A page window: limit 1..500 (default 100), offset >= 0."""
    if limit is None:
        limit = DEFAULT_PAGE
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput("limit", f"must be 1-{MAX_PAGE}")
    offset = offset or 0
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidInput("offset", f"must be 0-{MAX_OFFSET}")
    return limit, offset


def json_size(value: Any, field: str, max_bytes: int) -> None:
    if len(json.dumps(value)) > max_bytes:
        raise InvalidInput(field, f"must serialise to at most {max_bytes} bytes of JSON")
