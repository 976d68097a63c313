"""Normalisation, the claim rule, and exact overlap on hand-picked hard cases."""

from __future__ import annotations

import time

import pytest

from agentlanes.domain.conflicts import ConflictDetector, Scope
from agentlanes.domain.globs import (
    PatternError,
    PatternLimits,
    claimed_paths,
    claims,
    claims_for_certain,
    clear_caches,
    compile_pattern,
    normalise_path,
    normalise_pattern,
    overlap,
    overlap_example,
)
from agentlanes.domain.globs import compiler as compiler_module
from agentlanes.domain.globs import search as search_module

# (a, b, verdict): "certain" (some path both claim without reading a slash-less
# literal as a directory), None (no overlap at all), or the prefix that must be
# a directory for them to overlap (the example's `if_directory`). Every example
# is checked against both patterns under the reading its verdict names.
CERTAIN = "certain"
HARD_CASES = [
    # Two different segments with one same word (a literal and a one-letter class):
    # a segment matching exactly one word is a literal, so it may be a directory.
    ("a/[a]", "a/[a]/b", "a/a"),
    ("a/[a]", "a/a", CERTAIN),
    ("src/[s]rc", "src/[s]rc/*.py", "src/src"),
    ("*/.a/[.]a", "a/.a/.a/q", "a/.a/.a"),
    # The ones that matching each pattern against the other as a path misses.
    ("src/**/*.ts", "src/api/**", CERTAIN),
    ("*.py", "test_*", CERTAIN),
    ("src/a*", "src/*b", CERTAIN),
    ("src/?.py", "src/[ab].py", CERTAIN),
    ("{src,lib}/*.py", "lib/x*", CERTAIN),
    ("src/{api,web}/**", "src/web/index.ts", CERTAIN),
    ("**/*.ts", "src/**/api/*", CERTAIN),
    ("src/**/test_*.py", "src/api/**/*_x.py", CERTAIN),
    ("a/**/b/**/c", "a/b/c", CERTAIN),
    ("a/**/b/**/c", "a/x/b/y/z/c", CERTAIN),
    ("*/b", "a/*", CERTAIN),
    # File or directory: a slash-less literal claims below itself only if it is a
    # directory; a trailing '/' says it is one.
    ("package.json", "**/*.py", "package.json"),
    ("Makefile", "**/*.mk", "Makefile"),
    ("src/api", "src/api/x.py", "src/api"),
    ("src/api/", "src/api/x.py", CERTAIN),
    ("src/api", "src/api/handlers.py", "src/api"),
    ("src/api", "src/*/x.py", "src/api"),
    ("src/api/", "src/*/x.py", CERTAIN),
    ("src/api/", "src/api/deep/er/x", CERTAIN),
    ("src/api", "src/api/", CERTAIN),  # both claim src/api itself
    ("src/api", "src/api/**", "src/api"),  # 'src/api/**' needs a segment below
    ("src/api/", "src/api/**", CERTAIN),
    ("src/api/", "src/api", CERTAIN),
    ("docs", "docs/**/*.md", "docs"),
    ("docs/", "docs/**/*.md", CERTAIN),
    ("**/node_modules", "**/*.js", "node_modules"),
    ("**/node_modules/", "**/*.js", CERTAIN),
    ("src", "src/api", "src"),  # two literals: src/api lies below src
    ("src/api", "src/api/v1", "src/api"),
    ("a/b", "a/b/c/d", "a/b"),
    ("src/*/", "src/api/x.py", CERTAIN),  # a wildcard directory claims below too
    ("src/*", "src/api/x.py", None),  # '*' stops at '/', and src/* has a wildcard
    ("src/*/", "src/api", CERTAIN),
    ("{src/,lib}", "src/x/y", CERTAIN),  # braces first: 'src/' is a directory
    ("{src/,lib}", "lib/x/y", "lib"),
    ("**/", "README.md", CERTAIN),
    ("Makefile", "Makefile", CERTAIN),
    ("src/api", "src/apis/x.py", None),
    ("src/api/", "src/apis/x.py", None),
    ("{a,b*}", "a/x", "a"),  # the 'a' alternative claims below if a directory
    ("{a,b*}", "bb/x", None),
    # Segment counts.
    ("x/?", "x/??", None),
    ("x/*", "x/*/*", None),
    ("x/**", "x/*.py", CERTAIN),
    ("x/**", "x", "x"),  # not 'x' itself ('x/**' needs a segment below), but 'x/a'
    ("x/**", "x/", CERTAIN),
    ("x/**", "x*", None),
    ("x/**", "x/y", CERTAIN),
    ("**", "a", CERTAIN),
    ("**/**", "**", CERTAIN),
    ("a/**/**", "a?", None),
    ("**/a/**", "a", "a"),  # via 'a' as a directory: a/x
    ("**/a/**", "a/*.py", CERTAIN),
    # Dotfiles: DOTGLOB lets wildcards match a leading dot.
    ("*", ".env", CERTAIN),
    ("**/*", ".github/workflows/ci.yml", CERTAIN),
    ("?", "[.]", None),  # '.' is not a valid path segment
    ("??", "[.][.]", None),
    ("a/?/b", "a/[.]/b", None),
    ("??", ".?", CERTAIN),
    ("[.]*", "*", CERTAIN),
    # Classes and negated classes.
    ("[!a]", "[a]", None),
    ("[!a]", "?", CERTAIN),
    ("[a-c]x", "[c-e]?", CERTAIN),
    ("[a-c]x", "[d-f]?", None),
    ("[[:digit:]]", "[!0-8]", CERTAIN),
    ("[[:alpha:]]", "[0-9]", None),
    ("[^a]", "a", None),
    # Escapes are literal.
    ("a\\*", "a*", CERTAIN),
    ("a\\*", "ab", None),
    ("a\\*", "*/b", "a*"),
    ("\\[x\\]", "[[]x[]]", CERTAIN),
    # Braces, nested and ranges.
    ("{a,{b,c}}/x", "c/*", CERTAIN),
    ("file{1..3}.txt", "file2.txt", CERTAIN),
    ("file{1..3}.txt", "file4.txt", None),
    ("src/{,lib/}x.py", "src/x.py", CERTAIN),
    ("src/{,lib/}x.py", "src/lib/*", CERTAIN),
    # Case-sensitive.
    ("README.md", "readme.md", None),
    # Disjoint.
    ("docs/*.md", "src/**", None),
    ("*.py", "**/*.md", None),
    ("*.py", "*.pyc", None),
    ("**/*.py", "**/*.pyc", None),
    ("a*b*c", "*d*", CERTAIN),
    ("a*b", "*c", None),
]


