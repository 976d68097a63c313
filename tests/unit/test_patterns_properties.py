"""Property tests: the overlap engine against wcmatch's own ``globmatch``.

The oracle below is the SPEC claim rule written directly on wcmatch and
bracex, sharing no code with the engine: a path is claimed when
``globmatch`` says so, or when it lies below a path matched by a brace
alternative whose last segment has no wildcard.
"""

from __future__ import annotations

import itertools
import re

import bracex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from wcmatch import glob

from agentlanes.domain.conflicts import ConflictDetector, Scope
from agentlanes.domain.patterns import (
    PatternError,
    claims,
    compile_pattern,
    normalise_path,
    normalise_pattern,
    overlap_example,
)

FLAGS = glob.GLOBSTAR | glob.BRACE | glob.DOTGLOB | glob.FORCEUNIX
_UNESCAPED_WILDCARD = re.compile(r"(?<!\\)[*?\[]")


def oracle_claims(pattern: str, path: str) -> bool:
    if glob.globmatch(path, pattern, flags=FLAGS):
        return True
    segs = path.split("/")
    parents = ["/".join(segs[:k]) for k in range(1, len(segs))]
    for alt in bracex.expand(pattern, keep_escapes=True):
        alt = re.sub("/+", "/", alt)
        last = alt.split("/")[-1]
        if _UNESCAPED_WILDCARD.search(last) is None and any(
            glob.globmatch(p, alt, flags=FLAGS & ~glob.BRACE) for p in parents
        ):
            return True
    return False


# Small alphabets so that overlaps are common and near-misses are many.
ATOMS = ["a", "b", ".", "*", "?", "[ab]", "[!a]", "[.b]", "\\*", "{a,b}", "{a,*}", "{,b/}"]
segment = st.one_of(
    st.just("**"),
    st.lists(st.sampled_from(ATOMS), min_size=1, max_size=4).map("".join),
)
raw_pattern = st.lists(segment, min_size=1, max_size=4).map("/".join)


def _valid_pattern(raw: str) -> str | None:
    try:
        return normalise_pattern(raw)
    except PatternError:
        return None


pattern = raw_pattern.map(_valid_pattern).filter(lambda p: p is not None)

PATH_SEGMENTS = ["a", "b", "ab", ".a", "*", "a.b", "bb"]
UNIVERSE = [
    "/".join(parts)
    for depth in (1, 2, 3)
    for parts in itertools.product(PATH_SEGMENTS, repeat=depth)
] + ["/".join(parts) for parts in itertools.product(["a", "b"], repeat=4)]

path = st.lists(st.sampled_from([*PATH_SEGMENTS, "ba", ".", "x"]), min_size=1, max_size=5).map(
    "/".join
)

FAST = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)
SLOW = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


@FAST
@given(pattern, pattern)
def test_every_example_is_claimed_by_both_under_wcmatch(a: str, b: str) -> None:
    example = overlap_example(a, b)
    if example is not None:
        assert normalise_path(example) == example
        assert oracle_claims(a, example), (a, b, example)
        assert oracle_claims(b, example), (a, b, example)


@SLOW
@given(pattern, pattern)
def test_no_overlap_in_a_brute_force_universe_is_missed(a: str, b: str) -> None:
    common = next((p for p in UNIVERSE if oracle_claims(a, p) and oracle_claims(b, p)), None)
    if common is not None:
        assert overlap_example(a, b) is not None, (a, b, common)


@FAST
@given(pattern, pattern)
def test_verdict_does_not_depend_on_argument_order(a: str, b: str) -> None:
    assert (overlap_example(a, b) is None) == (overlap_example(b, a) is None)


@FAST
@given(pattern, path)
def test_claims_and_the_compiled_matcher_agree_with_wcmatch(p: str, raw: str) -> None:
    try:
        concrete = normalise_path(raw)
    except PatternError:
        assume(False)
        return
    expected = oracle_claims(p, concrete)
    assert claims(p, concrete) is expected
    assert compile_pattern(p).claims(concrete) is expected


@SLOW
@given(pattern, st.sampled_from(UNIVERSE))
def test_a_pattern_overlaps_each_path_it_claims(p: str, concrete: str) -> None:
    # A concrete path, escaped, is a pattern that claims it (and what is below it).
    as_pattern = _valid_pattern(concrete.replace("*", "\\*"))
    assume(as_pattern is not None)
    if oracle_claims(p, concrete):
        assert overlap_example(p, as_pattern) is not None


@SLOW
@given(
    st.lists(st.lists(pattern, min_size=1, max_size=3), min_size=1, max_size=6),
    st.lists(pattern, min_size=1, max_size=3),
    st.lists(st.sampled_from(UNIVERSE), max_size=4),
)
def test_detector_agrees_with_all_pairs(
    theirs: list[list[str]], mine: list[str], paths: list[str]
) -> None:
    scopes = [Scope(f"s{i}", f"agent{i}", None, tuple(ps)) for i, ps in enumerate(theirs)]
    detector = ConflictDetector(scopes)
    found = {c.session_id: c for c in detector.find(patterns=mine, paths=paths)}
    for s in scopes:
        pairs = {
            (m, t) for m in dict.fromkeys(mine) for t in s.patterns if overlap_example(m, t)
        } | {(p, t) for p in dict.fromkeys(paths) for t in s.patterns if oracle_claims(t, p)}
        if pairs:
            got = {(o.pattern, o.their_pattern) for o in found[s.session_id].overlapping_files}
            assert got == pairs
        else:
            assert s.session_id not in found
