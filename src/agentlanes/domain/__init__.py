"""Pure domain logic: the glob engine and the conflict detector.

Imports only the standard library and wcmatch, so the git hook can load it
quickly.
"""

from .conflicts import Conflict, ConflictDetector, FileOverlap, Scope
from .globs import (
    Overlap,
    PatternError,
    PatternLimits,
    claims,
    claims_for_certain,
    normalise_path,
    normalise_pattern,
    overlap,
    overlap_example,
)

__all__ = [
    "Conflict",
    "ConflictDetector",
    "FileOverlap",
    "Overlap",
    "PatternError",
    "PatternLimits",
    "Scope",
    "claims",
    "claims_for_certain",
    "normalise_path",
    "normalise_pattern",
    "overlap",
    "overlap_example",
]
