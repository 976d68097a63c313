"""Identical changes (SPEC "Line-level claims": ``digests``): two agents making the very
same change to the same lines do not meet, as git's merge takes it once; different text
on the same lines still meets. Digests are read off real ``git diff -U0`` and checked
against real ``git merge-tree``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlanes.domain.digests import diff_digests, digest, with_digests
from agentlanes.domain.edits import (
    FILE,
    GIT_DIFF_ARGS,
    LINES,
    FileEdit,
    grade_file,
    meet,
    parse_unified_zero,
    read_hunks,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.merge_agreement import FILE as LAB_FILE
from bench.merge_agreement import NUMBERED, MergeLab

LINES_OF_BASE = list(NUMBERED.lines)


def text(lines: list[str], eol: bool = True) -> str:
    return "\n".join(lines) + ("\n" if eol else "")


def replaced(start: int, end: int, new: list[str]) -> list[str]:
    return LINES_OF_BASE[: start - 1] + new + LINES_OF_BASE[end:]


def side(lab: MergeLab, lines: list[str], eol: bool = True) -> tuple[str, FileEdit]:
    """A side committed off the lab's base, and its edit as the agent side reads it: the
    merge's own diff (``GIT_DIFF_ARGS``), ranges and digests."""
    commit = lab.commit(text(lines, eol), lab.base)
    diff = lab.git(*GIT_DIFF_ARGS, lab.base, commit, "--", LAB_FILE)
    ranges = parse_unified_zero(diff)[LAB_FILE]
    digests = diff_digests(diff)[LAB_FILE]
    return commit, FileEdit("b", tuple(ranges), tuple(digests))


def test_the_same_change_twice_merges_cleanly_and_does_not_meet(tmp_path: Path) -> None:
    lab = MergeLab(tmp_path)
    fix = replaced(10, 12, ["    the one fix"])
    a, mine = side(lab, fix)
    b, theirs = side(lab, fix)
    assert mine == theirs and mine.ranges == ((10, 12),)
    assert lab.merges_cleanly(a, b)
    assert grade_file(mine, theirs) == (FILE, True)
    # Without digests, the cautious side.
    assert grade_file(mine._replace(digests=None), theirs._replace(digests=None))[0] == LINES


def test_different_text_on_the_same_lines_meets(tmp_path: Path) -> None:
    lab = MergeLab(tmp_path)
    a, mine = side(lab, replaced(10, 12, ["    A's fix"]))
    b, theirs = side(lab, replaced(10, 12, ["    B's fix"]))
    assert mine.ranges == theirs.ranges and mine.digests != theirs.digests
    assert not lab.merges_cleanly(a, b)
    assert grade_file(mine, theirs)[0] == LINES


def test_identical_deletions_merge_cleanly_and_do_not_meet(tmp_path: Path) -> None:
    lab = MergeLab(tmp_path)
    a, mine = side(lab, replaced(20, 25, []))
    deleted = replaced(20, 25, [])
    b, theirs = side(lab, [*deleted[:40], "    B's own line", *deleted[40:]])
    assert len(theirs.ranges) == 2
    assert mine.digests is not None and mine.digests[0] == digest([])
    assert lab.merges_cleanly(a, b)
    assert grade_file(mine, theirs)[0] == FILE


def test_an_identical_change_next_to_another_change_still_meets(tmp_path: Path) -> None:
    """git passes the identical pair, and then compares what follows: B's second hunk
    touches A's next one."""
    lab = MergeLab(tmp_path)
    a_lines = replaced(10, 10, ["    same"])
    a_lines[14] = "    A changes line 15"
    b_lines = replaced(10, 10, ["    same"])
    b_lines[13] = "    B changes line 14"
    a, mine = side(lab, a_lines)
    b, theirs = side(lab, b_lines)
    assert mine.ranges == ((10, 10), (15, 15)) and theirs.ranges == ((10, 10), (14, 14))
    assert not lab.merges_cleanly(a, b)
    assert grade_file(mine, theirs)[0] == LINES