@pytest.mark.parametrize(("a", "b", "verdict"), HARD_CASES)
def test_hard_case_overlap_is_exact_symmetric_and_proved(
    a: str, b: str, verdict: str | None
) -> None:
    a, b = normalise_pattern(a), normalise_pattern(b)
    found = overlap(a, b)
    assert overlap(b, a) == found
    assert (overlap_example(a, b) is not None) == (verdict is not None)
    if verdict is None:
        assert found is None
        return
    assert found is not None
    example = found.example
    assert normalise_path(example) == example
    assert claims(a, example) and claims(b, example), (a, b, example)
    if verdict == CERTAIN:
        assert found.certain and found.if_directory is None, found
        assert claims_for_certain(a, example), (a, example)
        assert claims_for_certain(b, example), (b, example)
    else:
        assert not found.certain, found
        assert found.if_directory == verdict, found
        assert example.startswith(verdict + "/"), found
        assert not (claims_for_certain(a, example) and claims_for_certain(b, example))


@pytest.mark.parametrize("first", ["bar", "brace"])
def test_a_bar_is_a_literal_character_not_a_brace_separator(first: str) -> None:
    """'x/a*|b*' (one segment with a '|') and 'x/{a*,b*}' (two alternatives)
    are told apart whichever is compiled first: they once shared one
    compiled rest, and 'x/bq' missed its conflict with the brace."""
    clear_caches()
    bar, brace = normalise_pattern("x/a*|b*"), normalise_pattern("x/{a*,b*}")
    order = [bar, brace] if first == "bar" else [brace, bar]
    detector = ConflictDetector(Scope(p, p, None, (p,)) for p in order)
    found = detector.find(patterns=["x/bq"])
    assert [c.session_id for c in found] == [brace]
    assert overlap_example(bar, "x/bq") is None
    assert overlap_example(brace, "x/bq") == "x/bq"
    assert overlap_example(bar, "x/a|b") == "x/a|b"
    assert claims(bar, "x/a|b")


