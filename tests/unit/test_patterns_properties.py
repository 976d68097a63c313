"""Property tests: the overlap engine against wcmatch's own ``globmatch``.

The oracle below is the SPEC claim rule written directly on wcmatch and
bracex, sharing no code with the engine. For each brace alternative: a path
is claimed when ``globmatch`` says so (a trailing ``/`` set aside), or when it
lies below a path the alternative matches and the alternative ends with
``/`` (strict and wide readings), or its last segment has no wildcard (the
wide reading only: that literal may be a directory).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import bracex
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from wcmatch import glob

from agentlanes.domain.conflicts import ConflictDetector, Scope
from agentlanes.domain.globs import (
    Overlap,
    PatternError,
    claims,
    claims_for_certain,
    compile_pattern,
    compile_strict,
    normalise_path,
    normalise_pattern,
    overlap,
    overlap_example,
)
from agentlanes.domain.globs import segments as sg
from agentlanes.domain.globs.automaton import GLOBSTAR, Automaton
from agentlanes.domain.globs.compiler import _after_literal
from agentlanes.domain.globs.overlap import claims_strictly
from agentlanes.domain.globs.search import _search

FLAGS = glob.GLOBSTAR | glob.BRACE | glob.DOTGLOB | glob.FORCEUNIX
_UNESCAPED_WILDCARD = re.compile(r"(?<!\\)[*?\[]")


def _oracle_alternatives(pattern: str) -> list[str]:
    return [
        alt
        for alt in (re.sub("/+", "/", a) for a in bracex.expand(pattern, keep_escapes=True))
        if alt
    ]


def oracle_claims(
    pattern: str, path: str, *, wide: bool = True, directory: str | None = None
) -> bool:
    """SPEC's claim. ``wide``: a slash-less literal may be a directory; with
    ``directory``, only the literals matching it or one of its parents are."""
    segs = path.split("/")
    parents = ["/".join(segs[:k]) for k in range(1, len(segs))]
    for alt in _oracle_alternatives(pattern):
        body = alt.removesuffix("/")
        if glob.globmatch(path, body, flags=FLAGS & ~glob.BRACE):
            return True
        last = body.split("/")[-1]
        if alt.endswith("/"):
            below = parents
        elif wide and _UNESCAPED_WILDCARD.search(last) is None:
            below = parents
            if directory is not None:
                below = [p for p in parents if directory == p or directory.startswith(p + "/")]
        else:
            continue
        if any(glob.globmatch(p, body, flags=FLAGS & ~glob.BRACE) for p in below):
            return True
    return False


def oracle_verdict(a: str, b: str, universe: list[str]) -> str | None:
    """ "certain", "if_directory" or None, by brute force over ``universe``."""
    wide = None
    for u in universe:
        if oracle_claims(a, u, wide=False) and oracle_claims(b, u, wide=False):
            return "certain"
        if wide is None and oracle_claims(a, u) and oracle_claims(b, u):
            wide = "if_directory"
    return wide


def check_overlap_is_proved(a: str, b: str) -> Overlap | None:
    """The engine's answer for (a, b), each of its claims checked by the oracle."""
    found = overlap(a, b)
    assert overlap(b, a) == found
    if found is None:
        assert overlap_example(a, b) is None
        return None
    example = found.example
    assert normalise_path(example) == example
    if found.certain:
        assert found.if_directory is None
        assert oracle_claims(a, example, wide=False), (a, b, found)
        assert oracle_claims(b, example, wide=False), (a, b, found)
    else:
        d = found.if_directory
        assert d is not None and example.startswith(d + "/"), (a, b, found)
        assert oracle_claims(a, example, directory=d), (a, b, found)
        assert oracle_claims(b, example, directory=d), (a, b, found)
        # ... and no shorter prefix would do: the one named is what is needed.
        parent = d.rpartition("/")[0] or None
        assert not (
            oracle_claims(a, example, directory=parent, wide=parent is not None)
            and oracle_claims(b, example, directory=parent, wide=parent is not None)
        ), (a, b, found)
    return found


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
def test_every_example_is_claimed_by_both_under_its_reading(a: str, b: str) -> None:
    """A certain example is claimed by both under the strict reading; an uncertain
    one lies below its if_directory and is claimed by both once that (and no
    shorter prefix) is a directory."""
    check_overlap_is_proved(a, b)


