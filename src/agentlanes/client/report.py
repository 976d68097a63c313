"""Conflicts as text, and when one is certain: one formatter and one rule for the editor
guard, the git hooks, the MCP tools and the CLI (standard library only: the hooks import
it on every edit and commit).

What other agents wrote (names, areas, patterns, paths) is cleaned on its way into a line
(agentlanes.domain.words): one line each, no escapes, nothing unseen, at most
``WORDS_MAX`` characters a value, so no value can start a line of its own.
"""

from __future__ import annotations

from agentlanes.domain.words import clean

# The longest value of another agent's shown in a conflict line (a pattern is at most
# 1,024 characters; a line naming two of them still reads as one line).
WORDS_MAX = 300

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

FOR_CERTAIN = "for certain"


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
            kept = {**c, "overlapping_files": files}
            out.append({**kept, "certain": is_certain(kept)})
    return out


def file_is_certain(overlap: dict[str, Any]) -> bool:
    """Whether one overlapping file holds for certain. A missing ``certain`` counts as
    certain: servers before the field reported only overlaps they took as certain."""
    return bool(overlap.get("certain", True))


def is_certain(conflict: dict[str, Any]) -> bool:
    """The one rule of what may refuse: a conflict is certain when the work areas overlap
    or one of its overlapping files is certain (:func:`file_is_certain`). A conflict whose
    overlaps all hold only if some path is a directory is not."""
    if conflict.get("overlapping_area"):
        return True
    return any(file_is_certain(f) for f in conflict.get("overlapping_files") or [])


def certainty(overlap: dict[str, Any]) -> str:
    """``for certain``, or the condition under which the overlap holds (SPEC: File
    patterns): ``only if `package.json` is a directory``."""
    if file_is_certain(overlap):
        return FOR_CERTAIN
    where = overlap.get("if_directory")
    return f"only if `{_said(where)}` is a directory" if where else "not for certain"


def _said(value: Any) -> str:
    """Another agent's value as it may appear in a line."""
    return clean("?" if value is None else value, WORDS_MAX)


def conflict_lines(
    conflicts: Iterable[dict[str, Any]], prefix: str = "", limit: int | None = None
) -> list[str]:
    """Conflicts as lines for people and agents, each conflict in turn: the shared work
    area (``same work area 'api' as alice``), each overlapping file with its certainty
    (``src/a.py is claimed by alice for certain (their pattern src/**)``), then what the
    overlap's edits say (:func:`edit_lines`). ``limit``: at most that many, then one line
    saying how many were left out (:func:`capped`); ``prefix`` starts every line."""
    lines: list[str] = []
    for c in conflicts:
        agent = _said(c.get("agent_name", "?"))
        if c.get("overlapping_area"):
            lines.append(f"same work area {_said(c.get('declared_area'))!r} as {agent}")
        lines.extend(
            f"{_said(f.get('example'))} is claimed by {agent} {certainty(f)} "
            f"(their pattern {_said(f.get('their_pattern'))})"
            for f in c.get("overlapping_files") or []
        )
        lines.extend(edit_lines(c))
    shown = lines if limit is None else capped(lines, limit)
    return [prefix + line for line in shown]


def edit_lines(conflict: dict[str, Any]) -> Iterator[str]:
    """What the overlap's edits say (SPEC "Line-level claims"): ``src/a.py: alice's edits
    (lines 10-12) meet yours (11): a merge conflict ahead``, or that git merges them, or
    that only they have edited it."""
    agent = _said(conflict.get("agent_name", "?"))
    for f in conflict.get("edits") or []:
        theirs = ranges_text(f.get("ranges"))
        f = {**f, "path": _said(f.get("path"))}
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


def claim_labels(claims: Any) -> list[str]:
    """Range claims as people read them: ``src/auth.py#Login.check (lines 40-58)``."""
    out = []
    for c in claims or []:
        item = c if isinstance(c, dict) else dict(c)
        name = f"{item.get('path')}#{item['symbol']}" if item.get("symbol") else item.get("path")
        out.append(f"{name} (lines {ranges_text(item.get('ranges'))})")
    return out


def ranges_text(ranges: Any) -> str:
    """``10-12, after 40`` for base ranges ``[[10, 12], [41, 40]]`` (lists or tuples)."""
    parts = []
    for r in ranges or []:
        if isinstance(r, list | tuple) and len(r) == 2:
            s, e = r
            parts.append(f"after {s - 1}" if e < s else (str(s) if s == e else f"{s}-{e}"))
    return ", ".join(parts) or "?"
