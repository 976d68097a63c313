"""Which live scopes a new scope, or a set of staged paths, collides with.

``model`` holds what goes in and comes out (``Scope``, ``Conflict``, ``FileOverlap``),
``trie`` the index of live patterns and its walks, ``detector`` the
:class:`ConflictDetector` that keeps one project's live scopes and answers."""

from .detector import KEEP_ANSWERS_FROM, KEEP_PER_PATTERN, ConflictDetector
from .model import Conflict, FileOverlap, Scope, SearchTooLong, work_clock

__all__ = [
    "KEEP_ANSWERS_FROM",
    "KEEP_PER_PATTERN",
    "Conflict",
    "ConflictDetector",
    "FileOverlap",
    "Scope",
    "SearchTooLong",
    "work_clock",
]
