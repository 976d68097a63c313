"""Property tests: line grading (``domain/edits``) against brute force and real git.

The oracles share no code with the module:
* a *slot* model over line numbers: the base file's lines and the gaps around them are
  positions 0..2n (gap after line k = 2k, line k = 2k-1); a change replacing lines
  ``[s, e]`` covers the gap before ``s``, its lines and the gap after ``e``; an insertion
  after line ``a`` covers the gap ``2a``. Two changes conflict when they share a position,
  i.e. they share a line or touch with no unchanged line between them; with a margin
  ``m`` also when at most ``m`` unchanged lines lie between them (fewer than ``m + 1``);
* git's own decision, ``xdl_do_merge`` in xdiff/xmerge.c: a change ``(i1, chg1)`` (0-based
  first base line, base lines replaced) is taken alone when ``i1 + chg1 < i2`` of the
  other side's next change (or the other way round); any other pair of (non-identical)
  changes is a conflict. Its sweep is written out below as git walks it;
* ``git diff -U0`` of hypothesis-generated edits, for the parser.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlanes.domain.edits import (
    CLAIMS,
    FILE,
    GIT_DIFF_ARGS,
    LINES,
    FileEdit,
    Range,
    blocks_on_lines,
    grade_file,
    grade_pair,
    hull,
    meet,
    parse_unified_zero,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROPERTIES = settings(max_examples=400, deadline=None)
WITH_GIT = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# --------------------------------------------------------------------------
# Valid hunk sets, as git diff -U0 prints them


@st.composite
def hunk_sets(draw: st.DrawFn, lines: int, max_hunks: int = 6) -> list[Range]:
    """Sorted base ranges of one side's hunks on a file of ``lines`` lines: replacements
    ``[s, e]`` and insertions ``[a+1, a]``, at least one unchanged line between two of
    them (closer changes are one hunk)."""
    ranges: list[Range] = []
    done = 0  # base lines 1..done lie before the next hunk's earliest place
    while len(ranges) < max_hunks:
        least = 1 if ranges else 0  # unchanged lines before this hunk
        if done + least > lines or not draw(st.booleans()):
            break
        skip = draw(st.integers(least, lines - done))
        after = done + skip
        room = lines - after
        length = draw(st.integers(0, min(room, 5))) if room else 0
        ranges.append((after + 1, after + length))
        done = after + length
    return ranges


@st.composite
def range_pairs(draw: st.DrawFn) -> tuple[int, list[Range], list[Range]]:
    lines = draw(st.integers(0, 30))
    return lines, draw(hunk_sets(lines)), draw(hunk_sets(lines))


def slots(change: Range) -> set[int]:
    start, end = change
    return set(range(2 * (start - 1), 2 * end + 1))


def unchanged_between(x: Range, y: Range, lines: int) -> int:
    """How many base lines lie strictly between two changes that share no position."""
    a, b = sorted((slots(x), slots(y)), key=min)
    return sum(1 for k in range(1, lines + 1) if max(a) < 2 * k - 1 < min(b))


def brute_meet(mine: list[Range], theirs: list[Range], lines: int, margin: int = 0) -> bool:
    return any(
        slots(x) & slots(y) or unchanged_between(x, y, lines) <= margin
        for x in mine
        for y in theirs
    )


def xdl_conflicts(mine: list[Range], theirs: list[Range]) -> bool:
    """Whether git's ``xdl_do_merge`` walk finds a conflict between two scripts of
    changes that are not identical (new lines unique to each side)."""
    one = [(s - 1, e - s + 1) for s, e in mine]
    two = [(s - 1, e - s + 1) for s, e in theirs]
    i = j = 0
    while i < len(one) and j < len(two):
        (i1, chg1), (i2, chg2) = one[i], two[j]
        if i1 + chg1 < i2:
            i += 1
        elif i2 + chg2 < i1:
            j += 1
        else:
            return True
    return False


# --------------------------------------------------------------------------
# meet


@PROPERTIES
@given(range_pairs(), st.integers(0, 4))
def test_meet_is_the_brute_force_over_line_slots(
    case: tuple[int, list[Range], list[Range]], margin: int
) -> None:
    lines, mine, theirs = case
    assert meet(mine, theirs, margin) == brute_meet(mine, theirs, lines, margin)


@PROPERTIES
@given(range_pairs())
def test_meet_is_gits_merge_decision(case: tuple[int, list[Range], list[Range]]) -> None:
    _, mine, theirs = case
    assert meet(mine, theirs) == xdl_conflicts(mine, theirs)


@PROPERTIES
@given(range_pairs())
def test_one_change_each_slots_and_xdl_rule_agree(
    case: tuple[int, list[Range], list[Range]],
) -> None:
    """The slot model is git's rule ``i1 + chg1 < i2`` (either way round) for one change a
    side, so the brute force above stands for git's rule."""
    lines, mine, theirs = case
    for x in mine:
        for y in theirs:
            (i1, chg1), (i2, chg2) = (x[0] - 1, x[1] - x[0] + 1), (y[0] - 1, y[1] - y[0] + 1)
            apart = i1 + chg1 < i2 or i2 + chg2 < i1
            assert bool(slots(x) & slots(y)) == (not apart)
            if apart:
                assert unchanged_between(x, y, lines) >= 1


