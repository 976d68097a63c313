"""Normalisation, the claim rule, and exact overlap on hand-picked hard cases."""

from __future__ import annotations

import pytest

from agentlanes.domain import patterns as patterns_module
from agentlanes.domain.conflicts import ConflictDetector, Scope
from agentlanes.domain.patterns import (
    PatternError,
    PatternLimits,
    claims,
    clear_caches,
    compile_pattern,
    normalise_path,
    normalise_pattern,
    overlap_example,
)

# (a, b, overlaps). Every overlap's example is checked against both patterns.
HARD_CASES = [
    # Two different segments with one same word (a literal and a one-letter class).
    ("a/[a]", "a/[a]/b", True),
    ("src/[s]rc", "src/[s]rc/*.py", True),
    ("*/.a/[.]a", "a/.a/.a/q", True),
    # The ones that matching each pattern against the other as a path misses.
    ("src/**/*.ts", "src/api/**", True),
    ("*.py", "test_*", True),
    ("src/a*", "src/*b", True),
    ("src/?.py", "src/[ab].py", True),
    ("{src,lib}/*.py", "lib/x*", True),
    ("src/{api,web}/**", "src/web/index.ts", True),
    ("**/*.ts", "src/**/api/*", True),
    ("src/**/test_*.py", "src/api/**/*_x.py", True),
    ("a/**/b/**/c", "a/b/c", True),
    ("a/**/b/**/c", "a/x/b/y/z/c", True),
    ("*/b", "a/*", True),
    # Literal directories claim what lies below them.
    ("src/api", "src/api/handlers.py", True),
    ("src/api", "src/*/x.py", True),
    ("src/api/", "src/api/deep/er/x", True),
    ("Makefile", "Makefile", True),
    ("src/api", "src/apis/x.py", False),
    ("src/*", "src/api/x.py", False),  # '*' stops at '/', and src/* has a wildcard
    ("{a,b*}", "a/x", True),  # the 'a' alternative claims below
    ("{a,b*}", "bb/x", False),
    # Segment counts.
    ("x/?", "x/??", False),
    ("x/*", "x/*/*", False),
    ("x/**", "x/*.py", True),
    ("x/**", "x", True),  # not 'x' itself ('x/**' needs a segment below), but 'x/a'
    ("x/**", "x*", False),
    ("x/**", "x/y", True),
    ("**", "a", True),
    ("**/**", "**", True),
    ("a/**/**", "a?", False),
    ("**/a/**", "a", True),  # via the claim rule on 'a': a/x
    ("**/a/**", "a/*.py", True),
    # Dotfiles: DOTGLOB lets wildcards match a leading dot.
    ("*", ".env", True),
    ("**/*", ".github/workflows/ci.yml", True),
    ("?", "[.]", False),  # '.' is not a valid path segment
    ("??", "[.][.]", False),
    ("a/?/b", "a/[.]/b", False),
    ("??", ".?", True),
    ("[.]*", "*", True),
    # Classes and negated classes.
    ("[!a]", "[a]", False),
    ("[!a]", "?", True),
    ("[a-c]x", "[c-e]?", True),
    ("[a-c]x", "[d-f]?", False),
    ("[[:digit:]]", "[!0-8]", True),
    ("[[:alpha:]]", "[0-9]", False),
    ("[^a]", "a", False),
    # Escapes are literal.
    ("a\\*", "a*", True),
    ("a\\*", "ab", False),
    ("\\[x\\]", "[[]x[]]", True),
    # Braces, nested and ranges.
    ("{a,{b,c}}/x", "c/*", True),
    ("file{1..3}.txt", "file2.txt", True),
    ("file{1..3}.txt", "file4.txt", False),
    ("src/{,lib/}x.py", "src/x.py", True),
    ("src/{,lib/}x.py", "src/lib/*", True),
    # Case-sensitive.
    ("README.md", "readme.md", False),
    # Disjoint.
    ("docs/*.md", "src/**", False),
    ("*.py", "**/*.md", False),
    ("*.py", "*.pyc", False),
    ("**/*.py", "**/*.pyc", False),
    ("a*b*c", "*d*", True),
    ("a*b", "*c", False),
]


@pytest.mark.parametrize(("a", "b", "expected"), HARD_CASES)
def test_hard_case_overlap_is_exact_symmetric_and_proved(a: str, b: str, expected: bool) -> None:
    a, b = normalise_pattern(a), normalise_pattern(b)
    example = overlap_example(a, b)
    assert (example is not None) == expected
    assert overlap_example(b, a) == example
    if example is not None:
        assert normalise_path(example) == example
        assert claims(a, example), (a, example)
        assert claims(b, example), (b, example)


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
    search = patterns_module._search

    def counted(*args: object) -> object:
        searches.append(args)
        return search(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(patterns_module, "_search", counted)
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
    memo = patterns_module._Memo(3)
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
        ("  src/api/  ", "src/api"),
        ("./src//api///x.py", "src/api/x.py"),
        ("././a", "a"),
        (".//a", "a"),
        ("src/**/", "src/**"),
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
        ("a\x00b", "NUL"),
        ("a" * 1025, "longer than 1024"),
        ("*" * 33, "more than 32 wildcards"),
        ("/".join(["**"] * 17), "more than 32 wildcards"),  # '**' counts twice
        ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", "more than 64 alternatives"),
        ("{1..1000}", "more than 64 alternatives"),
        ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}/" + "x" * 60, "longer than 4096 characters in all"),
        ("{/etc,a}", "absolute"),
        ("{..,a}/x", "'..'"),
    ],
)
def test_normalise_pattern_refuses_with_a_message_naming_the_pattern(
    raw: str, fragment: str
) -> None:
    with pytest.raises(PatternError) as info:
        normalise_pattern(raw)
    assert fragment in str(info.value)
    assert info.value.pattern == raw or info.value.pattern.startswith(raw.strip()[:40])
    assert isinstance(info.value, ValueError)


def test_limits_come_from_the_caller() -> None:
    tight = PatternLimits(max_length=10, max_wildcards=2, max_brace_expansion=2)
    assert normalise_pattern("{a,b}/*", tight) == "{a,b}/*"
    for raw in ("a" * 11, "*/*/*", "{a,b,c}"):
        with pytest.raises(PatternError):
            normalise_pattern(raw, tight)


def test_escaped_wildcards_do_not_count_against_the_limit() -> None:
    assert normalise_pattern("\\*" * 100, PatternLimits(max_wildcards=1))


def test_normalise_path_is_literal_and_checked() -> None:
    assert normalise_path("./src//[x].py") == "src/[x].py"
    for raw in ("", "/a", "a/../b", "a\x00", "b" * 2000):
        with pytest.raises(PatternError):
            normalise_path(raw)


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
