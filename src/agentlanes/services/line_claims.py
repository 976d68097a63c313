"""Line-level claims (SPEC): the edits a session reports, as stored and shown, and the
grade of each conflict from the two sessions' edits.

The rules are :mod:`agentlanes.domain.edits` (the merge rule, the grades, what ``block_on =
lines`` refuses); this module turns what a request, a row or an event carries into
``FileEdit`` values and back, and grades the conflicts a search found. Grading runs where
the search runs (``LiveProject.find``, in its worker thread and within its budget), and
only over the sessions the search found in conflict: its cost grows with the edits of
the two sessions of a conflict, not with the swarm.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from agentlanes.domain import PatternError, normalise_path, range_claims
from agentlanes.domain.conflicts import Conflict
from agentlanes.domain.digests import DIGEST_MAX_HEX, DIGEST_MIN_HEX
from agentlanes.domain.edits import LINES, Digest, FileEdit, Range, grade_pair, hull
from agentlanes.domain.globs import claims
from agentlanes.domain.globs.compiler import is_literal
from agentlanes.domain.range_claims import RangeClaim
from agentlanes.errors import InvalidInput
from agentlanes.services.validation import pattern_limits
from agentlanes.settings import LIMITS, Settings

BASE_RE = re.compile(r"^[0-9a-f]{4,64}\Z")
DIGEST_RE = re.compile(rf"^[0-9a-f]{{{DIGEST_MIN_HEX},{DIGEST_MAX_HEX}}}\Z")

Edits = Mapping[str, FileEdit]
# A range claim's symbol name (Login.check): at most this long.
SYMBOL_CHARS = 200


def check_edits(
    values: Sequence[Mapping[str, Any]] | None, settings: Settings, field: str = "edits"
) -> dict[str, FileEdit | None]:
    """What a request reports, checked: ``{path: FileEdit}``, or ``None`` for a file whose
    ``ranges`` are empty (no change left against ``HEAD``: its edits are dropped). Ranges
    that overlap are joined; a file with more than ``LIMITS.edit_ranges`` is kept as one
    covering range (conservative: it can only turn ``file`` into ``lines``)."""
    if values is None:
        return {}
    if len(values) > LIMITS.edit_files:
        raise InvalidInput(field, f"at most {LIMITS.edit_files} files per request")
    lim = pattern_limits(settings)
    out: dict[str, FileEdit | None] = {}
    for index, item in enumerate(values):
        raw = item.get("path")
        try:
            path = normalise_path(raw if isinstance(raw, str) else "", lim)
        except PatternError as exc:
            raise InvalidInput(field, f"path: {exc}", index=index, path=raw) from None
        base = item.get("base")
        if base is not None and not (isinstance(base, str) and BASE_RE.match(base)):
            raise InvalidInput(
                field, "base must be a git blob id (4-64 of 0-9 a-f) or null", index=index
            )
        pairs = _check_ranges(item.get("ranges"), settings.edits_max_ranges, field, index)
        digests = _check_digests(item.get("digests"), len(pairs), field, index)
        ranges, kept = _joined(pairs, digests)
        out[path] = FileEdit(base, ranges, kept) if ranges else None
    return out


def _whole(n: Any) -> int | None:
    """``n`` as a line number: an int, or a float that is a whole number (JSON has numbers:
    12.0 is the integer 12); None for anything else (``true``, ``"4"``, 12.5)."""
    if isinstance(n, bool):
        return None
    if isinstance(n, int):
        return n
    if isinstance(n, float) and n.is_integer():
        return int(n)
    return None


def _small(raw: Any) -> bool:
    """Whether a refused range is small enough to be shown back in the error."""
    return isinstance(raw, list) and len(raw) <= 3 and all(type(n) in (int, float) for n in raw)


def _check_ranges(value: Any, most: int, field: str, index: int) -> list[Range]:
    """A file's ranges, checked, in the order given. Counted first (SPEC: at most
    ``edits_max_ranges``, before anything is sorted or joined): the work is bounded by the
    setting, not by the body."""
    if not isinstance(value, list):
        raise InvalidInput(field, "ranges must be a list of [start, end]", index=index)
    if len(value) > most:
        raise InvalidInput(
            field,
            f"at most {most} ranges per file (edits_max_ranges); this file has {len(value)}: "
            "report a covering range instead",
            index=index,
        )
    top = LIMITS.edit_line_max
    pairs: list[Range] = []
    for raw in value:
        pair = (
            (_whole(raw[0]), _whole(raw[1]))
            if isinstance(raw, list | tuple) and len(raw) == 2
            else (None, None)
        )
        start, end = pair
        if start is None or end is None or not (1 <= start <= top and start - 1 <= end <= top):
            raise InvalidInput(
                field,
                f"each range must be [start, end] with 1 <= start <= end + 1 <= {top + 1} "
                "(base lines, 1-based; [a+1, a] is an insertion after line a)",
                index=index,
                **({"range": raw} if _small(raw) else {}),
            )
        pairs.append((start, end))
    return pairs


def _check_digests(value: Any, count: int, field: str, index: int) -> list[Digest] | None:
    """A file's ``digests`` (optional): one per range, each 8-64 of 0-9 a-f or null (no
    digest for that range). The count is checked before any item is read."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != count:
        raise InvalidInput(
            field,
            f"digests must be a list of one digest per range ({count}): hex strings or null",
            index=index,
        )
    for digest in value:
        if digest is not None and not (isinstance(digest, str) and DIGEST_RE.match(digest)):
            raise InvalidInput(
                field,
                f"each digest must be {DIGEST_MIN_HEX}-{DIGEST_MAX_HEX} of 0-9 a-f, or null",
                index=index,
            )
    return list(value)


