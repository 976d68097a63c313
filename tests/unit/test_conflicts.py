"""The conflict detector: areas, pattern overlaps, staged paths, order, index upkeep."""

from __future__ import annotations

import time

import pytest

from agentlanes.domain.conflicts import Conflict, ConflictDetector, FileOverlap, Scope


def scope(sid: str, *patterns: str, area: str | None = None) -> Scope:
    return Scope(session_id=sid, agent_name=f"agent-{sid}", declared_area=area, patterns=patterns)


def test_reports_file_overlap_with_example() -> None:
    detector = ConflictDetector([scope("s1", "src/api/**"), scope("s2", "docs/**")])
    conflicts = detector.find(patterns=["src/**/*.ts"])
    assert conflicts == [
        Conflict(
            session_id="s1",
            agent_name="agent-s1",
            declared_area=None,
            overlapping_area=False,
            overlapping_files=(
                FileOverlap("src/**/*.ts", "src/api/**", "src/api/a.ts", True, None),
            ),
            certain=True,
        )
    ]


def test_same_area_conflicts_case_sensitively() -> None:
    detector = ConflictDetector([scope("s1", area="billing"), scope("s2", area="Billing")])
    conflicts = detector.find(declared_area="billing")
    assert [(c.session_id, c.overlapping_area, c.overlapping_files) for c in conflicts] == [
        ("s1", True, ())
    ]
    assert detector.find(declared_area="") == []
    assert detector.find(declared_area=None) == []


def test_area_and_files_in_one_conflict() -> None:
    detector = ConflictDetector([scope("s1", "a/**", area="x")])
    [conflict] = detector.find(declared_area="x", patterns=["a/b"])
    assert conflict.overlapping_area
    assert conflict.overlapping_files == (FileOverlap("a/b", "a/**", "a/b", True, None),)


def test_paths_are_concrete_and_reported_as_their_own_example() -> None:
    """A staged path is a file that exists, so the directories above it exist:
    'src/api' claims 'src/api/h.py' for certain."""
    detector = ConflictDetector(
        [scope("s1", "src/api"), scope("s2", "**/*.md"), scope("s3", "src/[x].py")]
    )
    conflicts = detector.find(paths=["src/api/h.py", "README.md", "src/[x].py", "src/x.py"])
    assert [(c.session_id, c.overlapping_files) for c in conflicts] == [
        ("s1", (FileOverlap("src/api/h.py", "src/api", "src/api/h.py", True, None),)),
        ("s2", (FileOverlap("README.md", "**/*.md", "README.md", True, None),)),
        ("s3", (FileOverlap("src/x.py", "src/[x].py", "src/x.py", True, None),)),
    ]


def test_order_is_oldest_first_and_exclusion_skips_the_caller() -> None:
    detector = ConflictDetector()
    for sid in ("s3", "s1", "s2"):
        detector.add(scope(sid, "**"))
    assert [c.session_id for c in detector.find(patterns=["x"])] == ["s3", "s1", "s2"]
    assert [c.session_id for c in detector.find(patterns=["x"], exclude_session_id="s1")] == [
        "s3",
        "s2",
    ]


def test_overlaps_listed_in_their_order_then_mine() -> None:
    detector = ConflictDetector([scope("s1", "b/**", "a/**", "c")])
    [conflict] = detector.find(patterns=["a/x", "b/y", "*", "b/z"], paths=["c/p", "b/q"])
    assert [(o.pattern, o.their_pattern) for o in conflict.overlapping_files] == [
        ("b/y", "b/**"),
        ("b/z", "b/**"),
        ("b/q", "b/**"),
        ("a/x", "a/**"),
        ("*", "c"),
        ("c/p", "c"),
    ]


def test_add_replaces_and_remove_forgets() -> None:
    detector = ConflictDetector([scope("s1", "a/**"), scope("s2", "a/**")])
    detector.add(scope("s1", "b/**"))
    assert [c.session_id for c in detector.find(patterns=["a/x"])] == ["s2"]
    assert [c.session_id for c in detector.find(patterns=["b/x"])] == ["s1"]
    detector.remove("s2")
    detector.remove("unknown")
    assert detector.find(patterns=["a/x"]) == []
    detector.remove("s1")
    assert len(detector) == 0
    assert detector.find(patterns=["**"]) == []


def test_shared_pattern_survives_removal_of_one_holder() -> None:
    detector = ConflictDetector([scope("s1", "a"), scope("s2", "a")])
    detector.remove("s1")
    assert [c.session_id for c in detector.find(paths=["a/b"])] == ["s2"]


