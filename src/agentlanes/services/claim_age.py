"""The older claim stands (SPEC: The agents' side): in ``block`` mode a change is refused
only because of a session that claimed the path *earlier*.

Each session keeps when each of its patterns joined its claims (``claimed_at``: the
check-in, or the status change that added it; ``LiveSession.since``). A claim gained by an
edit made under ``warn`` is younger than the claim it overlapped, so after the switch to
``block`` it never locks the earlier claimant out; the later one is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from agentlanes.clock import iso
from agentlanes.services.projection import LiveSession


def claim_times(
    before: Mapping[str, str] | None,
    had: list[str],
    patterns: list[str],
    started: datetime,
    now: datetime,
) -> dict[str, str]:
    """``{pattern: ISO time}`` for a session's new pattern list: a pattern it had keeps its
    time (from ``started`` when none was kept), a new one joins ``now``."""
    kept = before or {}
    return {p: str((kept.get(p) or iso(started)) if p in had else iso(now)) for p in patterns}


def earlier_claims(
    conflicts: list[dict[str, Any]],
    sessions: Mapping[str, LiveSession],
    my_since: Callable[[str], datetime],
    my_area_since: datetime,
) -> list[dict[str, Any]]:
    """The conflicts ``block`` mode refuses on: certain ones in which the other session
    claimed first (their pattern before mine; for a shared area, they started first)."""
    refusing = []
    for c in conflicts:
        theirs = sessions.get(c["session_id"])
        if theirs is None:  # not in the projection: count it, as before this rule
            if c["certain"]:
                refusing.append(c)
            continue
        if c.get("overlapping_area") and theirs.started_at < my_area_since:
            refusing.append(c)
            continue
        if any(
            f.get("certain", True) and theirs.since(f["their_pattern"]) < my_since(f["pattern"])
            for f in c.get("overlapping_files") or []
        ):
            refusing.append(c)
    return refusing


def with_claim_times(
    conflicts: list[dict[str, Any]], sessions: Mapping[str, LiveSession]
) -> list[dict[str, Any]]:
    """Each overlapping file with ``claimed_at``: when their pattern joined their claims,
    so a client deciding on an edit (the guard, the git hook) can let the older claim
    stand too."""
    for c in conflicts:
        theirs = sessions.get(c["session_id"])
        if theirs is None:
            continue
        for f in c.get("overlapping_files") or []:
            f["claimed_at"] = iso(theirs.since(f["their_pattern"]))
    return conflicts