@PROPERTIES
@given(range_pairs(), st.integers(0, 4))
def test_meet_is_symmetric_and_grows_with_the_margin(
    case: tuple[int, list[Range], list[Range]], margin: int
) -> None:
    _, mine, theirs = case
    assert meet(mine, theirs, margin) == meet(theirs, mine, margin)
    if meet(mine, theirs, margin):
        assert meet(mine, theirs, margin + 1)


@PROPERTIES
@given(
    st.integers(1, 40),
    st.integers(-1, 6),
    st.integers(0, 8),
    st.integers(-1, 6),
    st.integers(0, 5),
    st.booleans(),
)
def test_margin_m_meets_when_fewer_than_m_plus_one_unchanged_lines_lie_between(
    start: int, length: int, between: int, other_length: int, margin: int, flip: bool
) -> None:
    """Two changes with exactly ``between`` unchanged lines between them (lengths -1 and 0
    stand for an insertion)."""
    first = (start, start + max(length, 0) - 1)
    second_start = first[1] + between + 1
    second = (second_start, second_start + max(other_length, 0) - 1)
    mine, theirs = ([first], [second]) if not flip else ([second], [first])
    assert meet(mine, theirs, margin) == (between < margin + 1)


def test_meet_examples_at_the_boundary() -> None:
    assert meet([(5, 5)], [(6, 6)])  # adjacent lines replaced
    assert not meet([(5, 5)], [(7, 7)])  # line 6 between
    assert meet([(5, 5)], [(7, 7)], margin=1)
    assert meet([(6, 5)], [(5, 5)])  # inserted right after a replaced line
    assert meet([(5, 4)], [(5, 5)])  # ... right before it
    assert not meet([(4, 3)], [(5, 5)])  # line 4 between
    assert meet([(3, 2)], [(3, 2)])  # two insertions at one place
    assert meet([(1, 0)], [(1, 1)])  # at the top of the file
    assert not meet([], [(1, 1)])


@PROPERTIES
@given(range_pairs(), st.integers(0, 3))
def test_the_hull_of_many_ranges_is_on_the_cautious_side(
    case: tuple[int, list[Range], list[Range]], margin: int
) -> None:
    _, mine, theirs = case
    if mine and meet(mine, theirs, margin):
        assert meet([hull(mine)], theirs, margin)


# --------------------------------------------------------------------------
# grade_file, grade_pair, blocks_on_lines


