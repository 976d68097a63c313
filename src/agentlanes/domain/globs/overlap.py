"""Exact overlap of two patterns, for certain or only if a directory (SPEC "File
patterns"), with an example path; the memoised search it runs on the automata."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from . import segments as sg
from .claims import claims, claims_for_certain
from .compiler import (
    _RESTS,
    CompiledPattern,
    Entry,
    compile_pattern,
    compile_strict,
    is_literal,
    names_maybe_directory,
)
from .search import _LEAD_MEMO, _REST_MEMO

# --------------------------------------------------------------------------
# Overlap
#
# Two patterns a and b are decided by walking a's automaton over each literal
# prefix of b (any common path must start with it), then searching a (from
# the positions reached) against what follows that prefix in b. What follows
# is one of few shapes (``**``, ``*/**``, ``*.py``, ``**/*.py`` …), so those
# verdicts are memoised by (a, positions, shape) and shared by every live
# pattern of the same shape.


class Overlap(NamedTuple):
    """How two patterns overlap (SPEC "File patterns").

    ``certain``: ``example`` is claimed by both without reading any slash-less
    literal as a directory. Otherwise ``example`` is claimed by both only if
    ``if_directory`` (a prefix of it) is a directory.
    """

    example: str
    certain: bool
    if_directory: str | None


def overlap(a: str, b: str) -> Overlap | None:
    """Whether two normalised patterns overlap for certain, only if a path is a
    directory, or not at all (None).

    Both decisions are exact, and a certain overlap is never reported as
    uncertain. The verdict and the example do not depend on argument order.
    Memoised (two string verdicts per pair).
    """
    example = _overlap(a + "\x00" + b if a <= b else b + "\x00" + a)
    if example is None:
        return None
    sure = certain_example(a, b, example)
    if sure is not None:
        return Overlap(sure, True, None)
    return Overlap(example, False, directory_needed(a, b, example))


def certain_example(a: str, b: str, example: str) -> str | None:
    """A path both claim for certain, or None; given that they overlap (under the
    wide reading) at ``example``. Symmetric. Cheap where it can be:

    - when neither pattern has a brace alternative ending in a slash-less
      literal, both read the same either way: ``example`` is certain;
    - a literal pattern (``package.json``) claims only its own path for
      certain: one read of the other's strict automaton decides;
    - else the memoised strict pair verdict.
    """
    if not (names_maybe_directory(a) or names_maybe_directory(b)):
        return example
    if is_literal(b):
        return b if claims_strictly(a, b) else None
    if is_literal(a):
        return a if claims_strictly(b, a) else None
    return _certain_overlap(a + "\x00" + b if a <= b else b + "\x00" + a)


def overlap_example(a: str, b: str) -> str | None:
    """A path claimed by both normalised patterns under the wide reading (a
    slash-less literal may be a directory), or None when there is none.

    Exact: None means no valid relative path is claimed by both, even if
    every such literal were a directory. The verdict and the example do not
    depend on argument order. Memoised. :func:`overlap` says whether it is certain.
    """
    return _overlap(a + "\x00" + b if a <= b else b + "\x00" + a)


def certain_overlap_example(a: str, b: str) -> str | None:
    """A path both normalised patterns claim for certain (strict reading), or None. Exact."""
    return _certain_overlap(a + "\x00" + b if a <= b else b + "\x00" + a)


def directory_needed(a: str, b: str, example: str) -> str | None:
    """The prefix of ``example`` that must be a directory for both patterns to claim
    it: None when both claim it for certain.

    Each side needs the shortest of its matches that ``example`` lies below (a
    longer one being a directory makes the shorter one a directory too); the
    pair needs the longer of the two sides' needs.
    """
    return leading(example, max(needs_directory(a, example), needs_directory(b, example)))


def leading(path: str, k: int) -> str | None:
    """The first ``k`` segments of ``path``; None for none."""
    return "/".join(path.split("/")[:k]) if k else None


def needs_directory(pattern: str, path: str) -> int:
    """0 when ``pattern`` claims ``path`` for certain; else the number of leading
    segments of ``path`` that must name a directory for it to claim ``path``
    (the fewest: a longer prefix being a directory makes a shorter one one too).
    Memoised. ValueError when it does not claim ``path`` even so."""
    if is_literal(pattern):  # claims itself for certain, and below only as a directory
        return 0 if path == pattern else pattern.count("/") + 1
    if not names_maybe_directory(pattern):
        return 0  # reads the same widely and strictly: what it claims, it claims for certain
    return _needs(pattern + "\x00" + path)


@lru_cache(maxsize=65536)
def _needs(key: str) -> int:
    pattern, _, path = key.partition("\x00")
    cp = compile_strict(pattern)
    words = path.split("/")
    mask = cp.starts
    first = 0  # the fewest leading words matched by an alternative ending in a literal
    for k, word in enumerate(words, 1):
        mask = cp.advance(mask, word)
        if not mask:
            break
        if not first and k < len(words) and mask & cp.literal_ends:
            first = k
    if mask & cp.ends:
        return 0
    if first:
        return first
    raise ValueError(f"{pattern!r} does not claim {path!r}")


def claims_strictly(pattern: str, path: str) -> bool:
    """:func:`claims_for_certain` by the compiled pattern (fast; a normalised path)."""
    if is_literal(pattern):
        return path == pattern
    cp = compile_strict(pattern)
    if not path.endswith(cp.fixed_tail):
        return False
    return cp.accepts(cp.starts, tuple(path.split("/")))


@lru_cache(maxsize=262144)
def _certain_overlap(pair: str) -> str | None:
    """:func:`certain_overlap_example` of the patterns in ``pair`` ('a NUL b', a <= b)."""
    a, _, b = pair.partition("\x00")
    return _decide(compile_strict(a), compile_strict(b))


@lru_cache(maxsize=262144)
def _overlap(pair: str) -> str | None:
    """:func:`overlap_example` of the two patterns in ``pair`` ('a NUL b', a <= b).

    One string, not two arguments: the cache then keys on the string itself,
    not on a tuple made per call. A tuple stored in the cache would be one
    more object for the garbage collector's young passes to walk, and a
    server replaces its cached verdicts all the time once the cache is full
    (docs/operations.md).
    """
    a, _, b = pair.partition("\x00")
    return _decide(compile_pattern(a), compile_pattern(b))


def _decide(pa: CompiledPattern, pb: CompiledPattern) -> str | None:
    """A path both compiled patterns claim (under the reading they were compiled
    for), or None."""
    n = min(len(pa.literal_prefix), len(pb.literal_prefix))
    if pa.literal_prefix[:n] != pb.literal_prefix[:n]:
        return None
    # Entries of b followed by the same rest are searched once, from the
    # union of the positions a reached over their prefixes: a accepts some
    # words from a union exactly when it does so from one of its parts.
    masks: dict[tuple[str, ...], int] = {}
    by_rest: dict[tuple[str, bool], list[tuple[Entry, int]]] = {}
    for entry in pb.entries:
        mask = pa.mask_after(entry.prefix, masks)
        if mask:
            by_rest.setdefault((entry.rest.key, bool(entry.prefix)), []).append((entry, mask))
    for (_, nonempty), found in by_rest.items():
        union = 0
        for _, mask in found:
            union |= mask
        words = pa.rest_words(union, nonempty, found[0][0].rest)
        if words is None:
            continue
        for entry, mask in found:
            if len(found) == 1 or pa.accepts(mask, words):
                return "/".join(entry.prefix + words)
        raise AssertionError("no prefix accepts the words found")  # pragma: no cover
    return None


def clear_verdict_caches() -> None:
    """Forget every memoised verdict, keeping compiled patterns (as a server compiles
    a pattern when it normalises it)."""
    _overlap.cache_clear()
    _certain_overlap.cache_clear()
    _needs.cache_clear()
    _REST_MEMO.clear()
    _LEAD_MEMO.clear()
    sg.intersect.cache_clear()
    sg.witness.cache_clear()


def clear_caches() -> None:
    """Empty every module-level cache (benchmarks measure cold costs with it)."""
    clear_verdict_caches()
    _RESTS.clear()
    for fn in (
        compile_pattern,
        compile_strict,
        claims,
        claims_for_certain,
        is_literal,
        names_maybe_directory,
        sg.parse_segment,
    ):
        fn.cache_clear()