@SLOW
@given(pattern, pattern)
def test_no_overlap_in_a_brute_force_universe_is_missed_or_understated(a: str, b: str) -> None:
    """Brute force over a universe of paths: a certain path found there makes
    the engine's overlap certain, a path both claim only if a literal is a
    directory makes it report one, and an overlap the engine calls uncertain
    has no certain path in the universe."""
    verdict = oracle_verdict(a, b, UNIVERSE)
    found = check_overlap_is_proved(a, b)
    if verdict == "certain":
        assert found is not None and found.certain, (a, b, found)
    elif verdict == "if_directory":
        assert found is not None, (a, b)
    if found is not None and not found.certain:
        assert verdict != "certain"


# A domain small enough for brute force to be complete: at most two segments a
# pattern (an optional trailing '/'), each from a few atoms. A shortest common
# path then has at most five segments (each side's segments, and one below a
# directory), and every segment two of these atoms share has a witness in WORDS.
SMALL_SEGMENTS = ["a", "b", "*", "?", "[ab]", "a*", "*b", "**", "{a,b}", "{a,b*}"]
WORDS = ["a", "b", "c", "ab"]
COMPLETE = [
    "/".join(parts) for depth in range(1, 6) for parts in itertools.product(WORDS, repeat=depth)
]
small_pattern = (
    st.tuples(
        st.lists(st.sampled_from(SMALL_SEGMENTS), min_size=1, max_size=2).map("/".join),
        st.booleans(),
    )
    .map(lambda t: t[0] + "/" if t[1] else t[0])
    .map(lambda raw: _valid_pattern(raw))
    .filter(lambda p: p is not None)
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(small_pattern, small_pattern)
def test_certain_uncertain_or_none_agrees_exactly_with_brute_force(a: str, b: str) -> None:
    """The oracle decides certain / only if a directory / none by brute force
    over every path of up to five segments of WORDS; the engine agrees exactly."""
    found = check_overlap_is_proved(a, b)
    engine = None if found is None else "certain" if found.certain else "if_directory"
    event(f"verdict: {engine}")  # --hypothesis-show-statistics shows the mix
    assert engine == oracle_verdict(a, b, COMPLETE), (a, b, found)


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
    for_certain = oracle_claims(p, concrete, wide=False)
    assert claims_for_certain(p, concrete) is for_certain
    assert compile_strict(p).claims(concrete) is for_certain
    assert claims_strictly(p, concrete) is for_certain  # the fast path, fixed tail first
    if for_certain:
        assert concrete.endswith(compile_strict(p).fixed_tail)


@SLOW
@given(pattern, st.sampled_from(UNIVERSE))
def test_a_pattern_overlaps_each_path_it_claims(p: str, concrete: str) -> None:
    # A concrete path, escaped, is a pattern that claims it (and what is below it).
    as_pattern = _valid_pattern(concrete.replace("*", "\\*"))
    assume(as_pattern is not None)
    if oracle_claims(p, concrete):
        assert overlap_example(p, as_pattern) is not None
    # The escaped path claims only itself for certain, so the overlap is certain
    # exactly when the pattern claims the path for certain.
    found = overlap(p, as_pattern)  # type: ignore[arg-type]
    assert (found is not None and found.certain) is oracle_claims(p, concrete, wide=False)


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
            (m, t, o.certain)
            for m in dict.fromkeys(mine)
            for t in s.patterns
            if (o := overlap(m, t)) is not None  # type: ignore[assignment]
        } | {
            # a staged path exists, so its parents are directories: always certain
            (p, t, True)
            for p in dict.fromkeys(paths)
            for t in s.patterns
            if oracle_claims(t, p)
        }
        if pairs:
            conflict = found[s.session_id]
            # (the examples may differ; each is checked in the test below)
            got = {(o.pattern, o.their_pattern, o.certain) for o in conflict.overlapping_files}
            assert got == pairs
            assert conflict.certain is any(p[2] for p in pairs)
        else:
            assert s.session_id not in found


