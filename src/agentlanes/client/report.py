"""Conflicts as short lines for people (stdlib only: the hook and the guard use it)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any


def conflict_lines(conflicts: Iterable[dict[str, Any]]) -> Iterator[str]:
    """One line per (agent, their pattern, path): ``src/a.py  alice  src/**``."""
    for conflict in conflicts:
        agent = conflict.get("agent_name", "?")
        if conflict.get("overlapping_area"):
            yield f"same work area {conflict.get('declared_area')!r} as {agent}"
        for overlap in conflict.get("overlapping_files") or []:
            yield (
                f"{overlap.get('example')} is claimed by {agent} "
                f"(their pattern {overlap.get('their_pattern')})"
            )


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
