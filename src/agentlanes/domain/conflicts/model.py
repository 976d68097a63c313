"""What the conflict detector takes and answers: a live session's claim (``Scope``), and
each conflict with the file overlaps that make it (``Conflict``, ``FileOverlap``)."""

from __future__ import annotations

from dataclasses import dataclass
from time import thread_time
from typing import Any, NamedTuple

# The clock of a search's deadline: the CPU time of the thread that searches. A budget
# (``conflict_search_seconds``) bounds the work a request causes, not the time it waits
# for the interpreter lock or a core while others work: on a busy machine a trivial
# search must not be refused. A deadline is ``work_clock() + budget``, taken in the
# thread that searches.
work_clock = thread_time


@dataclass(frozen=True)
class Scope:
    """One live session's claim."""

    session_id: str
    agent_name: str
    declared_area: str | None
    patterns: tuple[str, ...]  # normalised


class _FileOverlapFields(NamedTuple):
    pattern: str
    their_pattern: str
    example: str
    certain: bool
    if_directory: str | None


class FileOverlap(_FileOverlapFields):
    """My pattern (or concrete path), theirs, a path both claim, and whether for certain.

    ``certain`` false: both claim ``example`` only if ``if_directory`` (a
    prefix of it, named by a slash-less literal) is a directory.

    The answer types are named tuples: a check-in against thousands of
    sessions builds thousands of them, and a tuple is the cheapest immutable
    record Python makes.
    """

    __slots__ = ()

    def _asdict(self) -> dict[str, Any]:
        """The wire shape (SPEC): ``if_directory`` only when the overlap is uncertain."""
        out: dict[str, Any] = {
            "pattern": self.pattern,
            "their_pattern": self.their_pattern,
            "example": self.example,
            "certain": self.certain,
        }
        if self.if_directory is not None:
            out["if_directory"] = self.if_directory
        return out


class Conflict(NamedTuple):
    """Another live session that my scope collides with, and why.

    ``certain``: the work areas are the same or some file overlap is certain
    (what ``block`` mode refuses on). ``files_truncated``: the detector was asked for at
    most so many files per conflict and there were more (``certain`` still counts them
    all).
    """

    session_id: str
    agent_name: str
    declared_area: str | None
    overlapping_area: bool
    overlapping_files: tuple[FileOverlap, ...]
    certain: bool
    files_truncated: bool = False
    # Line-level claims (services/line_claims.py): "lines" | "file" | "claims" once graded,
    # the overlap's edited files, and whether only the other side edited one of them.
    grade: str | None = None
    edits: tuple[dict[str, Any], ...] = ()
    theirs_only: bool = False
    # Range claims (domain/range_claims.py): the files a range claim is on, graded.
    claims: tuple[dict[str, Any], ...] = ()


class SearchTooLong(Exception):
    """A conflict search passed its deadline (the caller's budget of server time)."""

    def __init__(self, decided: int) -> None:
        self.decided = decided
        super().__init__(f"conflict search passed its deadline after {decided} decisions")
