"""Long reports cut short for people (stdlib only: the git hook uses it)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any


def capped(lines: Iterable[str], limit: int) -> Iterator[str]:
    """At most ``limit`` lines, then one saying how many were left out."""
    rest = 0
    for n, line in enumerate(lines):
        if n < limit:
            yield line
        else:
            rest += 1
    if rest:
        yield f"... and {rest} more"


def claimed_earlier(
    others: list[dict[str, Any]], own: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The conflicts that can refuse an edit or a commit: the older claim stands (SPEC).

    ``own``: the caller's own session's entries in the same ``conflicts/check`` answer
    (asked without the token); each overlapping file carries ``claimed_at``, when that
    pattern joined its session's claims. An overlap on a path I claimed before they did
    is left out; without times (an older server) every overlap counts, as before. A
    conflict keeps its other overlaps, and a shared work area always counts.
    """
    mine: dict[str, str] = {}
    for c in own:
        for f in c.get("overlapping_files") or []:
            at, path = f.get("claimed_at"), f.get("pattern")
            if isinstance(at, str) and isinstance(path, str) and at < mine.get(path, "~"):
                mine[path] = at
    out = []
    for c in others:
        files = [
            f
            for f in c.get("overlapping_files") or []
            if not (
                isinstance(f.get("claimed_at"), str)
                and mine.get(f.get("pattern"), "~") < f["claimed_at"]
            )
        ]
        if files or c.get("overlapping_area"):
            certain = bool(c.get("overlapping_area")) or any(f.get("certain", True) for f in files)
            out.append({**c, "overlapping_files": files, "certain": certain})
    return out


def edit_lines(conflict: dict[str, Any]) -> Iterator[str]:
    """What the overlap's edits say (SPEC "Line-level claims"): ``src/a.py: alice's edits
    (lines 10-12) meet yours (11): a merge conflict ahead``, or that git merges them, or
    that only they have edited it."""
    agent = conflict.get("agent_name", "?")
    for f in conflict.get("edits") or []:
        theirs = ranges_text(f.get("ranges"))
        if f.get("edited_by") == "both" and f.get("grade") == "lines":
            if f.get("same_base", True):
                yield (
                    f"{f.get('path')}: {agent}'s edits (lines {theirs}) meet yours "
                    f"(lines {ranges_text(f.get('my_ranges'))}): a merge conflict ahead"
                )
            else:
                yield (
                    f"{f.get('path')}: {agent} edited it on another base than yours: "
                    "a merge conflict may be ahead"
                )
        elif f.get("edited_by") == "both":
            yield (
                f"{f.get('path')}: {agent}'s edits (lines {theirs}) are apart from yours: "
                "git merges them"
            )
        elif f.get("edited_by") == "them":
            yield f"{f.get('path')}: {agent} has edited it (lines {theirs}); you have not"


def ranges_text(ranges: Any) -> str:
    """``10-12, after 40`` for base ranges ``[[10, 12], [41, 40]]`` (lists or tuples)."""
    parts = []
    for r in ranges or []:
        if isinstance(r, list | tuple) and len(r) == 2:
            s, e = r
            parts.append(f"after {s - 1}" if e < s else (str(s) if s == e else f"{s}-{e}"))
    return ", ".join(parts) or "?"
