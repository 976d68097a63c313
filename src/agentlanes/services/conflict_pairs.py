"""The project's current conflicts as one list of pairs: what a dashboard draws.

Each overlapping pair of live sessions appears once, seen from the older session
(``a``; its patterns are ``pattern``, the newer one's ``their_pattern``). The pairs are
kept per project in the service context (``services/pair_index.py``), and only the
sessions whose claim changed since the last request are decided again: the live sessions
are read from the live projection, brought up to the last committed event on every
request (as presence is), so the answer never lags the sessions, and they are decided
against the projection's own conflict detector, the index the check-ins search.

Deciding is bounded as a check-in's search is (SPEC "One agent cannot hurt another"): in a
worker thread, by ``conflict_search_seconds`` of work, with at most ``answer_max_files``
overlaps per pair. The sessions not decided by then are ``pending``: the answer says how
many, and the next request goes on with them (one that ran out of time goes after the
others, so it never holds them back). The project's check-ins and news wait for the index
meanwhile, a slice at a time: a slice ends between two sessions once ``SLICE_SECONDS`` of
work have passed.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

import anyio.to_thread

from agentlanes.clock import utcnow
from agentlanes.domain import range_claims
from agentlanes.domain.conflicts import Conflict, ConflictDetector, FileOverlap, Scope, work_clock
from agentlanes.domain.edits import CLAIMS, grade_pair
from agentlanes.errors import InvalidInput
from agentlanes.services import line_claims
from agentlanes.services.context import ServiceContext
from agentlanes.services.pair_index import Pair, ProjectPairs
from agentlanes.services.projection import LiveSession
from agentlanes.services.sessions import live_sessions
from agentlanes.settings import LIMITS
from agentlanes.store.models import Project

DEFAULT_LIMIT = 1000
# The work of deciding done at a time while the project's check-ins wait for its index.
SLICE_SECONDS = 0.02
# Like an agent.conflict event: a pair names a few shared paths, and says how many there are.
FILES_PER_PAIR = 3


def _side(sc: Scope) -> dict[str, Any]:
    return {
        "session_id": sc.session_id,
        "agent_name": sc.agent_name,
        "declared_area": sc.declared_area,
    }


def _grade(
    pair: Pair, rows: dict[str, LiveSession], margin: int
) -> tuple[str, list[dict[str, Any]]]:
    """The pair's grade (SPEC "Line-level claims") and the files both edited (a few)."""
    a, b = rows.get(pair.a), rows.get(pair.b)
    mine = a.edits if a else {}
    theirs = b.edits if b else {}
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
    entry: ProjectPairs, pair: Pair, rows: dict[str, LiveSession], margin: int
) -> dict[str, Any]:
    a, b = entry.decided[pair.a], entry.decided[pair.b]
    grade, edited = _grade(pair, rows, margin)
    listed, certain = pair.files(), pair.certain
    claimed = _with_range_claims(pair, rows, margin, listed, grade)
    if claimed is not None:
        grade, certain, listed = (
            claimed.grade or grade,
            claimed.certain,
            [f._asdict() for f in claimed.overlapping_files],
        )
    # Certain overlaps first, so a short list still shows the ones that matter.
    files = sorted(listed, key=lambda f: not f["certain"])
    return {
        "a": _side(a),
        "b": _side(b),
        "overlapping_area": pair.overlapping_area,
        "declared_area": a.declared_area if pair.overlapping_area else None,
        "certain": certain,
        "overlapping_files": files[:FILES_PER_PAIR],
        "files_total": len(files),
        "files_truncated": pair.truncated,
        "grade": grade,
        "edits": edited,
    }


