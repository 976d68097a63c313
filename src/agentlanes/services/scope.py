"""Checks on what a session claims (name, area, patterns, paths), against the settings."""

from __future__ import annotations

import json
import random
import re
import secrets
from collections.abc import Collection, Sequence
from typing import Any

from agentlanes.domain.patterns import (
    PatternError,
    PatternLimits,
    normalise_path,
    normalise_pattern,
)
from agentlanes.errors import InvalidInput
from agentlanes.settings import Settings

AGENT_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}\Z")  # \Z: no trailing newline
MAX_AREA_CHARS = 256
MAX_META_BYTES = 16_384
MAX_STATUS_TEXT_CHARS = 2_000

_ADJECTIVES = (
    "swift", "quiet", "bold", "calm", "keen", "brisk", "bright", "steady", "nimble", "clever",
    "gentle", "lucky", "merry", "proud", "sharp", "wise", "eager", "fair", "grand", "jolly",
)  # fmt: skip


def limits(settings: Settings) -> PatternLimits:
    return PatternLimits(
        max_length=settings.max_pattern_length,
        max_wildcards=settings.max_pattern_wildcards,
        max_brace_expansion=settings.max_brace_expansion,
    )


def generated_agent_name(taken: Collection[str] = ()) -> str:
    """A readable name such as ``agent-swift-42`` for a check-in that gave none, never one
    in ``taken`` (a live name would supersede that agent's session)."""
    for _ in range(20):
        name = f"agent-{random.choice(_ADJECTIVES)}-{random.randint(10, 99)}"
        if name not in taken:
            return name
    return f"agent-{random.choice(_ADJECTIVES)}-{secrets.token_hex(4)}"


def agent_name(value: str | None) -> str | None:
    """A checked agent name; None when the server is to make one up."""
    if value is None:
        return None
    if not AGENT_NAME_RE.match(value):
        raise InvalidInput("agent_name", "must be 1-64 characters of A-Z a-z 0-9 . _ -")
    return value


def area(value: str | None, field: str = "declared_area") -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value:
        raise InvalidInput(field, "must not be empty (omit it or send null for no area)")
    if len(value) > MAX_AREA_CHARS:
        raise InvalidInput(field, f"must be at most {MAX_AREA_CHARS} characters")
    if any(ord(ch) < 32 for ch in value):
        raise InvalidInput(field, "must not contain control characters")
    return value


def patterns(values: Sequence[str] | None, settings: Settings, field: str) -> list[str]:
    """Normalised, de-duplicated patterns in the order given."""
    if values is None:
        return []
    if len(values) > settings.max_patterns:
        raise InvalidInput(field, f"at most {settings.max_patterns} patterns per request")
    lim = limits(settings)
    out: list[str] = []
    for index, raw in enumerate(values):
        try:
            norm = normalise_pattern(raw, lim)
        except PatternError as exc:
            raise InvalidInput(field, str(exc), index=index, pattern=raw) from None
        if norm not in out:
            out.append(norm)
    return out


def paths(values: Sequence[str] | None, settings: Settings, field: str = "paths") -> list[str]:
    if values is None:
        return []
    if len(values) > settings.max_paths:
        raise InvalidInput(field, f"at most {settings.max_paths} paths per request")
    lim = limits(settings)
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


def meta(value: dict[str, Any] | None) -> dict[str, Any]:
    if value is None:
        return {}
    if len(json.dumps(value)) > MAX_META_BYTES:
        raise InvalidInput("meta", f"must serialise to at most {MAX_META_BYTES} bytes of JSON")
    return value


def status_text(value: str | None) -> str | None:
    if value is not None and len(value) > MAX_STATUS_TEXT_CHARS:
        raise InvalidInput("status_text", f"must be at most {MAX_STATUS_TEXT_CHARS} characters")
    return value
