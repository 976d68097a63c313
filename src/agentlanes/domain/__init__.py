"""Pure domain logic: the glob engine and the conflict detector.

Imports only the standard library and wcmatch, so the git hook can load it
quickly.
"""

from .conflicts import Conflict, ConflictDetector, FileOverlap, Scope
from .patterns import (
    PatternError,
    PatternLimits,
    claims,
    normalise_path,
    normalise_pattern,
    overlap_example,
)

__all__ = [
    "Conflict",
    "ConflictDetector",
    "FileOverlap",
    "PatternError",
    "PatternLimits",
    "Scope",
    "claims",
    "normalise_path",
    "normalise_pattern",
    "overlap_example",
]