def test_literal_prefix_index_does_not_hide_wildcard_scopes() -> None:
    detector = ConflictDetector(
        [
            scope("deep", "src/api/v1/x.py"),
            scope("top", "*"),
            scope("star", "src/*/v1/**"),
            scope("brace", "{src,lib}/api/**"),
            scope("other", "lib/api/**"),
        ]
    )
    # '*' claims only top-level names: 'src' itself, nothing below it.
    assert [c.session_id for c in detector.find(patterns=["src/api"])] == [
        "deep",
        "star",
        "brace",
    ]
    assert [c.session_id for c in detector.find(patterns=["src"])] == [
        "deep",
        "top",
        "star",
        "brace",
    ]
    assert [c.session_id for c in detector.find(patterns=["**/v1/*.py"])] == [
        "deep",
        "star",
        "brace",
        "other",
    ]


def test_a_broad_patterns_answer_is_kept_and_follows_sessions() -> None:
    detector = ConflictDetector([scope("s1", "docs")], keep_from=1)
    walks = []
    walk = detector._trie.overlaps_of
    detector._trie.overlaps_of = lambda cp: walks.append(cp) or walk(cp)  # type: ignore[method-assign]

    def answer() -> list[tuple[str, bool, tuple[FileOverlap, ...]]]:
        return [
            (c.session_id, c.certain, c.overlapping_files)
            for c in detector.find(patterns=["**/*.md"])
        ]

    # 'docs' may be a file: the overlap holds only if it is a directory.
    maybe_docs = FileOverlap("**/*.md", "docs", "docs/a.md", False, "docs")
    assert answer() == [("s1", False, (maybe_docs,))]
    detector.add(scope("s2", "src/*.py", "web/**"))
    detector.add(scope("s3", "docs/", "x/*.txt"))
    assert answer() == [
        ("s1", False, (maybe_docs,)),
        ("s2", True, (FileOverlap("**/*.md", "web/**", "web/a.md", True, None),)),
        ("s3", True, (FileOverlap("**/*.md", "docs/", "docs/a.md", True, None),)),
    ]
    detector.remove("s1")
    detector.remove("s2")
    assert answer() == [("s3", True, (FileOverlap("**/*.md", "docs/", "docs/a.md", True, None),))]
    detector.add(scope("s4", "docs/index.md"))
    assert answer()[-1] == (
        "s4",
        True,
        (FileOverlap("**/*.md", "docs/index.md", "docs/index.md", True, None),),
    )
    detector.remove("s3")
    detector.remove("s4")
    assert answer() == []
    assert len(walks) == 1  # one walk of the index; the rest came from the kept answer


def test_answers_below_the_threshold_are_not_kept() -> None:
    detector = ConflictDetector([scope("s1", "docs")], keep_from=2)
    detector.find(patterns=["**/*.md"])
    assert detector._kept == {}
    # One live pattern, one overlap per pattern kept: room for one answer.
    detector = ConflictDetector([scope("s1", "docs")], keep_from=1, keep_per_pattern=1)
    detector.find(patterns=["**/*.md"])
    detector.find(patterns=["**/*.py"])
    assert list(detector._kept) == ["**/*.py"]  # least recently used dropped


def test_kept_answers_stay_within_their_budget() -> None:
    # Four live patterns, three overlaps each: room for twelve overlaps in all.
    # (A literal path claims what lies below it, so '**/*.md' overlaps all four.)
    detector = ConflictDetector(
        [scope("s1", "docs", "web/**"), scope("s2", "src/a.py", "src/b.md")],
        keep_from=1,
        keep_per_pattern=3,
    )
    detector.find(patterns=["**/*.md"])  # 4 overlaps
    detector.find(patterns=["**/*.py"])  # 4
    assert list(detector._kept) == ["**/*.md", "**/*.py"]
    detector.find(patterns=["**/*.md"])  # used again: now the most recent
    detector.find(patterns=["src/**"])  # 2: 4 + 4 + 2 = 10, within
    assert list(detector._kept) == ["**/*.py", "**/*.md", "src/**"]
    detector.find(patterns=["**"])  # 4 more: 14, the least recently used goes
    assert list(detector._kept) == ["**/*.md", "src/**", "**"]
    detector.remove("s2")  # two live patterns left (room for six), kept: 2 + 0 + 2
    detector.find(patterns=["{**,x}"])  # 2 more: 6, within
    assert list(detector._kept) == ["**/*.md", "src/**", "**", "{**,x}"]
    detector.find(patterns=["*/**"])  # 2 more: 8, the least recently used goes
    assert list(detector._kept) == ["src/**", "**", "{**,x}", "*/**"]
    assert detector.find(patterns=["**/*.md"])[0].session_id == "s1"  # rebuilt, exact