@SLOW
@given(
    st.lists(st.lists(pattern, min_size=1, max_size=3), min_size=1, max_size=6),
    st.lists(st.lists(pattern, min_size=1, max_size=3), min_size=1, max_size=6),
    st.lists(pattern, min_size=1, max_size=3),
)
def test_kept_answers_follow_sessions_coming_and_going(
    first: list[list[str]], later: list[list[str]], mine: list[str]
) -> None:
    """A detector keeping every answer (keep_from=0), then changed, answers as a
    fresh one does: the same conflicts in the same order, with the same pairs in
    the same order, each example claimed by both."""
    area = ["x", None, None]  # every third session shares my area
    old = [Scope(f"s{i}", f"old{i}", area[i % 3], tuple(ps)) for i, ps in enumerate(first)]
    new = [Scope(f"t{i}", f"new{i}", area[i % 3], tuple(ps)) for i, ps in enumerate(later)]
    detector = ConflictDetector(old, keep_from=0)
    detector.find(patterns=mine)
    for i, joining in enumerate(new):
        detector.add(joining)
        if i < len(old):
            detector.remove(old[i].session_id)
    live = old[len(new) :] + new
    fresh = ConflictDetector(live)

    def answer(
        d: ConflictDetector, **query: Any
    ) -> list[tuple[str, bool, bool, list[tuple[str, str, bool]]]]:
        found = []
        for c in d.find(patterns=mine, **query):
            for o in c.overlapping_files:
                assert oracle_claims(o.pattern, o.example, wide=not o.certain), o
                assert oracle_claims(o.their_pattern, o.example, wide=not o.certain), o
            pairs = [(o.pattern, o.their_pattern, o.certain) for o in c.overlapping_files]
            found.append((c.session_id, c.overlapping_area, c.certain, pairs))
        return found

    for query in ({}, {"declared_area": "x", "exclude_session_id": live[-1].session_id}):
        assert answer(detector, **query) == answer(fresh, **query)


# --------------------------------------------------------------------------
# The fast paths and pre-filters never change a verdict.


def reference_overlap(a: str, b: str) -> bool:
    """The plain engine: every alternative of a against every one of b, breadth-first
    over (element of a, element of b, consumed a segment yet). No index, no
    prefix walk, no memo shared between shapes, no bit masks."""
    for alt_a in compile_pattern(a).alternatives:
        for alt_b in compile_pattern(b).alternatives:
            if _reference_pair(alt_a, alt_b):
                return True
    return False


def _reference_pair(a: tuple, b: tuple) -> bool:
    la, lb = len(a), len(b)
    seen = {(0, 0, False)}
    todo = [(0, 0, False)]
    while todo:
        i, j, nonempty = todo.pop()
        if i == la and j == lb:
            if nonempty:
                return True
            continue
        ea = a[i] if i < la else None
        eb = b[j] if j < lb else None
        moves = []
        if ea is GLOBSTAR:
            moves.append((i + 1, j, nonempty))
        if eb is GLOBSTAR:
            moves.append((i, j + 1, nonempty))
        if ea is GLOBSTAR and eb is GLOBSTAR:
            moves.append((i, j, True))
        if ea is GLOBSTAR and isinstance(eb, sg.Segment) and sg.witness(eb) is not None:
            moves.append((i, j + 1, True))
        if eb is GLOBSTAR and isinstance(ea, sg.Segment) and sg.witness(ea) is not None:
            moves.append((i + 1, j, True))
        if (
            isinstance(ea, sg.Segment)
            and isinstance(eb, sg.Segment)
            and sg.intersect(ea, eb) is not None
        ):
            moves.append((i + 1, j + 1, True))
        for nxt in moves:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


@FAST
@given(pattern, pattern)
def test_indexed_verdict_equals_the_plain_product_search(a: str, b: str) -> None:
    assert (overlap_example(a, b) is not None) == reference_overlap(a, b), (a, b)


LITERAL_SEGMENTS = ["a", "b", "ab", ".a", "a.b", "x", "", "."]
literal = (
    st.tuples(
        st.lists(st.sampled_from(LITERAL_SEGMENTS), min_size=1, max_size=4).map("/".join),
        st.booleans(),
    )
    # '{,a/}': a brace alternative with a trailing slash, a directory claim
    .map(lambda t: "{,%s/}" % t[0] if t[1] else t[0])  # noqa: UP031
    .map(_valid_pattern)
    .filter(lambda p: p is not None and compile_pattern(p).literal_run(compile_pattern(p).starts))
)


