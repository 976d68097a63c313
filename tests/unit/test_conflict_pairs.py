"""The project's pair list, kept incrementally, always equals deciding every pair afresh."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from agentlanes.domain.conflicts import ConflictDetector, Scope
from agentlanes.services.pair_index import ProjectPairs

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


def _session(sid: str, rng: random.Random) -> Any:
    return SimpleNamespace(
        id=sid,
        agent_name=f"agent-{sid}",
        declared_area=rng.choice(AREAS),
        declared_files=rng.sample(PATTERNS, rng.randint(0, 3)),
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
    live: list[Any] = []
    next_id = 0
    for _step in range(300):
        roll = rng.random()
        if roll < 0.4 or len(live) < 3:
            live.append(_session(f"s{next_id:03d}", rng))  # a check-in: the newest
            next_id += 1
        elif roll < 0.75:
            i = rng.randrange(len(live))  # a scope change keeps the session's place
            changed = _session(live[i].id, rng)
            live[i] = changed
        else:
            live.pop(rng.randrange(len(live)))  # a checkout or timeout
        entry.sync(live)
        assert _kept_pairs(entry) == _fresh_pairs(live)
        # Each pair is held under both of its sessions, and nowhere else.
        for sid, partners in entry.pairs.items():
            for partner, pair in partners.items():
                assert entry.pairs[partner][sid] is pair
                assert {pair.a, pair.b} == {sid, partner}
