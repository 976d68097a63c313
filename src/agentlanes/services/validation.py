"""Checks on what a request carries, each against the settings or the fixed limits
(``settings.LIMITS``): names, areas, patterns, paths, metadata, text fields, choices,
pages. Each refusal is a 400 naming the field; a value that passes comes back as it is
to be stored (trimmed, normalised)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agentlanes.domain import (
    PatternError,
    PatternLimits,
    normalise_path,
    normalise_pattern,
)
from agentlanes.domain.names import NAME_CHARS, NAME_MAX, is_agent_name
from agentlanes.errors import InvalidInput
from agentlanes.services.long_work import run_long
from agentlanes.settings import LIMITS, Settings

# The rule is domain.names' (one place); a compiled form for the coordination services.
AGENT_NAME_RE = re.compile(rf"^[{NAME_CHARS}]{{1,{NAME_MAX}}}\Z")  # \Z: no trailing newline


def pattern_limits(settings: Settings) -> PatternLimits:
    return PatternLimits(
        max_length=settings.max_pattern_length,
        max_wildcards=settings.max_pattern_wildcards,
        max_brace_alternatives=settings.max_brace_alternatives,
    )


def check_agent_name(value: str | None) -> str | None:
    """A checked agent name; None when the server is to make one up."""
    if value is None:
        return None
    if not is_agent_name(value):
        raise InvalidInput("agent_name", "must be 1-64 characters of A-Z a-z 0-9 . _ -")
    return value


def check_area(value: str | None, field: str = "declared_area") -> str | None:
    if value is None:
        return None
    # Limits count what is sent, white space at either end included (as the schema's
    # maxLength does), and only then is it trimmed.
    if len(value) > LIMITS.area_chars:
        raise InvalidInput(field, f"must be at most {LIMITS.area_chars} characters")
    value = value.strip()
    if not value:
        raise InvalidInput(field, "must not be empty (omit it or send null for no area)")
    if any(ord(ch) < 32 for ch in value):
        raise InvalidInput(field, "must not contain control characters")
    return value


def check_patterns(values: Sequence[str] | None, settings: Settings, field: str) -> list[str]:
    """Normalised, de-duplicated patterns in the order given."""
    if values is None:
        return []
    if len(values) > settings.max_patterns:
        raise InvalidInput(field, f"at most {settings.max_patterns} patterns per request")
    lim = pattern_limits(settings)
    out: list[str] = []
    for index, raw in enumerate(values):
        try:
            norm = normalise_pattern(raw, lim)
        except PatternError as exc:
            raise InvalidInput(field, str(exc), index=index, pattern=raw) from None
        if norm not in out:
            out.append(norm)
    return out


# Patterns with more characters than this in all are checked in a worker thread: compiling
# 256 one-kilobyte patterns takes the better part of a second, which the event loop (every
# other project's requests) must not wait for.
PATTERNS_OFF_LOOP_CHARS = 8192


async def check_patterns_off_loop(
    values: Sequence[str] | None, settings: Settings, field: str
) -> list[str]:
    """:func:`check_patterns`, in a worker thread when the patterns are long."""
    if values is None or len(values) > settings.max_patterns:
        return check_patterns(values, settings, field)
    if sum(len(v) for v in values if isinstance(v, str)) <= PATTERNS_OFF_LOOP_CHARS:
        return check_patterns(values, settings, field)
    # Long work takes turns in the process (services/long_work.py): six hostile bodies
    # of 256 one-kilobyte patterns each cost seconds of the interpreter.
    size = sum(len(v) for v in values if isinstance(v, str))
    return await run_long(lambda: check_patterns(values, settings, field), size)


def check_paths(
    values: Sequence[str] | None, settings: Settings, field: str = "paths"
) -> list[str]:
    if values is None:
        return []
    if len(values) > settings.max_paths:
        raise InvalidInput(field, f"at most {settings.max_paths} paths per request")
    lim = pattern_limits(settings)
    out: list[str] = []
    seen: set[str] = set()
    for index, raw in enumerate(values):
        try:
            norm = normalise_path(raw, lim)
        except PatternError as exc:
            raise InvalidInput(field, str(exc), index=index, path=raw) from None
        if norm not in seen:
            seen.add(norm)
            out.append(norm)
    return out


def check_meta(value: dict[str, Any] | None) -> dict[str, Any]:
    if value is None:
        return {}
    if len(json.dumps(value)) > LIMITS.meta_bytes:
        raise InvalidInput("meta", f"must serialise to at most {LIMITS.meta_bytes} bytes of JSON")
    return value


def check_status_text(value: str | None) -> str | None:
    if value is not None and len(value) > LIMITS.status_text_chars:
        raise InvalidInput("status_text", f"must be at most {LIMITS.status_text_chars} characters")
    return value


def check_text(
    value: str | None,
    field: str,
    *,
    max_chars: int,
    required: bool = False,
    single_line: bool = False,
) -> str | None:
    """A string of at most max_chars as sent, trimmed (not empty once trimmed when
    required), or None when optional and absent or blank."""
    if value is None:
        if required:
            raise InvalidInput(field, "required")
        return None
    if len(value) > max_chars:
        raise InvalidInput(field, f"must be at most {max_chars} characters")
    value = value.strip()
    if not value:
        if required:
            raise InvalidInput(field, "must not be empty")
        return None
    if single_line and any(ord(ch) < 32 for ch in value):
        raise InvalidInput(field, "must not contain control characters")
    return value


def check_choice(value: str | None, field: str, allowed: tuple[str, ...]) -> str | None:
    """``value`` when it is None or one of ``allowed``; a 400 listing them otherwise."""
    if value is not None and value not in allowed:
        raise InvalidInput(field, f"must be one of {', '.join(allowed)}")
    return value


def check_page(limit: int | None, offset: int | None) -> tuple[int, int]:
    """A page window: limit 1..500 (default 100), offset >= 0."""
    if limit is None:
        limit = LIMITS.page_size_default
    if not 1 <= limit <= LIMITS.page_size:
        raise InvalidInput("limit", f"must be 1-{LIMITS.page_size}")
    offset = offset or 0
    if not 0 <= offset <= LIMITS.page_offset:
        raise InvalidInput("offset", f"must be 0-{LIMITS.page_offset}")
    return limit, offset


def check_json_size(value: Any, field: str, max_bytes: int) -> None:
    if len(json.dumps(value)) > max_bytes:
        raise InvalidInput(field, f"must serialise to at most {max_bytes} bytes of JSON")