def test_patterns_alike_after_their_literal_lead_share_one_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Verdicts are keyed by what is left of the new pattern, not by which
    pattern it is: against a live '**/test_*.py', 'src/api/*.py' and
    'web/*.py' both come down to '*.py' after their directories, so the
    second check-in runs no search of its own."""
    clear_caches()
    searches: list[object] = []
    search = compiler_module._search

    def counted(*args: object) -> object:
        searches.append(args)
        return search(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(compiler_module, "_search", counted)
    detector = ConflictDetector([Scope("s1", "A", None, ("**/test_*.py",))])
    first = detector.find(patterns=["src/api/*.py"])
    assert len(searches) == 1
    second = detector.find(patterns=["web/*.py"])
    assert len(searches) == 1
    assert first[0].overlapping_files[0].example == "src/api/test_.py"
    assert second[0].overlapping_files[0].example == "web/test_.py"
    assert detector.find(patterns=["web/*.ts"]) == []


def test_rest_verdicts_stay_within_their_bound() -> None:
    """The memo of rest verdicts empties itself when full, as the caches of
    compiled patterns and pair verdicts drop their oldest entries."""
    memo = search_module._Memo(3)
    table = memo.table("*.py")
    for key in range(3):
        memo.store(table, key, ("x.py",))
    assert memo.size == 3
    assert memo.table("*.py") == {0: ("x.py",), 1: ("x.py",), 2: ("x.py",)}
    memo.store(memo.table("**"), 7, None)
    assert memo.size == 0
    assert memo.by_shape == {}


def test_a_long_pattern_keeps_short_shape_names() -> None:
    """Read at every depth of a deep index, a long pattern names what is left
    of it by (pattern, depth) past 128 characters, not by a long string per depth."""
    clear_caches()
    deep = "/".join(["seg"] * 60)
    live = [f"{deep[: 4 * k + 3]}/**/x*.py" for k in range(60)]
    detector = ConflictDetector(Scope(f"s{k}", "A", None, (p,)) for k, p in enumerate(live))
    mine = normalise_pattern(deep + "/*.py")
    found = detector.find(patterns=[mine])
    assert len(found) == 60
    assert all(
        claims(c.overlapping_files[0].their_pattern, c.overlapping_files[0].example) for c in found
    )
    assert all(claims(mine, c.overlapping_files[0].example) for c in found)
    shapes = compile_pattern(mine)._shapes.values()
    assert any(isinstance(name, tuple) for name in shapes)
    assert all(len(name) <= 128 for name in shapes if isinstance(name, str))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  src/api/  ", "src/api/"),  # a trailing '/' is kept: a directory
        ("src/api//", "src/api/"),
        ("./src//api///x.py", "src/api/x.py"),
        ("././a", "a"),
        (".//a", "a"),
        ("src/**/", "src/**/"),
    ],
)
def test_normalise_pattern_trims_dots_and_slashes(raw: str, expected: str) -> None:
    assert normalise_pattern(raw) == expected


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("./", "empty"),
        ("/etc/passwd", "absolute"),
        ("src/../etc", "'..'"),
        ("..", "'..'"),
        ("a/./b", "'.'"),
        (".", "'.'"),
        ("a/.", "'.'"),
        ("a/./", "'.'"),
        ("{.,a}/x", "'.'"),
        ("a\x00b", "NUL"),
        ("a" * 1025, "longer than 1024"),
        # The limit counts what is sent, as the API's maxLength does, not what is left.
        (" " + "a" * 1024, "longer than 1024"),
        ("./" * 300 + "a" * 500, "longer than 1024"),
        ("*" * 33, "more than 32 wildcards"),
        ("/".join(["**"] * 17), "more than 32 wildcards"),  # '**' counts twice
        ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", "more than 64 alternatives"),
        ("{1..1000}", "more than 64 alternatives"),
        ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}/" + "x" * 60, "longer than 4096 characters in all"),
        ("{/etc,a}", "absolute"),
        ("{..,a}/x", "'..'"),
        # Nothing to claim: every alternative empty, or an empty group.
        ("{,}", "yields nothing"),
        ("{{,},{,}}", "yields nothing"),
        ("{}", "empty brace group"),
        ("src/{}/x", "empty brace group"),
    ],
)
def test_normalise_pattern_refuses_with_a_message_naming_the_pattern(
    raw: str, fragment: str
) -> None:
    with pytest.raises(PatternError) as info:
        normalise_pattern(raw)
    assert fragment in str(info.value)
    quoted = info.value.pattern
    assert quoted == raw or quoted.startswith((raw[:40], raw.strip()[:40]))
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "raw",
    [
        "{1..1000000000000000000}",  # issue 24: never answered
        "{a,b}" * 40,  # 2**40 alternatives
        "x/{" + ",".join(["{a,b}"] * 30) + "}" * 1 + "{1..99999999}",
        "{" + "{a,b}{c,d}," * 80 + "z}",
    ],
)
def test_a_huge_brace_expansion_is_refused_before_it_is_expanded(raw: str) -> None:
    """Refused at the limit, not after expanding: each takes microseconds (the
    first never finished, and ``{a,b}`` 24 times over took 8.5 s and 1.1 GB, when
    the expansion ran first and was cut afterwards)."""
    started = time.perf_counter()
    with pytest.raises(PatternError, match="more than 64 alternatives"):
        normalise_pattern(raw)
    assert time.perf_counter() - started < 0.05


@pytest.mark.parametrize("raw", ["a{,}b", "{,a/}", "[{}]", "x/\\{}", "{a,}"])
def test_a_brace_with_some_empty_alternatives_is_a_pattern(raw: str) -> None:
    assert normalise_pattern(raw) == raw


def test_a_stored_pattern_that_claims_nothing_is_passed_over() -> None:
    """A row written before '{,}' was refused makes no read fail: it claims nothing."""
    detector = ConflictDetector(
        [Scope("old", "a", None, ("{,}", "src/x")), Scope("new", "b", None, ("src/**",))]
    )
    assert [c.session_id for c in detector.find(patterns=["src/x"])] == ["old", "new"]
    assert detector.find(patterns=["{,}"]) == []
    detector.remove("old")
    assert [c.session_id for c in detector.find(patterns=["src/x"])] == ["new"]


def test_claimed_paths_keeps_the_paths_some_pattern_claims_in_order() -> None:
    """What the CLI's ``status --edits`` and the hook's session end both ask: which of
    these paths do my claims cover. A pattern this version cannot read claims nothing."""
    with pytest.raises(PatternError):
        claims("{,}", "src/x")
    paths = ["src/b.py", "docs/a.md", "src/a.py", "README", "Makefile/x"]
    assert claimed_paths(["{,}", "src/**", "src/*.py", "Makefile"], paths) == [
        "src/b.py",
        "src/a.py",
        "Makefile/x",
    ]
    assert claimed_paths(iter(["docs/*.md", "src/a.py"]), iter(paths)) == ["docs/a.md", "src/a.py"]
    assert claimed_paths([], paths) == []


def test_limits_come_from_the_caller() -> None:
    tight = PatternLimits(max_length=10, max_wildcards=2, max_brace_alternatives=2)
    assert normalise_pattern("{a,b}/*", tight) == "{a,b}/*"
    for raw in ("a" * 11, "*/*/*", "{a,b,c}"):
        with pytest.raises(PatternError):
            normalise_pattern(raw, tight)


def test_escaped_wildcards_do_not_count_against_the_limit() -> None:
    assert normalise_pattern("\\*" * 100, PatternLimits(max_wildcards=1))


def test_normalise_path_is_literal_and_checked() -> None:
    assert normalise_path("./src//[x].py") == "src/[x].py"
    assert normalise_path("src/a.py/") == "src/a.py"  # a concrete file: '/' means nothing
    for raw in ("", "/a", "a/../b", "a/./b", "a\x00", "b" * 2000, "b" * 1024 + " "):
        with pytest.raises(PatternError):
            normalise_path(raw)


@pytest.mark.parametrize(
    ("pattern", "path", "expected", "for_certain"),
    [
        ("src/api", "src/api", True, True),
        ("src/api", "src/api/x/y.py", True, False),  # only if src/api is a directory
        ("src/api/", "src/api/x/y.py", True, True),
        ("src/api/", "src/api", True, True),
        ("src/*/", "src/api/x", True, True),
        ("{docs/,src}", "docs/x", True, True),
        ("{docs/,src}", "src/x", True, False),
        ("Makefile", "Makefile/a.mk", True, False),
    ],
)
def test_claims_for_certain_reads_no_literal_as_a_directory(
    pattern: str, path: str, expected: bool, for_certain: bool
) -> None:
    pattern = normalise_pattern(pattern)
    assert claims(pattern, path) is expected
    assert claims_for_certain(pattern, path) is for_certain


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/api", "src/api", True),
        ("src/api", "src/api/x/y.py", True),
        ("src/api", "src/apis", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/a.py/x", False),  # last segment has a wildcard: no claim below
        ("*.py", "src/a.py", False),
        ("**/*.py", "src/a.py", True),
        ("**/*.py", "a.py", True),
        ("{docs,src/api}", "src/api/x", True),
        ("{docs,src/*}", "src/api/x", False),
        ("src/[x].py", "src/x.py", True),
        ("a/**", "a", False),
        ("*", ".hidden", True),
    ],
)
def test_claims_follows_the_spec(pattern: str, path: str, expected: bool) -> None:
    assert claims(pattern, path) is expected