def test_a_conflict_is_certain_by_its_area_or_by_one_certain_overlap() -> None:
    detector = ConflictDetector(
        [
            scope("s1", "package.json", area="x"),
            scope("s2", "package.json"),
            scope("s3", "Makefile", "src/a.py"),
            scope("s4", "package.json/"),
        ]
    )
    found = {c.session_id: c for c in detector.find(declared_area="x", patterns=["**/*.py"])}
    maybe = FileOverlap("**/*.py", "package.json", "package.json/a.py", False, "package.json")
    assert (found["s1"].certain, found["s1"].overlapping_files) == (True, (maybe,))
    assert (found["s2"].certain, found["s2"].overlapping_files) == (False, (maybe,))
    assert found["s3"].certain
    assert found["s3"].overlapping_files == (
        FileOverlap("**/*.py", "Makefile", "Makefile/a.py", False, "Makefile"),
        FileOverlap("**/*.py", "src/a.py", "src/a.py", True, None),
    )
    # Said to be a directory: certain.
    assert found["s4"].overlapping_files == (
        FileOverlap("**/*.py", "package.json/", "package.json/a.py", True, None),
    )
    assert found["s4"].certain
    wire = found["s2"].overlapping_files[0]._asdict()
    assert wire == {
        "pattern": "**/*.py",
        "their_pattern": "package.json",
        "example": "package.json/a.py",
        "certain": False,
        "if_directory": "package.json",
    }
    assert "if_directory" not in found["s3"].overlapping_files[1]._asdict()


def test_max_files_keeps_certain_overlaps_first_and_says_when_there_were_more() -> None:
    """Issue 24: a conflict carries at most max_files overlaps, certain ones first; its
    certain flag still counts them all; the work per session follows max_files."""
    maybes = tuple(f"lib/m{i}" for i in range(5))  # literals: overlap only if directories
    detector = ConflictDetector([Scope("s", "a", None, (*maybes, "lib/sure.py"))])
    (c,) = detector.find(patterns=["lib/**/*.py"], max_files=2)
    assert c.certain and c.files_truncated
    assert [f.certain for f in c.overlapping_files] == [True, False]
    (full,) = detector.find(patterns=["lib/**/*.py"])
    assert len(full.overlapping_files) == 6 and not full.files_truncated
    # Few enough: all of them, in the usual order.
    (few,) = detector.find(patterns=["lib/**/*.py"], max_files=6)
    assert few.overlapping_files == full.overlapping_files and not few.files_truncated


def test_a_search_past_its_deadline_stops() -> None:
    """Two 1 KB near-duplicates cost milliseconds each: 64 against 64 stop at once
    when the deadline has passed, rather than running for seconds."""
    from agentlanes.domain.conflicts import SearchTooLong, work_clock

    body = "x" * 1000
    detector = ConflictDetector(
        [Scope("s", "a", None, tuple(f"{body}{i:04d}*" for i in range(64)))]
    )
    mine = [f"*{body}{i:04d}" for i in range(64)]
    started = time.monotonic()
    with pytest.raises(SearchTooLong):
        detector.find(patterns=mine, deadline=work_clock() + 0.05)
    assert time.monotonic() - started < 0.5
    with pytest.raises(SearchTooLong):
        detector.find(paths=["a/b.py"], deadline=work_clock() - 1)


def test_a_search_deadline_counts_its_own_work_not_the_time_it_waits() -> None:
    """The budget bounds work: while another thread holds the interpreter, the searching
    thread's clock stands still, so a trivial search on a busy machine is not refused
    (SPEC "One agent cannot hurt another" bounds the work one request may cause)."""
    import threading

    from agentlanes.domain.conflicts import work_clock

    detector = ConflictDetector([Scope("s", "a", None, ("src/**",))])
    stop = threading.Event()

    def busy() -> None:  # another thread's work, on the same interpreter
        while not stop.is_set():
            sum(range(1000))

    spinner = threading.Thread(target=busy)
    spinner.start()
    try:
        deadline = work_clock() + 0.05
        time.sleep(0.2)  # waiting: the wall clock passes the budget, the work clock not
        assert detector.find(paths=["src/a.py"], deadline=deadline)
    finally:
        stop.set()
        spinner.join()
