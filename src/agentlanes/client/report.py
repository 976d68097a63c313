"""Long reports cut short for people (stdlib only: the git hook uses it)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


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