def _joined(
    pairs: list[Range], digests: list[Digest] | None
) -> tuple[tuple[Range, ...], tuple[Digest, ...] | None]:
    """The ranges sorted and joined, each with its digest: ranges that share a line are one
    change, whose text no one digest tells (None); past ``LIMITS.edit_ranges``, one
    covering range and no digests."""
    given = sorted(zip(pairs, digests or [None] * len(pairs), strict=True))
    joined: list[Range] = []
    kept: list[Digest] = []
    for (start, end), digest in given:
        # Touching ranges stay two (git keeps them apart too, and either way they meet
        # whatever meets one of them).
        if joined and start <= joined[-1][1] and end >= joined[-1][0]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], end))
            kept[-1] = None
        else:
            joined.append((start, end))
            kept.append(digest)
    if len(joined) > LIMITS.edit_ranges:
        return (hull(joined),), None
    return tuple(joined), (tuple(kept) if any(d is not None for d in kept) else None)


def merged(
    kept: Edits, given: Mapping[str, FileEdit | None], field: str = "edits"
) -> dict[str, FileEdit]:
    """A session's edits after a status change: the files it lists replace what was kept
    (``None`` drops one), the others stay."""
    out = dict(kept)
    for path, edit in given.items():
        if edit is None:
            out.pop(path, None)
        else:
            out[path] = edit
    if len(out) > LIMITS.edit_files:
        raise InvalidInput(
            field,
            f"a session keeps the edits of at most {LIMITS.edit_files} files; this change "
            f"would make {len(out)} (send ranges: [] for files with no change left)",
        )
    return out


def with_edited_paths(
    patterns: list[str],
    given: Mapping[str, FileEdit | None],
    settings: Settings,
    claimed: Sequence[str] = (),
) -> list[str]:
    """The claims with each reported file's path joined (unless they claim it already).
    ``max_patterns`` bounds what a request declares; the edited paths may take a session's
    claims ``LIMITS.edit_files`` past it, no further: paths joined by edit reports stay
    claimed, so without a bound report after report would grow the claims (and every
    event and search that carries them) without end."""
    # A file claimed by range is held already: its edits are lines of it, not a claim of
    # the whole file (domain/range_claims.py).
    holds = claimer(patterns, claimed)
    new = [p for p, e in given.items() if e is not None and not holds(p)]
    if not new:
        return patterns
    most = settings.max_patterns + LIMITS.edit_files
    if len(patterns) + len(new) > most:
        raise InvalidInput(
            "edits",
            f"the edited files would take your claims to {len(patterns) + len(new)} patterns "
            f"(at most {most}): declare a pattern that covers them (declared_files)",
        )
    return [*patterns, *new]


def check_claims(
    values: Sequence[Mapping[str, Any]] | None, settings: Settings, field: str = "claims"
) -> tuple[RangeClaim, ...]:
    """Range claims as a request sends them (SPEC "Line-level claims"), checked: at most
    ``LIMITS.edit_files`` of them, each a path, its base blob, 1 to ``edits_max_ranges``
    ranges (counted before they are read; sorted and joined) and an optional symbol
    name; the claims of one file share one base."""
    if not values:
        return ()
    if len(values) > LIMITS.edit_files:
        raise InvalidInput(field, f"at most {LIMITS.edit_files} range claims per request")
    lim = pattern_limits(settings)
    out: list[RangeClaim] = []
    bases: dict[str, str | None] = {}
    for index, item in enumerate(values):
        raw = item.get("path")
        try:
            path = normalise_path(raw if isinstance(raw, str) else "", lim)
        except PatternError as exc:
            raise InvalidInput(field, f"path: {exc}", index=index, path=raw) from None
        if not is_literal(path):  # a glob would hold many files, whose lines these are not
            raise InvalidInput(
                field, "path must name one file (no wildcard, brace or escape)", index=index
            )
        base = item.get("base")
        if base is not None and not (isinstance(base, str) and BASE_RE.match(base)):
            raise InvalidInput(
                field, "base must be a git blob id (4-64 of 0-9 a-f) or null", index=index
            )
        if bases.setdefault(path, base) != base:
            raise InvalidInput(
                field, "the range claims of one file must share one base", index=index, path=path
            )
        pairs = _check_ranges(item.get("ranges"), settings.edits_max_ranges, field, index)
        if not pairs:
            raise InvalidInput(field, "ranges must name at least one range", index=index)
        symbol = _check_symbol(item.get("symbol"), field, index)
        out.append(RangeClaim(path, base, _joined(pairs, None)[0], symbol))
    return tuple(out)