@FAST
@given(literal, pattern)
def test_a_literal_rest_is_decided_as_the_product_search_decides_it(x: str, y: str) -> None:
    """The shortcut for a literal pattern's rest finds what the search finds:
    the same verdict, words of the same length, claimed by both."""
    cx = compile_pattern(x)
    words = cx.literal_run(cx.starts)
    for entry in compile_pattern(y).entries:
        rest = entry.rest.automaton
        fast = _after_literal(words, rest)  # type: ignore[arg-type]
        slow = _search(cx, cx.starts, rest, False)
        assert (fast is None) == (slow is None), (x, y, fast, slow)
        if fast is not None:
            assert len(fast) == len(slow)  # type: ignore[arg-type]
            example = "/".join(entry.prefix + fast)
            assert oracle_claims(x, "/".join(fast)) and oracle_claims(y, example), (x, y, fast)


segment_text = st.lists(st.sampled_from(ATOMS[:-3]), min_size=1, max_size=5).map("".join)


@FAST
@given(segment_text, segment_text)
def test_head_and_tail_filter_never_rules_out_an_intersection(x: str, y: str) -> None:
    a, b = sg.parse_segment(x), sg.parse_segment(y)
    if sg.intersect(a, b) is not None:
        assert sg.may_intersect(a, b), (x, y)


@FAST
@given(st.lists(segment_text, min_size=1, max_size=8), segment_text)
def test_compatible_positions_are_exactly_the_intersecting_ones(texts: list[str], x: str) -> None:
    automaton = Automaton([(sg.parse_segment(t),) for t in texts])
    seg = sg.parse_segment(x)
    expected = 0
    for p, other in enumerate(automaton.segs):
        if other is not None and sg.intersect(seg, other) is not None:
            expected |= 1 << p
    assert automaton.compatible(seg) == expected


@FAST
@given(st.text(alphabet="ab.-_Z9*?", min_size=1, max_size=8))
def test_plain_segments_parse_as_wcmatch_parses_them(text: str) -> None:
    tokens: list = []
    wildcard = sg._walk(sg.sre_parse.parse(sg._translate(text)), tokens)
    collapsed: list = []
    for tok in tokens:
        if not (tok is sg.STAR and collapsed and collapsed[-1] is sg.STAR):
            collapsed.append(tok)
    parsed = sg.parse_segment(text)
    assert list(parsed.tokens) == collapsed
    assert (parsed.literal is None) == wildcard


@FAST
@given(pattern, st.lists(st.sampled_from(PATH_SEGMENTS), min_size=1, max_size=4))
def test_walking_a_prefix_keeps_exactly_the_paths_below_it(p: str, words: list[str]) -> None:
    # The trie walk rules out a subtree when no position survives its literal
    # prefix: then no claimed path may start with that prefix.
    cp = compile_pattern(p)
    mask = cp.mask_after(tuple(words), {})
    below = [u for u in UNIVERSE if u.split("/")[: len(words)] == words]
    if not mask:
        assert not any(oracle_claims(p, u) for u in below), (p, words)


@SLOW
@given(
    st.lists(st.lists(pattern, min_size=1, max_size=3), min_size=1, max_size=10),
    st.lists(pattern, min_size=1, max_size=3),
    st.lists(st.sampled_from(UNIVERSE), max_size=8),
)
def test_detector_examples_are_claimed_by_both(
    theirs: list[list[str]], mine: list[str], paths: list[str]
) -> None:
    assume(not set(mine) & set(paths))  # tell a pattern's overlap from a path's
    scopes = [Scope(f"s{i}", f"agent{i}", None, tuple(ps)) for i, ps in enumerate(theirs)]
    detector = ConflictDetector(scopes)
    seen = set()
    for conflict in detector.find(patterns=mine, paths=paths):
        for o in conflict.overlapping_files:
            assert (conflict.session_id, o.pattern, o.their_pattern) not in seen
            seen.add((conflict.session_id, o.pattern, o.their_pattern))
            if o.pattern in paths:
                assert o.example == o.pattern and o.certain
                assert oracle_claims(o.their_pattern, o.example), o
            elif o.certain:
                assert oracle_claims(o.their_pattern, o.example, wide=False), o
                assert oracle_claims(o.pattern, o.example, wide=False), o
            else:
                d = o.if_directory
                assert d is not None and o.example.startswith(d + "/"), o
                assert oracle_claims(o.their_pattern, o.example, directory=d), o
                assert oracle_claims(o.pattern, o.example, directory=d), o
    expected = {
        (s.session_id, m, t)
        for s in scopes
        for m in mine
        for t in s.patterns
        if reference_overlap(m, t)
    } | {
        (s.session_id, u, t)
        for s in scopes
        for u in paths
        for t in s.patterns
        if oracle_claims(t, u)
    }
    assert seen == expected