@PROPERTIES
@given(
    range_pairs(),
    st.sampled_from([None, "b1", "b2"]),
    st.sampled_from([None, "b1", "b2"]),
    st.integers(0, 2),
)
def test_grade_file_is_lines_when_ranges_meet_or_bases_differ(
    case: tuple[int, list[Range], list[Range]], base: str | None, other: str | None, margin: int
) -> None:
    lines, mine, theirs = case
    grade, same_base = grade_file(
        FileEdit(base, tuple(mine)), FileEdit(other, tuple(theirs)), margin
    )
    assert same_base == (base == other)
    if base != other:
        assert grade == LINES
    else:
        assert grade == (LINES if brute_meet(mine, theirs, lines, margin) else FILE)


PATHS = ["a.py", "b.py", "c.py", "d.py", "e.py"]


@st.composite
def sessions(draw: st.DrawFn) -> dict[str, FileEdit]:
    edited = draw(st.lists(st.sampled_from(PATHS), unique=True, max_size=4))
    return {
        path: FileEdit(draw(st.sampled_from(["b1", "b2"])), tuple(draw(hunk_sets(12, max_hunks=3))))
        for path in edited
    }


def expected_entry(
    path: str,
    mine: dict[str, FileEdit],
    theirs: dict[str, FileEdit],
    i_claim: set[str],
    they_claim: set[str],
) -> dict[str, Any] | None:
    m, t = mine.get(path), theirs.get(path)
    if m is not None and t is not None:
        lines = m.base != t.base or brute_meet(list(m.ranges), list(t.ranges), 12)
        return {
            "path": path,
            "edited_by": "both",
            "grade": LINES if lines else FILE,
            "same_base": m.base == t.base,
            "base": t.base,  # theirs: what their ranges count lines of
            "ranges": [list(r) for r in t.ranges],
            "my_ranges": [list(r) for r in m.ranges],
        }
    if t is not None and path in i_claim:
        return {
            "path": path,
            "edited_by": "them",
            "base": t.base,
            "ranges": [list(r) for r in t.ranges],
        }
    if m is not None and path in they_claim:
        return {"path": path, "edited_by": "me", "my_ranges": [list(r) for r in m.ranges]}
    return None


@PROPERTIES
@given(
    sessions(),
    sessions(),
    st.sets(st.sampled_from(PATHS)),
    st.sets(st.sampled_from(PATHS)),
    st.none() | st.integers(1, 5),
)
def test_grade_pair_grades_the_overlap_from_both_sides_edits(
    mine: dict[str, FileEdit],
    theirs: dict[str, FileEdit],
    i_claim: set[str],
    they_claim: set[str],
    max_files: int | None,
) -> None:
    graded = grade_pair(
        mine,
        theirs,
        i_claim=i_claim.__contains__,
        they_claim=they_claim.__contains__,
        max_files=max_files,
    )
    entries = [
        e for p in PATHS if (e := expected_entry(p, mine, theirs, i_claim, they_claim)) is not None
    ]
    both = [e for e in entries if e["edited_by"] == "both"]
    if any(e["grade"] == LINES for e in both):
        assert graded.grade == LINES
    else:
        assert graded.grade == (FILE if both else CLAIMS)
    assert graded.theirs_only == any(e["edited_by"] == "them" for e in entries)

    # All of them (up to max_files), the ones that matter first, by path within a rank.
    def rank(e: dict[str, Any]) -> int:
        return 0 if e.get("grade") == LINES else 1 if e["edited_by"] == "them" else 2

    ordered = sorted(entries, key=lambda e: (rank(e), e["path"]))
    cut = max_files is not None and len(entries) > max_files
    assert graded.files_truncated == cut
    assert list(graded.files) == (ordered[:max_files] if cut else ordered)

    conflict = {"grade": graded.grade, "edits": list(graded.files)}
    assert blocks_on_lines(conflict) == (graded.grade == LINES or graded.theirs_only)


