"""Range claims graded by lines (``domain/range_claims.py``): which file overlaps stop
being certain, the grade, and the cases that stay on the cautious side."""

from __future__ import annotations

from agentlanes.domain.conflicts import Conflict, FileOverlap
from agentlanes.domain.edits import FILE, LINES, FileEdit
from agentlanes.domain.range_claims import RangeClaim, Side, by_path, grade_claims

B = "b" * 40


def conflict(*files: tuple[str, str, str], truncated: bool = False) -> Conflict:
    overlaps = tuple(FileOverlap(p, t, e, True, None) for p, t, e in files)
    return Conflict("s2", "bob", None, False, overlaps, True, truncated, "claims")


def side(claims: dict[str, list[tuple[int, int]]] | None = None, **edits: FileEdit) -> Side:
    held = {p: FileEdit(B, tuple(r)) for p, r in (claims or {}).items()}
    return Side({k.replace("_", "."): v for k, v in edits.items()}, held)


def never(_: str) -> bool:
    return False


def test_apart_claims_of_one_file_are_not_certain_and_graded_file() -> None:
    c = grade_claims(
        conflict(("a.py", "a.py", "a.py")),
        side({"a.py": [(10, 20)]}),
        side({"a.py": [(30, 40)]}),
        i_claim=never,
    )
    assert (c.grade, c.certain) == (FILE, False)
    assert [f.certain for f in c.overlapping_files] == [False]
    assert c.claims == (
        {"path": "a.py", "grade": FILE, "ranges": [[30, 40]], "my_ranges": [[10, 20]]},
    )


def test_touching_claims_meet_and_stay_certain() -> None:
    c = grade_claims(
        conflict(("a.py", "a.py", "a.py")),
        side({"a.py": [(10, 20)]}),
        side({"a.py": [(21, 25)]}),
        i_claim=never,
    )
    assert (c.grade, c.certain) == (LINES, True)
    # A margin widens it too: one unchanged line between meets at margin 1.
    c = grade_claims(
        conflict(("a.py", "a.py", "a.py")),
        side({"a.py": [(10, 20)]}),
        side({"a.py": [(22, 25)]}),
        i_claim=never,
        margin=1,
    )
    assert c.grade == LINES and c.certain


def test_a_claim_meets_edits_and_on_another_base_is_cautious() -> None:
    edit = FileEdit(B, ((31, 31),))
    c = grade_claims(
        conflict(("a.py", "a.py", "a.py")),
        side({"a.py": [(10, 20)]}),
        side(a_py=edit),
        i_claim=never,
    )
    assert (c.grade, c.certain) == (FILE, False)
    other_base = FileEdit("c" * 40, ((31, 31),))
    c = grade_claims(
        conflict(("a.py", "a.py", "a.py")),
        side({"a.py": [(10, 20)]}),
        side(a_py=other_base),
        i_claim=never,
    )
    assert (c.grade, c.certain) == (LINES, True)


def test_a_whole_file_claim_meets_every_range_either_way() -> None:
    # Mine: the glob src/** (no lines of a.py); theirs: lines of it.
    c = grade_claims(
        conflict(("src/**", "src/a.py", "src/a.py")),
        side(),
        side({"src/a.py": [(30, 40)]}),
        i_claim=lambda p: p.startswith("src/"),
    )
    assert (c.grade, c.certain) == (LINES, True)
    # Mine: lines of a.py; theirs: the glob.
    c = grade_claims(
        conflict(("src/a.py", "src/*.py", "src/a.py")),
        side({"src/a.py": [(30, 40)]}),
        side(),
        i_claim=never,
    )
    assert (c.grade, c.certain) == (LINES, True)


def test_an_overlap_of_two_globs_is_never_decided_by_the_lines_of_one_file() -> None:
    """src/*.py against src/** share many files: the lines of src/a.py say nothing about
    the others, so that overlap stays certain."""
    c = grade_claims(
        conflict(("src/*.py", "src/**", "src/a.py")),
        side({"src/a.py": [(10, 20)]}),
        side({"src/a.py": [(30, 40)]}),
        i_claim=never,
    )
    assert c.certain and [f.certain for f in c.overlapping_files] == [True]
    assert c.grade == FILE  # the claimed file itself is apart


def test_overlaps_not_seen_keep_the_conflict_as_certain_as_found() -> None:
    c = grade_claims(
        conflict(("a.py", "a.py", "a.py"), truncated=True),
        side({"a.py": [(10, 20)]}),
        side({"a.py": [(30, 40)]}),
        i_claim=never,
    )
    assert c.certain


def test_by_path_joins_the_claims_of_one_file() -> None:
    claims = [
        RangeClaim("a.py", B, ((30, 40),), "g"),
        RangeClaim("a.py", B, ((10, 20),), "f"),
        RangeClaim("a.py", B, ((15, 32),), "h"),
        RangeClaim("b.py", None, ((1, 0),)),
    ]
    assert by_path(claims) == {
        "a.py": FileEdit(B, ((10, 40),)),
        "b.py": FileEdit(None, ((1, 0),)),
    }
