"""Conflicts as text and the one rule of certainty (client/report.py), which the editor
guard, the git hooks, the MCP tools and the CLI all use."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agentlanes.client.report import certainty, conflict_lines, is_certain
from agentlanes.domain.conflicts import ConflictDetector, Scope

SURE = {"pattern": "src/a.py", "their_pattern": "src/**", "example": "src/a.py", "certain": True}
MAYBE = {
    "pattern": "package.json/a.py",
    "their_pattern": "package.json",
    "example": "package.json/a.py",
    "certain": False,
    "if_directory": "package.json",
}
OLD = {"pattern": "src/a.py", "their_pattern": "src/**", "example": "src/a.py"}  # no field


def conflict(*files: dict[str, Any], area: bool = False, **more: Any) -> dict[str, Any]:
    return {
        "session_id": "s1",
        "agent_name": "alice",
        "declared_area": "api",
        "overlapping_area": area,
        "overlapping_files": list(files),
        **more,
    }


def test_a_conflict_is_certain_by_its_area_or_one_certain_file() -> None:
    assert is_certain(conflict(SURE))
    assert is_certain(conflict(MAYBE, SURE))
    assert is_certain(conflict(MAYBE, area=True))
    assert is_certain(conflict(area=True))
    assert not is_certain(conflict(MAYBE))
    assert not is_certain(conflict(MAYBE, MAYBE))
    assert not is_certain(conflict())


def test_a_missing_certain_field_counts_as_certain() -> None:
    """Servers before the field sent only overlaps they took as certain."""
    assert is_certain(conflict(OLD))
    assert is_certain(conflict(MAYBE, OLD))
    assert certainty(OLD) == "for certain"


def test_the_conflicts_own_certain_flag_does_not_overrule_its_overlaps() -> None:
    """The rule reads the overlaps the caller keeps (claimed_earlier drops some), not a
    flag the server computed over all of them."""
    assert not is_certain(conflict(MAYBE, certain=True))
    assert is_certain(conflict(SURE, certain=False))


def test_certainty_names_the_condition() -> None:
    assert certainty(SURE) == "for certain"
    assert certainty(MAYBE) == "only if `package.json` is a directory"
    assert certainty({**MAYBE, "if_directory": None}) == "not for certain"


def test_lines_give_the_area_each_file_and_the_edits_in_turn() -> None:
    edits = [{"path": "src/a.py", "edited_by": "them", "ranges": [[3, 4]]}]
    bob = {**conflict(MAYBE), "session_id": "s2", "agent_name": "bob"}
    assert conflict_lines([conflict(SURE, area=True, edits=edits), bob]) == [
        "same work area 'api' as alice",
        "src/a.py is claimed by alice for certain (their pattern src/**)",
        "src/a.py: alice has edited it (lines 3-4); you have not",
        "package.json/a.py is claimed by bob only if `package.json` is a directory "
        "(their pattern package.json)",
    ]


def test_lines_take_a_prefix_and_a_cap() -> None:
    many = conflict(*[{**SURE, "example": f"src/{n}.py"} for n in range(5)])
    assert conflict_lines([many], prefix="agentlanes: ", limit=3) == [
        "agentlanes: src/0.py is claimed by alice for certain (their pattern src/**)",
        "agentlanes: src/1.py is claimed by alice for certain (their pattern src/**)",
        "agentlanes: src/2.py is claimed by alice for certain (their pattern src/**)",
        "agentlanes: ... and 2 more",
    ]
    assert len(conflict_lines([many], limit=5)) == 5  # exactly at the cap: nothing cut
    assert conflict_lines([]) == []


PATTERNS = [
    "package.json",
    "Makefile",
    "package.json/",
    "src/**",
    "src/a.py",
    "**/*.py",
    "docs/*.md",
    "*/a.py",
    "src/*",
]


@given(
    theirs=st.lists(
        st.tuples(
            st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=3, unique=True),
            st.sampled_from([None, "x", "y"]),
        ),
        min_size=1,
        max_size=4,
    ),
    mine=st.lists(st.sampled_from(PATTERNS), max_size=3, unique=True),
    area=st.sampled_from([None, "x"]),
)
def test_the_rule_agrees_with_the_servers_detector(
    theirs: list[tuple[list[str], str | None]], mine: list[str], area: str | None
) -> None:
    """What the server calls certain (``Conflict.certain``, which block mode refuses on)
    the clients call certain from the conflict's wire shape, and nothing else."""
    detector = ConflictDetector(
        [
            Scope(session_id=f"s{n}", agent_name=f"a{n}", declared_area=a, patterns=tuple(p))
            for n, (p, a) in enumerate(theirs)
        ]
    )
    for c in detector.find(declared_area=area, patterns=mine):
        wire = {
            "agent_name": c.agent_name,
            "declared_area": c.declared_area,
            "overlapping_area": c.overlapping_area,
            "overlapping_files": [f._asdict() for f in c.overlapping_files],
        }
        assert is_certain(wire) is c.certain
