"""The project's pair list, kept incrementally against the live projection's index (which
also holds sessions past their TTL, and no longer those that ended), always equals
deciding every pair afresh."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

from agentlanes.domain.conflicts import ConflictDetector, Scope
from agentlanes.services.pair_index import ProjectPairs
from agentlanes.services.projection import LiveSession

PATTERNS = [
    "**/*.py",
    "src/**",
    "src/api/**",
    "src/api/models.py",
    "docs/*.md",
    "web/**/*.tsx",
    "package.json",
    "src/{api,web}/*.py",
    "tests/test_*.py",
    "lib/",
]
AREAS = [None, None, "api", "web"]


def _session(sid: str, rng: random.Random) -> LiveSession:
    now = datetime.now(UTC)
    return LiveSession(
        id=sid,
        agent_name=f"agent-{sid}",
        declared_area=rng.choice(AREAS),
        declared_files=rng.sample(PATTERNS, rng.randint(0, 3)),
        status_text=None,
        meta={},
        started_at=now,
        last_heartbeat_at=now,
        expires_at=now,
    )


def _fresh_pairs(live: list[Any]) -> dict[tuple[str, str], set[tuple[str, ...]]]:
    """Every pair decided from scratch, seen from the older session."""
    order = {s.id: i for i, s in enumerate(live)}
    detector = ConflictDetector(
        Scope(s.id, s.agent_name, s.declared_area, tuple(s.declared_files)) for s in live
    )
    pairs: dict[tuple[str, str], set[tuple[str, ...]]] = {}
    for s in live:
        for c in detector.find(
            declared_area=s.declared_area, patterns=s.declared_files, exclude_session_id=s.id
        ):
            if order[s.id] < order[c.session_id]:
                files = {(f.pattern, f.their_pattern) for f in c.overlapping_files}
                pairs[(s.id, c.session_id)] = files | (
                    {("area",) * 2} if c.overlapping_area else set()
                )
    return pairs


def _kept_pairs(entry: ProjectPairs) -> dict[tuple[str, str], set[tuple[str, ...]]]:
    out: dict[tuple[str, str], set[tuple[str, ...]]] = {}
    for sid, partners in entry.pairs.items():
        for pair in partners.values():
            if pair.a == sid:
                views = pair.files()
                # The example may differ with the side that asked; there always is one.
                assert all(f["example"] for f in views)
                assert pair.certain is (pair.overlapping_area or any(f["certain"] for f in views))
                files = {(f["pattern"], f["their_pattern"]) for f in views}
                out[(pair.a, pair.b)] = files | (
                    {("area",) * 2} if pair.overlapping_area else set()
                )
    return out


def test_incremental_pairs_equal_a_fresh_decision_after_every_change() -> None:
    rng = random.Random(17)
    entry = ProjectPairs()
    # The projection's index: every session not ended, live or past its TTL.
    index = ConflictDetector()
    live: list[Any] = []
    overdue: list[Any] = []
    next_id = 0
    for _step in range(300):
        roll = rng.random()
        if roll < 0.4 or len(live) < 3:
            live.append(_session(f"s{next_id:03d}", rng))  # a check-in: the newest
            index.add(live[-1].scope())
            next_id += 1
        elif roll < 0.7:
            i = rng.randrange(len(live))  # a scope change keeps the session's place
            changed = _session(live[i].id, rng)
            live[i] = changed
            index.add(changed.scope())
        elif roll < 0.85:
            gone = live.pop(rng.randrange(len(live)))  # a checkout or timeout
            index.remove(gone.id)
        elif roll < 0.95:
            overdue.append(live.pop(rng.randrange(len(live))))  # past its TTL, not ended
        elif overdue:
            index.remove(overdue.pop(0).id)  # its timeout
        # A session read as live that has ended since (its index entry gone) is left out.
        entry.sync(index, [s.id for s in live] + ["ended"])
        assert _kept_pairs(entry) == _fresh_pairs(live)
        assert "ended" not in entry.order
        # Each pair is held under both of its sessions, and nowhere else.
        for sid, partners in entry.pairs.items():
            for partner, pair in partners.items():
                assert entry.pairs[partner][sid] is pair
                assert {pair.a, pair.b} == {sid, partner}


def test_a_sync_paused_between_sessions_goes_on_where_it_stopped() -> None:
    rng = random.Random(29)
    live = [_session(f"s{i:03d}", rng) for i in range(40)]
    index = ConflictDetector(s.scope() for s in live)
    entry = ProjectPairs()
    # A pause already passed: one session is decided per call (never none), none is
    # counted slow, and the last call says there is nothing left.
    paused = [entry.sync(index, [s.id for s in live], pause=-1.0) for _ in live]
    assert paused == [True] * (len(live) - 1) + [False]
    assert entry.pending == [] and not entry.slow
    assert _kept_pairs(entry) == _fresh_pairs(live)
