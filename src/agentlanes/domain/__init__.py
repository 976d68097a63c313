"""Pure domain logic: the glob engine, the conflict detector and line-level edits.

Imports only the standard library, wcmatch and bracex. The names below load on first use
(PEP 562), so a hook that needs only :mod:`agentlanes.domain.edits` (the standard library
alone) does not pay for the glob engine at start-up.
"""

from __future__ import annotations

import importlib

# No `typing` at run time: the hooks import agentlanes.domain.words and .edits, and the
# package comes with them (tests/unit/test_agent_adapters.py keeps their import budget).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .conflicts import Conflict, ConflictDetector, FileOverlap, Scope
    from .globs import (
        Overlap,
        PatternError,
        PatternLimits,
        claimed_paths,
        claims,
        claims_for_certain,
        normalise_path,
        normalise_pattern,
        overlap,
        overlap_example,
    )

_FROM = {
    **dict.fromkeys(("Conflict", "ConflictDetector", "FileOverlap", "Scope"), ".conflicts"),
    **dict.fromkeys(
        (
            "Overlap",
            "PatternError",
            "PatternLimits",
            "claimed_paths",
            "claims",
            "claims_for_certain",
            "normalise_path",
            "normalise_pattern",
            "overlap",
            "overlap_example",
        ),
        ".globs",
    ),
}

__all__ = [
    "Conflict",
    "ConflictDetector",
    "FileOverlap",
    "Overlap",
    "PatternError",
    "PatternLimits",
    "Scope",
    "claimed_paths",
    "claims",
    "claims_for_certain",
    "normalise_path",
    "normalise_pattern",
    "overlap",
    "overlap_example",
]


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_FROM[name], __name__), name)
    globals()[name] = value
    return value
