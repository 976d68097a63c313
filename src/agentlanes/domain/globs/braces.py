"""Brace expansion, exactly as wcmatch does it (through ``bracex``)."""

from __future__ import annotations

import re

import bracex

from .errors import PatternError

_EXPANSION_CAP = 1 << 16  # beyond any configured limit; normalise_pattern enforces those
_MULTI_SLASH = re.compile(r"/{2,}")


def _expand(pattern: str, limit: int) -> list[str]:
    """Brace alternatives exactly as wcmatch makes them; PatternError if there would be
    more than ``limit`` of them, or none.

    bracex counts as it expands and stops at ``limit``: the cost of a refusal is bounded
    by the limit, never by what the pattern would expand to (``{1..10**18}``, or
    ``{a,b}`` forty times over, are refused in microseconds).
    """
    if "{" not in pattern:  # no brace: the pattern itself (bracex would say so, slowly)
        collapsed = _MULTI_SLASH.sub("/", pattern)
        return [collapsed] if collapsed else []
    try:
        alts = bracex.expand(pattern, keep_escapes=True, limit=limit, return_empty=True)
    except bracex.ExpansionLimitException:
        raise PatternError(
            pattern,
            f"brace expansion yields more than {limit} alternatives "
            "(setting max_brace_alternatives)",
        ) from None
    except (ValueError, RecursionError) as exc:
        raise PatternError(pattern, "brace expansion cannot be computed") from exc
    # wcmatch collapses repeated separators, as a brace may leave 'a//b'.
    out: list[str] = []
    for alt in alts:
        collapsed = _MULTI_SLASH.sub("/", alt)
        if collapsed and collapsed not in out:
            out.append(collapsed)
    if not out:
        raise PatternError(pattern, "brace expansion yields nothing (every alternative is empty)")
    return out