def test_blocks_on_lines_examples() -> None:
    assert blocks_on_lines({})  # an older server: no grade, refuse as before
    assert blocks_on_lines({"grade": LINES, "edits": []})
    assert not blocks_on_lines({"grade": FILE, "edits": [{"edited_by": "both"}]})
    assert not blocks_on_lines({"grade": CLAIMS, "edits": [{"edited_by": "me"}]})
    assert blocks_on_lines({"grade": CLAIMS, "edits": [{"edited_by": "them"}]})
    assert blocks_on_lines({"grade": FILE, "edits": [{"edited_by": "both"}, {"edited_by": "them"}]})
    assert not blocks_on_lines({"grade": CLAIMS, "edits": None})


# --------------------------------------------------------------------------
# parse_unified_zero on real `git diff -U0`

BASE_LINES = 20
# Names git prints as they are, with a space (git adds a tab after such a name), and
# C-quoted (non-ASCII with core.quotePath, a quote, a backslash, a tab).
NAMES = ["plain.txt", "dir/with space.txt", "naïve ünïcode.txt", 'q"uote\\back.txt', "t\tab.txt"]


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(repo.parent), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def base(name: str) -> list[str]:
    """A base file; every fourth line starts with ``-- `` (an SQL or Lua comment): deleted,
    it reads ``--- ...`` in the diff, as a file header would."""
    return [
        f"-- {name} comment {n}" if n % 4 == 0 else f"{name} base line {n}"
        for n in range(1, BASE_LINES + 1)
    ]


# New lines that look like diff syntax once git prefixes them with "+", or that Python's
# str.splitlines() would cut in two (form feed, vertical tab, U+2028).
NEW_LINES = [
    "plain new line",
    "++ b/elsewhere.txt",
    "++ /dev/null",
    "-- a/elsewhere.txt",
    "@@ -1,3 +1 @@",
    "diff --git a/elsewhere.txt b/elsewhere.txt",
    "\\ No newline at end of file",
    "\x0c",
    "page\x0c@@ -1,20 +0,0 @@",
    "v\x0b+++ b/elsewhere.txt",
    "js\u2028@@ -2 +2 @@",
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("diffs") / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for name in NAMES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("".join(f"{text}\n" for text in base(name)))
    git(root, "add", ".")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "b")
    return root


def edited(name: str, ranges: list[Range], new: list[list[str]]) -> str:
    lines = base(name)
    out: list[str] = []
    line = 1
    for h, (start, end) in enumerate(ranges):
        out.extend(lines[line - 1 : start - 1])
        out.extend(new[h] if new[h] or end >= start else ["plain new line"])
        line = end + 1
    out.extend(lines[line - 1 :])
    return "".join(f"{text}\n" for text in out)


@WITH_GIT
@given(
    st.dictionaries(
        st.sampled_from(NAMES),
        hunk_sets(BASE_LINES).filter(bool),
        min_size=1,
    ),
    st.lists(st.lists(st.sampled_from(NEW_LINES), max_size=3), min_size=6, max_size=6),
)
def test_parse_reads_the_ranges_of_real_git_diff_output(
    repo: Path, changes: dict[str, list[Range]], new_lines: list[list[str]]
) -> None:
    """Several files in one diff, hunks that replace, delete and insert, new and deleted
    lines that look like headers: the ranges are exactly the edits'."""
    for name in NAMES:
        (repo / name).write_text(edited(name, changes.get(name, []), new_lines))
    diff = git(repo, "diff", "-U0")
    assert parse_unified_zero(diff) == changes


def test_parse_reads_a_new_and_a_deleted_file(repo: Path) -> None:
    for name in NAMES:
        (repo / name).write_text("".join(f"{text}\n" for text in base(name)))
    (repo / "new file.txt").write_text("one\ntwo\n")
    git(repo, "add", "-N", "new file.txt")
    (repo / "plain.txt").unlink()
    try:
        diff = git(repo, "diff", "-U0")
        assert parse_unified_zero(diff) == {
            "new file.txt": [(1, 0)],
            "plain.txt": [(1, BASE_LINES)],
        }
    finally:
        git(repo, "rm", "-q", "--cached", "new file.txt")
        (repo / "new file.txt").unlink()
        git(repo, "checkout", "--", "plain.txt")