def _with_range_claims(
    pair: Pair, rows: dict[str, LiveSession], margin: int, files: list[dict[str, Any]], grade: str
) -> Conflict | None:
    """The pair graded with the range claims of either side (SPEC "Line-level claims"),
    as a check-in's conflict is (domain/range_claims.py); None when neither has any."""
    a, b = rows.get(pair.a), rows.get(pair.b)
    if a is None or b is None or not (a.claims or b.claims):
        return None
    seen = Conflict(
        session_id=b.id,
        agent_name=b.agent_name,
        declared_area=b.declared_area,
        overlapping_area=pair.overlapping_area,
        overlapping_files=tuple(
            FileOverlap(
                f["pattern"], f["their_pattern"], f["example"], f["certain"], f.get("if_directory")
            )
            for f in files
        ),
        certain=pair.certain,
        files_truncated=pair.truncated,
        grade=grade,
    )
    return range_claims.grade_claims(
        seen,
        range_claims.Side(a.edits, range_claims.by_path(a.claims)),
        range_claims.Side(b.edits, range_claims.by_path(b.claims)),
        i_claim=line_claims.claimer(list(a.declared_files or [])),
        margin=margin,
    )


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
    # The live projection, brought up to the last committed event (as presence is): the
    # sessions and the offset they reflect, with heartbeats not yet written through.
    current, live = await live_sessions(ctx, project.id, utcnow())
    offset = current.offset
    entry = ctx.conflict_pairs.for_project(project.id)
    files = ctx.settings.answer_max_files
    margin = project.line_margin
    async with entry.lock():
        ids = [s.id for s in live]
        left = ctx.settings.conflict_search_seconds
        # The budget is of work, and of time too: on a busy machine a slice's turn and
        # its thread hop cost more than its work, and the answer must come within 2 s
        # (SPEC); what is not decided by then is ``pending``, for the next request.
        until = time.monotonic() + left
        paused = True
        while paused and left > 0 and time.monotonic() < until:
            # Against the projection's index, which the project's check-ins search too,
            # a slice at a time: a long first decision makes them wait no longer than one.
            budget = min(left, until - time.monotonic())  # work is never more than time
            paused, spent = await current.in_thread(
                partial(_decide, entry, current.detector, ids, budget, files)
            )
            left -= spent
        # Grading (in a worker thread too) reads the pairs' edits, not the index.
        return await anyio.to_thread.run_sync(_answer, entry, live, offset, limit, margin)


def _decide(
    entry: ProjectPairs,
    detector: ConflictDetector,
    live: Sequence[str],
    budget: float,
    max_files: int,
) -> tuple[bool, float]:
    """One slice of deciding (``ProjectPairs.sync``): whether it paused with work left,
    and the work it took (seconds of this thread's CPU time)."""
    start = work_clock()
    paused = entry.sync(
        detector,
        live,
        deadline=start + budget,
        pause=start + min(SLICE_SECONDS, budget),
        max_files=max_files,
    )
    return paused, work_clock() - start


def _answer(
    entry: ProjectPairs, live: Sequence[LiveSession], offset: int, limit: int, margin: int = 0
) -> dict[str, Any]:
    order = entry.order
    # One pass over the pairs (each is kept under both its sessions): the unique ones,
    # and per agent how many others it overlaps.
    unique = []
    agents = []
    for sid, partners in entry.pairs.items():
        if not partners:
            continue
        certain = 0
        for p in partners.values():
            certain += p.certain
            if p.a == sid:
                unique.append(p)
        agents.append(
            {
                **_side(entry.decided[sid]),
                "partners": len(partners),
                "certain_partners": certain,
            }
        )
    # Only the first ``limit`` are shown: picked, not the whole list sorted (600 sessions
    # that all overlap are 179,700 pairs).
    shown = heapq.nsmallest(limit, unique, key=lambda p: (not p.certain, order[p.a], order[p.b]))
    agents.sort(key=lambda x: (-x["partners"], order[x["session_id"]]))
    rows = {s.id: s for s in live}
    return {
        "pairs": [_pair_view(entry, p, rows, margin) for p in shown],
        "total": len(unique),
        "truncated": len(unique) > limit,
        "agents": agents,
        "sessions": len(live),
        "pending": len(entry.pending),
        "offset": offset,
    }