def test_the_missing_final_newline_is_part_of_the_text(tmp_path: Path) -> None:
    lab = MergeLab(tmp_path)
    new_end = [*LINES_OF_BASE[:-1], "last line changed"]
    a, mine = side(lab, new_end, eol=True)
    b, theirs = side(lab, new_end, eol=False)
    assert mine.ranges == theirs.ranges and mine.digests != theirs.digests
    assert not lab.merges_cleanly(a, b)
    assert grade_file(mine, theirs)[0] == LINES
    c, same = side(lab, new_end, eol=False)
    assert lab.merges_cleanly(b, c) and grade_file(theirs, same)[0] == FILE


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 30), st.integers(0, 3)), min_size=1, max_size=4),
    st.integers(0, 3),
)
def test_digests_that_differ_change_nothing(spans: list[tuple[int, int]], margin: int) -> None:
    ranges = sorted({(s, s + n - 1) for s, n in spans})
    mine = [f"{i:016x}" for i in range(len(ranges))]
    theirs = [f"{i + 100:016x}" for i in range(len(ranges))]
    assert meet(ranges, ranges, margin, my_digests=mine, their_digests=theirs) == meet(
        ranges, ranges, margin
    )
    # The same digests on every range: the same change, nothing meets.
    assert not meet(ranges, ranges, margin, my_digests=mine, their_digests=mine)
    # A digest not known (null) on one side: it meets.
    unknown = [None, *mine[1:]]
    assert meet(ranges, ranges, margin, my_digests=unknown, their_digests=unknown)


def test_read_hunks_gives_each_hunks_new_lines() -> None:
    diff = (
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
        "@@ -2 +2,2 @@\n-old\n+new one\n+new two\n"
        "@@ -9,2 +9,0 @@\n-gone\n-gone too\n"
        "@@ -20 +21 @@\n-last\n\\ No newline at end of file\n+last\n\\ No newline at end of file\n"
    )
    assert read_hunks(diff) == {
        "f": [
            ((2, 2), ["new one\n", "new two\n"]),
            ((9, 10), []),
            ((20, 20), ["last"]),
        ]
    }
    assert parse_unified_zero(diff) == {"f": [(2, 2), (9, 10), (20, 20)]}
    assert diff_digests(diff)["f"] == [
        digest(["new one\n", "new two\n"]),
        digest([]),
        digest(["last"]),
    ]
    sent = with_digests([{"path": "f", "base": "b", "ranges": [[2, 2], [9, 10], [20, 20]]}], diff)
    assert sent[0]["digests"] == diff_digests(diff)["f"]
    # Ranges that are not the diff's (another reading) get none.
    assert "digests" not in with_digests([{"path": "f", "base": "b", "ranges": [[2, 2]]}], diff)[0]


def test_a_binary_change_has_no_digest() -> None:
    diff = "diff --git a/img b/img\nBinary files a/img and b/img differ\n"
    assert diff_digests(diff) == {"img": [None]}
    assert "digests" not in with_digests([{"path": "img", "ranges": [[1, 10_000_000]]}], diff)[0]


@pytest.mark.parametrize("lines", [[], ["x\n"], ["é\n", "\udcff\n"]])
def test_a_digest_is_16_hex_digits(lines: list[str]) -> None:
    assert len(digest(lines)) == 16 and int(digest(lines), 16) >= 0


def test_new_text_on_the_same_lines_is_reported_again() -> None:
    """The agent side resends a file whose digests changed although its ranges did not:
    a stale digest could pass a conflict."""
    from agentlanes.hooks import edits as hook

    held = {"a.py": {"base": "b", "ranges": [[1, 1]], "digests": [digest(["one\n"])]}}
    same = {"path": "a.py", "base": "b", "ranges": [[1, 1]], "digests": [digest(["one\n"])]}
    other = {**same, "digests": [digest(["uno\n"])]}
    assert hook._changes([same], held) == []
    assert hook._changes([other], held) == [other]