def _check_symbol(value: Any, field: str, index: int) -> str | None:
    """A range claim's symbol name, as single-line text is checked (validation.check_text:
    counted as sent, trimmed, not blank, no control character)."""
    if value is None:
        return None
    trimmed = value.strip() if isinstance(value, str) and len(value) <= SYMBOL_CHARS else ""
    if not trimmed or any(ord(ch) < 32 for ch in trimmed):
        raise InvalidInput(
            field,
            f"symbol must be 1-{SYMBOL_CHARS} characters on one line (a name such as "
            "Login.check) or null",
            index=index,
        )
    return trimmed


def claimed_paths_joined(patterns: list[str], claims: Sequence[RangeClaim]) -> list[str]:
    """The patterns the detector holds for a session: its declared patterns and each file
    it claims by range that none of them names as it is. Bounded by construction: a
    request's claims replace the session's, at most ``LIMITS.edit_files`` of them."""
    return [*patterns, *(p for p in range_claims.paths(claims) if p not in patterns)]


def refuses(conflict: Conflict, block_on: str) -> bool:
    """Whether a certain conflict refuses in ``block`` mode under ``block_on`` (SPEC):
    ``claims``, always; ``lines``, when its edits meet, or when only the other side edited
    a file of the overlap."""
    return block_on != "lines" or conflict.grade == LINES or conflict.theirs_only


# -- as stored, as shown ---------------------------------------------------------------------


def _edit(item: Mapping[str, Any]) -> FileEdit:
    """One stored or shown edit: ``{"base", "ranges", "digests"?}``."""
    digests = item.get("digests")
    return FileEdit(
        item.get("base"),
        tuple((int(s), int(e)) for s, e in item.get("ranges") or []),
        None if digests is None else tuple(digests),
    )


def of_stored(stored: Mapping[str, Any] | None) -> dict[str, FileEdit]:
    """From the ``sessions.edits`` column: ``{path: {"base", "ranges", "digests"?}}``."""
    return {path: _edit(v) for path, v in (stored or {}).items()}


def to_stored(edits: Edits) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, e in edits.items():
        out[path] = {"base": e.base, "ranges": [list(r) for r in e.ranges]}
        if e.digests is not None:
            out[path]["digests"] = list(e.digests)
    return out


def of_wire(items: Iterable[Mapping[str, Any]] | None) -> dict[str, FileEdit]:
    """From a session view's ``edits`` list (an event's)."""
    return {str(i["path"]): _edit(i) for i in items or []}


def to_wire(edits: Edits) -> list[dict[str, Any]]:
    return [edits[p].wire(p) for p in sorted(edits)]


def claims_of(items: Iterable[Mapping[str, Any]] | None) -> tuple[RangeClaim, ...]:
    """From the ``sessions.claims`` column or a session view's ``claims`` (one shape)."""
    return tuple(
        RangeClaim(
            str(i["path"]),
            i.get("base"),
            tuple((int(s), int(e)) for s, e in i["ranges"]),
            i.get("symbol"),
        )
        for i in items or []
    )


def claims_wire(claims: Iterable[RangeClaim]) -> list[dict[str, Any]]:
    return [c.wire() for c in claims]


# -- grading ---------------------------------------------------------------------------------


def claimer(patterns: Sequence[str], paths: Sequence[str] = ()) -> Callable[[str], bool]:
    """Whether a path lies in the claims of ``patterns`` and ``paths`` (the claim rule's
    wide reading: an edit that may lie in the overlap counts)."""
    exact = set(paths) | set(patterns)

    @functools.cache
    def claimed(path: str) -> bool:
        return path in exact or any(claims(p, path) for p in patterns)

    return claimed


def graded(
    conflict: Conflict,
    mine: Edits,
    i_claim: Callable[[str], bool],
    theirs: Edits,
    *,
    margin: int,
    max_files: int,
    my_claims: Edits | None = None,
    their_claims: Edits | None = None,
) -> Conflict:
    """The conflict with its ``grade`` and the overlap's edited files; with range claims
    on either side, those weighed in too (domain/range_claims.py)."""
    g = grade_pair(
        mine,
        theirs,
        i_claim=i_claim,
        margin=margin,
        max_files=max_files,
    )
    out = conflict._replace(grade=g.grade, edits=g.files, theirs_only=g.theirs_only)
    if not (my_claims or their_claims):
        return out
    return range_claims.grade_claims(
        out,
        range_claims.Side(mine, my_claims or {}),
        range_claims.Side(theirs, their_claims or {}),
        i_claim=i_claim,
        margin=margin,
        max_files=max_files,
    )
