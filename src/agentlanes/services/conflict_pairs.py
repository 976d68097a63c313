"""The project's current conflicts as one list of pairs: what a dashboard draws.

Each overlapping pair of live sessions appears once, seen from the older session
(``a``; its patterns are ``pattern``, the newer one's ``their_pattern``). The pairs are
kept per project and process, and only the sessions whose claim changed since the last
request are decided again: the live sessions are still read from the database on every
request (the truth every process shares), so the answer never lags the sessions.

Deciding is bounded as a check-in's search is (SPEC "One agent cannot hurt another"): in a
worker thread, by ``conflict_search_seconds`` from the request's start, with at most
``answer_max_files`` overlaps per pair. The sessions not decided by then are ``pending``:
the answer says how many, and the next request goes on with them (one that ran out of time
goes after the others, so it never holds them back).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from agentlanes.clock import utcnow
from agentlanes.domain.conflicts import (
    Conflict,
    ConflictDetector,
    Scope,
    SearchTooLong,
    work_clock,
)
from agentlanes.domain.edits import CLAIMS, grade_pair
from agentlanes.errors import InvalidInput
from agentlanes.services import line_claims
from agentlanes.services.context import ServiceContext
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.models import AgentSession, Project

DEFAULT_LIMIT = 1000
# Like an agent.conflict event: a pair names a few shared paths, and says how many there are.
FILES_PER_PAIR = 3


def _scope(s: AgentSession) -> Scope:
    return Scope(s.id, s.agent_name, s.declared_area, tuple(s.declared_files or ()))


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
class _Pair:
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
class _ProjectPairs:
    detector: ConflictDetector = field(default_factory=ConflictDetector)
    # The decided sessions (those in the detector's index).
    scopes: dict[str, Scope] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)
    # session id -> {partner id -> the pair}; each pair is held under both ids.
    pairs: dict[str, dict[str, _Pair]] = field(default_factory=dict)
    # Live sessions not decided yet (the last sync ran out of time), and those whose own
    # search ran out of time once (decided after the others).
    pending: list[str] = field(default_factory=list)
    slow: set[str] = field(default_factory=set)
    # One sync (in a worker thread) and one answer at a time per project (a lock of the
    # running loop: the kept pairs outlive an app in tests).
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
        live: Sequence[AgentSession],
        *,
        deadline: float | None = None,
        max_files: int | None = None,
    ) -> None:
        """Decide the sessions whose claim changed; those left when ``deadline``
        (``work_clock()``: this thread's CPU time) passes stay ``pending``."""
        current = {s.id: _scope(s) for s in live}
        self.order = {sid: i for i, sid in enumerate(current)}
        gone = self.scopes.keys() - current.keys()
        changed = [sid for sid, sc in current.items() if self.scopes.get(sid) != sc]
        for sid in gone:
            self.detector.remove(sid)
            self.drop(sid)
            del self.scopes[sid]
        for sid in changed:
            if self.scopes.pop(sid, None) is not None:
                self.detector.remove(sid)
                self.drop(sid)
        self.slow &= current.keys()
        changed.sort(key=self.slow.__contains__)  # stable: the slow ones last
        # Each changed session is decided against the index *before* it joins it, so a
        # pair of two changed sessions is decided once, by the later one (a fresh start
        # decides n(n-1)/2 pairs, not n(n-1)).
        self.pending = []
        for k, sid in enumerate(changed):
            sc = current[sid]
            if deadline is not None and work_clock() > deadline:
                self.pending = changed[k:]
                return
            try:
                found = self.detector.find(
                    declared_area=sc.declared_area,
                    patterns=sc.patterns,
                    deadline=deadline,
                    max_files=max_files,
                )
            except SearchTooLong:
                self.slow.add(sid)
                self.pending = changed[k:]
                return
            for c in found:
                self._add(sid, c)
            self.detector.add(sc)
            self.scopes[sid] = sc
            self.slow.discard(sid)

    def _add(self, sid: str, c: Conflict) -> None:
        # Seen from the older session, whichever side was decided.
        older_is_me = self.order[sid] < self.order.get(c.session_id, len(self.order))
        a, b = (sid, c.session_id) if older_is_me else (c.session_id, sid)
        files = c.overlapping_files
        certain = c.overlapping_area or any(getattr(f, "certain", True) for f in files)
        truncated = bool(getattr(c, "files_truncated", False))
        pair = _Pair(a, b, c.overlapping_area, files, not older_is_me, certain, truncated)
        self.pairs.setdefault(a, {})[b] = pair
        self.pairs.setdefault(b, {})[a] = pair


class ConflictPairs:
    """Per-process pair lists of the projects asked about most recently."""

    def __init__(self, max_projects: int = LIMITS.conflict_pairs_projects_kept) -> None:
        self.max_projects = max_projects
        self._projects: dict[int, _ProjectPairs] = {}

    def for_project(self, project_id: int) -> _ProjectPairs:
        """The project's entry (sync it under its lock)."""
        entry = self._projects.pop(project_id, None) or _ProjectPairs()
        self._projects[project_id] = entry  # most recently used last
        while len(self._projects) > self.max_projects:
            del self._projects[next(iter(self._projects))]
        return entry


_PAIRS = ConflictPairs()


def forget_project(project_id: int) -> None:
    """Drop the pair lists of a deleted project."""
    _PAIRS._projects.pop(project_id, None)


def _side(sc: Scope) -> dict[str, Any]:
    return {
        "session_id": sc.session_id,
        "agent_name": sc.agent_name,
        "declared_area": sc.declared_area,
    }


def _grade(
    pair: _Pair, rows: dict[str, AgentSession], margin: int
) -> tuple[str, list[dict[str, Any]]]:
    """The pair's grade (SPEC "Line-level claims") and the files both edited (a few)."""
    a, b = rows.get(pair.a), rows.get(pair.b)
    mine = line_claims.of_stored(a.edits if a else None)
    theirs = line_claims.of_stored(b.edits if b else None)
    if not (mine and theirs):
        return CLAIMS, []
    g = grade_pair(
        mine,
        theirs,
        i_claim=line_claims.claimer(list(a.declared_files or []) if a else []),
        margin=margin,
    )
    both = [{"path": f["path"], "grade": f["grade"]} for f in g.files if "grade" in f]
    return g.grade, both[:FILES_PER_PAIR]


def _pair_view(
    entry: _ProjectPairs, pair: _Pair, rows: dict[str, AgentSession], margin: int
) -> dict[str, Any]:
    a, b = entry.scopes[pair.a], entry.scopes[pair.b]
    grade, edited = _grade(pair, rows, margin)
    # Certain overlaps first, so a short list still shows the ones that matter.
    files = sorted(pair.files(), key=lambda f: not f["certain"])
    return {
        "a": _side(a),
        "b": _side(b),
        "overlapping_area": pair.overlapping_area,
        "declared_area": a.declared_area if pair.overlapping_area else None,
        "certain": pair.certain,
        "overlapping_files": files[:FILES_PER_PAIR],
        "files_total": len(files),
        "files_truncated": pair.truncated,
        "grade": grade,
        "edits": edited,
    }


async def current_conflicts(
    ctx: ServiceContext, project: Project, *, limit: int | None = None
) -> dict[str, Any]:
    """Every overlapping pair of the project's live sessions, certain ones first, then by
    the older session's start; per agent, how many others it overlaps."""
    if limit is None:
        limit = DEFAULT_LIMIT
    if not 1 <= limit <= LIMITS.conflict_pairs_limit:
        raise InvalidInput("limit", f"must be 1-{LIMITS.conflict_pairs_limit}")
    assert project.id is not None
    budget = ctx.settings.conflict_search_seconds
    async with ctx.db.read() as db:
        # Offset first: an event committed between the two reads is then newer than the
        # offset, and a client that refreshes on events asks again.
        offset = await queries.last_offset(db, project.id)
        live = await queries.live_sessions(db, project.id, utcnow())
    entry = _PAIRS.for_project(project.id)
    files = ctx.settings.answer_max_files
    margin = project.line_margin
    async with entry.lock():
        # Deciding and grading both in a worker thread (grading reads the pairs' edits).
        return await anyio.to_thread.run_sync(
            lambda: (
                entry.sync(live, deadline=work_clock() + budget, max_files=files),
                _answer(entry, live, offset, limit, margin),
            )[1]
        )


def _answer(
    entry: _ProjectPairs, live: Sequence[AgentSession], offset: int, limit: int, margin: int = 0
) -> dict[str, Any]:
    order = entry.order
    unique = [p for sid, partners in entry.pairs.items() for q, p in partners.items() if p.a == sid]
    unique.sort(key=lambda p: (not p.certain, order[p.a], order[p.b]))
    agents = []
    for sid, partners in entry.pairs.items():
        if not partners:
            continue
        certain = sum(1 for p in partners.values() if p.certain)
        agents.append(
            {
                **_side(entry.scopes[sid]),
                "partners": len(partners),
                "certain_partners": certain,
            }
        )
    agents.sort(key=lambda x: (-x["partners"], order[x["session_id"]]))
    rows = {s.id: s for s in live}
    return {
        "pairs": [_pair_view(entry, p, rows, margin) for p in unique[:limit]],
        "total": len(unique),
        "truncated": len(unique) > limit,
        "agents": agents,
        "sessions": len(live),
        "pending": len(entry.pending),
        "offset": offset,
    }
