"""Brace expansion, exactly as wcmatch does it (through ``bracex``)."""

from __future__ import annotations

import re
from itertools import islice

import bracex

from .errors import PatternError

_EXPANSION_CAP = 1 << 16  # beyond any configured limit; normalise_pattern enforces those
_MULTI_SLASH = re.compile(r"/{2,}")


def _expand(pattern: str, limit: int) -> list[str]:
    """Brace alternatives exactly as wcmatch makes them; PatternError if too many."""
    if "{" not in pattern:  # no brace: the pattern itself (bracex would say so, slowly)
        collapsed = _MULTI_SLASH.sub("/", pattern)
        return [collapsed] if collapsed else []
    try:
        expanded = bracex.iexpand(pattern, keep_escapes=True, limit=0, return_empty=True)
        alts = list(islice(expanded, limit + 1))
    except (bracex.ExpansionLimitException, ValueError, RecursionError) as exc:
        raise PatternError(pattern, "brace expansion cannot be computed") from exc
    if len(alts) > limit:
        raise PatternError(pattern, f"brace expansion yields more than {limit} alternatives")
    # wcmatch collapses repeated separators, as a brace may leave 'a//b'.
    out: list[str] = []
    for alt in alts:
        collapsed = _MULTI_SLASH.sub("/", alt)
        if collapsed and collapsed not in out:
            out.append(collapsed)
    return out