def test_git_diff_args_read_the_same_ranges_whatever_the_users_configuration(
    repo: Path, tmp_path: Path
) -> None:
    """Colour, other path prefixes, an external diff, a textconv filter, another algorithm:
    configuration that changes the text of plain ``git diff -U0`` does not change the text
    ``GIT_DIFF_ARGS`` asks for."""
    textconv = tmp_path / "textconv"
    textconv.write_text('#!/bin/sh\necho "a line the filter adds"\ncat "$1"\n')
    textconv.chmod(0o755)
    attributes = repo / ".git" / "info" / "attributes"
    attributes.parent.mkdir(exist_ok=True)
    attributes.write_text("* diff=filtered\n")
    configured = [
        arg
        for setting in (
            "color.ui=always",
            "diff.mnemonicPrefix=true",
            "diff.algorithm=patience",
            "diff.indentHeuristic=true",
            f"diff.filtered.textconv={textconv}",
        )
        for arg in ("-c", setting)
    ]
    lines = base("plain.txt")
    (repo / "plain.txt").write_text("".join(f"{t}\n" for t in [lines[0], *lines[2:10], "new"]))
    (repo / "dir" / "with space.txt").unlink()
    try:
        expected = {"plain.txt": [(2, 2), (11, BASE_LINES)], "dir/with space.txt": [(1, 20)]}
        read = git(repo, *configured, *GIT_DIFF_ARGS, "--", "plain.txt", "dir")
        assert parse_unified_zero(read) == expected
        external = git(repo, *configured, "-c", "diff.external=true", *GIT_DIFF_ARGS)
        assert parse_unified_zero(external) == expected
        # Plain `git diff -U0` under that configuration reads something else.
        assert parse_unified_zero(git(repo, *configured, "diff", "-U0")) != expected
    finally:
        attributes.unlink()
        (repo / "plain.txt").write_text("".join(f"{t}\n" for t in lines))
        git(repo, "checkout", "--", "dir")


def test_parse_reads_the_documented_shapes_of_git_diff_output() -> None:
    """tests/fixtures/git_diff_u0.json: one real diff holding the shapes git documents
    (one-line and counted hunks, insertions, a created, a deleted, a C-quoted file, a name
    with a space, a last line without a newline, body lines that look like headers)."""
    fixture = json.loads((FIXTURES / "git_diff_u0.json").read_text(encoding="utf-8"))
    assert fixture["command"] == " ".join(("git", *GIT_DIFF_ARGS))
    expected = {path: [tuple(r) for r in ranges] for path, ranges in fixture["ranges"].items()}
    assert parse_unified_zero(fixture["diff"]) == expected


def test_a_binary_change_claims_the_whole_file(tmp_path: Path) -> None:
    """git prints no lines for a binary file ("Binary files a/X and b/X differ"): its
    change is every line, so two sessions changing one binary file meet (git conflicts)."""
    from agentlanes.domain.edits import WHOLE_FILE

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True
        ).stdout

    git("init", "-q")
    (tmp_path / "logo.png").write_bytes(b"\x00\x01png")
    git("add", "logo.png")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    (tmp_path / "logo.png").write_bytes(b"\x00\x02png")
    (tmp_path / "a and b.bin").write_bytes(b"\x00new")
    git("add", "-N", "a and b.bin")
    ranges = parse_unified_zero(git(*GIT_DIFF_ARGS))
    assert ranges == {"logo.png": [WHOLE_FILE], "a and b.bin": [WHOLE_FILE]}
    assert meet(ranges["logo.png"], ranges["logo.png"])
