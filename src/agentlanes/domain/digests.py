"""Digests of changed text (SPEC "Line-level claims": ``digests``).

Two agents sometimes make the very same change to the same lines (both fix one typo,
both delete one dead function). git's merge takes such a change once: ``xdl_merge`` passes
a pair of hunks with the same base lines and the same new lines. The agent side sends,
with each edit range, a digest of the range's new text, so that the service can tell
that case from two different changes of the same lines (``domain.edits.meet``).

A digest is the first 16 hex digits of the SHA-256 of the range's new lines, each with
its ``\\n`` (the last one without, where git marks "\\ No newline at end of file"), as
bytes (``surrogateescape``: the bytes git printed, whatever their encoding). A deletion's
new text is empty: two identical deletions have the same digest. Only equality counts:
the service compares digests and never reads text.

Only the standard library: the hooks import this.
"""

from __future__ import annotations

import hashlib

from agentlanes.domain.edits import read_hunks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from agentlanes.domain.edits import Digest

# Hex digits kept of the SHA-256: 64 bits, plenty to tell changes of one file apart.
DIGEST_HEX = 16
# What the service accepts: 8-64 lowercase hex digits (other agent sides may keep more).
DIGEST_MIN_HEX = 8
DIGEST_MAX_HEX = 64


def digest(new_lines: Iterable[str]) -> str:
    """The digest of a range's new text: ``new_lines`` each with its own line end (as
    :func:`agentlanes.domain.edits.read_hunks` gives them)."""
    text = "".join(new_lines).encode("utf-8", "surrogateescape")
    return hashlib.sha256(text).hexdigest()[:DIGEST_HEX]


def diff_digests(diff: str) -> dict[str, list[Digest]]:
    """Per file of ``git diff -U0`` output, one digest per hunk, in the order (and for
    the ranges) :func:`agentlanes.domain.edits.parse_unified_zero` reads; None for a
    binary file's change, whose text git does not print."""
    return {
        path: [None if new is None else digest(new) for _, new in hunks]
        for path, hunks in read_hunks(diff).items()
    }


def with_digests(edits: list[dict[str, Any]], diff: str) -> list[dict[str, Any]]:
    """``edits`` in the wire shape, each whose ranges are the hunks of ``diff`` given
    their ``digests`` (one per range; none where no digest is known)."""
    if not diff:
        return edits
    hunks = read_hunks(diff)
    for edit in edits:
        found = hunks.get(edit.get("path", ""))
        if not found or [list(r) for r, _ in found] != edit.get("ranges"):
            continue
        digests = [None if new is None else digest(new) for _, new in found]
        if any(d is not None for d in digests):
            edit["digests"] = digests
    return edits
