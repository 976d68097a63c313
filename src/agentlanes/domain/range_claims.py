"""Range claims (SPEC "Line-level claims": ``claims: [{path, base, ranges, symbol?}]``).

A session may claim line ranges of a file before it edits them (a function, a class's
method: the agent side reads a symbol's lines with tree-sitter). A range claim holds its
path for the conflict detector as a plain claim does, and is graded against the other
side's range claims and edits on that file by the rule edits are graded by
(:func:`agentlanes.domain.edits.grade_file`): they meet (a certain overlap, ``lines``) or
they are apart (they coexist: the file overlap is not certain, ``file``). A claim of the
whole file (a plain pattern that covers it, with no lines of that side there) meets every
range. Where a side has lines on a file (range claims or edits), those lines are its
claim on that file, whatever pattern of its own also covers it.

An overlapping file of a conflict is decided by lines only when it is that one file on
both sides: one of the two patterns names the path itself (a glob of the other side
shares nothing else with it), the overlap was certain, and a range claim is on either
side (two sides' edits alone are graded as before: ``block_on = claims`` refuses them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from agentlanes.domain.conflicts import Conflict
from agentlanes.domain.edits import FILE, LINES, FileEdit, Range, grade_file
from agentlanes.domain.globs.compiler import is_literal


class RangeClaim(NamedTuple):
    """One claimed set of lines of one file: its base blob (None: new since ``HEAD``),
    the base lines (sorted, joined) and the symbol they were read from, if any."""

    path: str
    base: str | None
    ranges: tuple[Range, ...]
    symbol: str | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "base": self.base,
            "ranges": [list(r) for r in self.ranges],
        }
        if self.symbol is not None:
            out["symbol"] = self.symbol
        return out


def by_path(claims: Iterable[RangeClaim]) -> dict[str, FileEdit]:
    """A session's claimed lines per file (one base per file: the service checks it), as
    an edit is held: sorted, the ranges that share a line joined."""
    ranges: dict[str, list[Range]] = {}
    bases: dict[str, str | None] = {}
    for c in claims:
        ranges.setdefault(c.path, []).extend(c.ranges)
        bases[c.path] = c.base
    out = {}
    for path, found in ranges.items():
        joined: list[Range] = []
        for start, end in sorted(found):
            if joined and start <= joined[-1][1] and end >= joined[-1][0]:
                joined[-1] = (joined[-1][0], max(joined[-1][1], end))
            else:
                joined.append((start, end))
        out[path] = FileEdit(bases[path], tuple(joined))
    return out


def paths(claims: Iterable[RangeClaim]) -> list[str]:
    """The files claimed by range, once each, in order."""
    return list(dict.fromkeys(c.path for c in claims))


class Side(NamedTuple):
    """One session as grading reads it: its edits and its range claims per file."""

    edits: Mapping[str, FileEdit]
    claims: Mapping[str, FileEdit]

    def lines(self, path: str) -> list[FileEdit]:
        return [x for x in (self.edits.get(path), self.claims.get(path)) if x is not None]


def _meets(mine: Sequence[FileEdit], theirs: Sequence[FileEdit], margin: int) -> bool:
    return any(grade_file(m, t, margin)[0] == LINES for m in mine for t in theirs)


def grade_claims(
    conflict: Conflict,
    me: Side,
    them: Side,
    *,
    i_claim: Callable[[str], bool],
    margin: int = 0,
    max_files: int = 10,
) -> Conflict:
    """``conflict`` (graded from its edits already) with the range claims of both sides
    weighed in: its ``claims`` entries (the files a range claim is on, a few), its file
    overlaps decided by lines no longer certain where the lines are apart, ``certain``
    and ``grade`` again, and ``theirs_only`` without the files I hold lines of."""
    if not (me.claims or them.claims):
        return conflict
    entries: list[dict[str, Any]] = []
    apart: set[str] = set()
    met = False
    for path in sorted(set(me.claims) | set(them.claims)):
        mine, theirs = me.lines(path), them.lines(path)
        if mine and theirs:
            grade = LINES if _meets(mine, theirs, margin) else FILE
            if grade == FILE:
                apart.add(path)
        elif (theirs and i_claim(path)) or (mine and _they_claim_whole(conflict, path)):
            grade = LINES  # a claim of the whole file meets every range
        else:
            continue
        met = met or grade == LINES
        entry: dict[str, Any] = {"path": path, "grade": grade}
        if path in them.claims:
            entry["ranges"] = [list(r) for r in them.claims[path].ranges]
        if path in me.claims:
            entry["my_ranges"] = [list(r) for r in me.claims[path].ranges]
        entries.append(entry)
    files = tuple(
        f._replace(certain=False)
        if f.certain
        and f.example in apart
        and (_names(f.pattern, f.example) or _names(f.their_pattern, f.example))
        else f
        for f in conflict.overlapping_files
    )
    certain = conflict.overlapping_area or any(f.certain for f in files)
    if conflict.files_truncated:  # overlaps not seen may be certain: as found
        certain = conflict.certain
    if met or conflict.grade == LINES:
        grade = LINES
    elif apart or conflict.grade == FILE:
        grade = FILE
    else:
        grade = conflict.grade or "claims"
    theirs_only = conflict.theirs_only and any(
        p not in me.edits and p not in me.claims and i_claim(p) for p in them.edits
    )
    entries.sort(key=lambda e: e["grade"] != LINES)
    return conflict._replace(
        overlapping_files=files,
        certain=certain,
        grade=grade,
        theirs_only=theirs_only,
        claims=tuple(entries[:max_files]),
    )


def _names(pattern: str, path: str) -> bool:
    """Whether ``pattern`` is the path itself (a literal: nothing else shares it)."""
    return pattern == path and is_literal(pattern)


def _they_claim_whole(conflict: Conflict, path: str) -> bool:
    """Whether the other side claims ``path`` by a pattern (for certain) while holding no
    lines of it: one of the conflict's overlaps names it."""
    return any(f.certain and f.example == path for f in conflict.overlapping_files)
