"""The pair lists a process keeps per project for ``services/conflict_pairs.py``: the
overlapping pairs of the decided sessions and the scope each was decided with, so that a
request decides again only the sessions whose claim changed. The deciding reads the live
projection's conflict detector (in ``LiveProject.in_thread``): no second index of the
project's patterns. Held by the service context."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cachetools import LRUCache

from agentlanes.domain.conflicts import (
    Conflict,
    ConflictDetector,
    Scope,
    SearchTooLong,
    work_clock,
)
from agentlanes.settings import LIMITS


def _file_view(f: Any, *, swap: bool) -> dict[str, Any]:
    view = dict(f._asdict())
    if swap:
        view["pattern"], view["their_pattern"] = view["their_pattern"], view["pattern"]
    # Older detectors report no certainty: every overlap they find is certain.
    view.setdefault("certain", True)
    if view.get("if_directory") is None:
        view.pop("if_directory", None)
    return view


@dataclass
class Pair:
    a: str  # the older session
    b: str
    overlapping_area: bool
    # As the detector answered, from the side that asked: swapped when that was ``b``.
    # Wire dicts are made only for the pairs an answer lists.
    overlaps: tuple[Any, ...]
    swapped: bool
    certain: bool
    # The detector was asked for at most answer_max_files overlaps, and there were more.
    truncated: bool = False

    def files(self) -> list[dict[str, Any]]:
        return [_file_view(f, swap=self.swapped) for f in self.overlaps]


@dataclass
class ProjectPairs:
    # The decided sessions, each with the scope it was decided with: one whose scope is
    # no longer this is decided again.
    decided: dict[str, Scope] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)
    # session id -> {partner id -> the pair}; each pair is held under both ids.
    pairs: dict[str, dict[str, Pair]] = field(default_factory=dict)
    # Live sessions not decided yet (the last sync ran out of time), and those whose own
    # search ran out of time once (decided after the others).
    pending: list[str] = field(default_factory=list)
    slow: set[str] = field(default_factory=set)
    # One sync (in a worker thread) and one answer at a time per project (a lock of the
    # running loop, made on first use: the context is built before the loop runs).
    _lock: tuple[Any, asyncio.Lock] | None = None

    def lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]

    def drop(self, sid: str) -> None:
        for partner in self.pairs.pop(sid, {}):
            self.pairs.get(partner, {}).pop(sid, None)

    def sync(
        self,
        detector: ConflictDetector,
        live: Sequence[str],
        *,
        deadline: float | None = None,
        pause: float | None = None,
        max_files: int | None = None,
    ) -> bool:
        """Decide the live sessions (ids, oldest first) whose claim changed, against
        ``detector``, the live projection's index, with each session's scope as the
        index holds it (a session it no longer holds has ended: left out). The index holds
        every session not ended: its answers are kept for the decided ones alone. Those
        left when ``deadline`` (``work_clock()``: this thread's CPU time) passes stay
        ``pending``; so do those left when ``pause`` passes between two sessions (one at
        least is decided), and then the answer is True: call again to go on."""
        held = map(detector.scope_of, live)
        current = {sc.session_id: sc for sc in held if sc is not None}
        self.order = {sid: i for i, sid in enumerate(current)}
        decided = self.decided
        for sid in decided.keys() - current.keys():
            self.drop(sid)
            del decided[sid]
        changed = [sid for sid, sc in current.items() if decided.get(sid) != sc]
        for sid in changed:
            if decided.pop(sid, None) is not None:
                self.drop(sid)
        self.slow &= current.keys()
        changed.sort(key=self.slow.__contains__)  # stable: the slow ones last
        # Each changed session keeps the pairs with the sessions decided before it, so a
        # pair of two changed sessions is kept once, by the later one.
        self.pending = []
        for k, sid in enumerate(changed):
            sc = current[sid]
            now = work_clock()
            if deadline is not None and now > deadline:
                self.pending = changed[k:]
                return False
            if pause is not None and k and now > pause:  # one at least per call
                self.pending = changed[k:]
                return True
            try:
                found = detector.find(
                    declared_area=sc.declared_area,
                    patterns=sc.patterns,
                    exclude_session_id=sid,
                    deadline=deadline,
                    max_files=max_files,
                )
            except SearchTooLong:
                self.slow.add(sid)
                self.pending = changed[k:]
                return False
            for c in found:
                if c.session_id in decided:
                    self._add(sid, c)
            decided[sid] = sc
            self.slow.discard(sid)
        return False

    def _add(self, sid: str, c: Conflict) -> None:
        # Seen from the older session, whichever side was decided.
        older_is_me = self.order[sid] < self.order.get(c.session_id, len(self.order))
        a, b = (sid, c.session_id) if older_is_me else (c.session_id, sid)
        files = c.overlapping_files
        certain = c.overlapping_area or any(getattr(f, "certain", True) for f in files)
        truncated = bool(getattr(c, "files_truncated", False))
        pair = Pair(a, b, c.overlapping_area, files, not older_is_me, certain, truncated)
        self.pairs.setdefault(a, {})[b] = pair
        self.pairs.setdefault(b, {})[a] = pair


class ConflictPairs:
    """The pair lists of the projects asked about most recently (one per service
    context: two apps in one process keep their own)."""

    def __init__(self, max_projects: int = LIMITS.conflict_pairs_projects_kept) -> None:
        self.max_projects = max_projects
        self._projects: LRUCache[int, ProjectPairs] = LRUCache(maxsize=max_projects)

    def for_project(self, project_id: int) -> ProjectPairs:
        """The project's entry (sync it under its lock)."""
        entry = self._projects.get(project_id)
        if entry is None:
            entry = self._projects[project_id] = ProjectPairs()
        return entry

    def held(self, project_id: int) -> bool:
        """Whether pair lists of the project are kept here."""
        return project_id in self._projects

    def forget_project(self, project_id: int) -> None:
        """Drop the pair lists of a deleted project."""
        self._projects.pop(project_id, None)
