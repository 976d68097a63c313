"""One path segment of a glob, and the intersection of two segments.

A segment (the text between two ``/``) is parsed by wcmatch itself: we ask
``wcmatch.fnmatch.translate`` for its regular expression and read that back
with the standard library's regex parser, so classes, negations, escapes and
POSIX classes mean exactly what wcmatch says they mean. What comes out is a
sequence of tokens, each either one character drawn from a :data:`CharSet`
or ``STAR`` (any run of segment characters).

Two segments intersect when some valid segment (non-empty, not ``.`` or
``..``) matches both. Glob segments are so regular that this needs no
automaton search:

* both fixed-length: compare position by position;
* both with a ``*``: the fixed head of each must agree, the fixed tail of
  each must agree, and everything between can be laid side by side for the
  stars to absorb;
* one fixed-length, one with stars: walk the fixed one character position by
  character position, carrying the set of positions the other could be at
  (a bit set), then walk back to spell a witness.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from re import _constants as sre_c  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

from wcmatch import fnmatch

from . import charset as cs
from .charset import CharSet

STAR = None
"""Token for ``*``: any run (possibly empty) of segment characters."""

Token = CharSet | None

_FNMATCH_FLAGS = fnmatch.DOTMATCH | fnmatch.FORCEUNIX
_INVALID_SEGMENTS = ("", ".", "..")


class SegmentSyntaxError(ValueError):
    """wcmatch produced something this engine does not model."""


@dataclass(frozen=True, eq=False)
class Segment:
    """A parsed glob segment. Equal (and hashed) by its source text."""

    source: str
    tokens: tuple[Token, ...]
    literal: str | None  # the one string it matches, when it has no wildcard
    empty: bool  # matches nothing at all (an empty class)
    head: str  # the characters every match starts with (fixed leading positions)
    tail: str  # the characters every match ends with (fixed trailing positions)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Matches exactly the words of this segment (compiled on first use)."""
        return re.compile(self.regex_body if self.tokens else "(?!)")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Segment) and other.source == self.source

    def __hash__(self) -> int:
        return hash(self.source)

    @property
    def has_star(self) -> bool:
        return STAR in self.tokens

    @property
    def regex_body(self) -> str:
        """This segment as a regex fragment that never crosses a ``/``."""
        if self.literal is not None:
            return re.escape(self.literal)
        return "".join("[^/\\x00]*" if t is STAR else cs.to_regex(t) for t in self.tokens)


_PLAIN = re.compile(r"[A-Za-z0-9._*?-]*")
"""Segments wcmatch reads character by character: letters, digits, '.', '_', '-', '*', '?'."""


@lru_cache(maxsize=8192)
def parse_segment(source: str) -> Segment:
    """Parse one segment (no ``/``) with wcmatch's own translation."""
    if _PLAIN.fullmatch(source):
        tokens = _plain_tokens(source)
        wildcard = "*" in source or "?" in source
    else:
        tokens = []
        wildcard = _walk(sre_parse.parse(_translate(source)), tokens)
    # Collapse runs of stars: ``**`` inside a segment is one ``*``.
    collapsed: list[Token] = []
    for tok in tokens:
        if tok is STAR and collapsed and collapsed[-1] is STAR:
            continue
        collapsed.append(tok)
    literal = None
    if not wildcard:
        literal = "".join(cs.singleton(t) or "" for t in collapsed if t is not STAR)
    empty = any(t is not STAR and not t for t in collapsed)
    head, tail = _fixed(collapsed), _fixed(collapsed[::-1])[::-1]
    return Segment(source, tuple(collapsed), literal, empty, head, tail)


def _translate(source: str) -> str:
    return fnmatch.translate(source, flags=_FNMATCH_FLAGS)[0][0]


def _plain_tokens(source: str) -> list[Token]:
    """Tokens of a plain segment without asking wcmatch (same result, a hundred times
    faster; a test checks the two agree): '*' is STAR, '?' any segment character,
    anything else itself."""
    return [STAR if c == "*" else cs.SEGMENT_CHARS if c == "?" else _char(c) for c in source]


@lru_cache(maxsize=256)
def _char(c: str) -> CharSet:
    return cs.normalise([(ord(c), ord(c))])


def _fixed(tokens: list[Token]) -> str:
    out = []
    for tok in tokens:
        char = None if tok is STAR else cs.singleton(tok)
        if char is None:
            break
        out.append(char)
    return "".join(out)


def may_intersect(a: Segment, b: Segment) -> bool:
    """A cheap necessary condition for :func:`intersect`: fixed heads and tails agree.

    Every word either matches starts with its ``head`` and ends with its
    ``tail``, so of two heads (tails) one must be a prefix (suffix) of the other.
    """
    ha, hb = a.head, b.head
    k = min(len(ha), len(hb))
    if ha[:k] != hb[:k]:
        return False
    ta, tb = a.tail, b.tail
    k = min(len(ta), len(tb))
    return k == 0 or ta[-k:] == tb[-k:]


# The regex parser's nodes: (opcode, argument) pairs, the argument's shape by the opcode
# (re._parser has no types).
_Nodes = Iterable[tuple[Any, Any]]


def _walk(nodes: _Nodes, out: list[Token]) -> bool:
    """Append tokens for a parsed regex; return whether it had a wildcard."""
    wildcard = False
    for op, arg in nodes:
        if op is sre_c.LITERAL:
            out.append(cs.normalise([(arg, arg)]))
        elif op is sre_c.NOT_LITERAL:
            out.append(cs.complement(cs.normalise([(arg, arg)])))
            wildcard = True
        elif op is sre_c.ANY:
            out.append(cs.SEGMENT_CHARS)
            wildcard = True
        elif op is sre_c.IN:
            out.append(_class(arg))
            wildcard = True
        elif op in (sre_c.MIN_REPEAT, sre_c.MAX_REPEAT, sre_c.POSSESSIVE_REPEAT):
            lo, hi, sub = arg
            if lo != 0 or hi != sre_c.MAXREPEAT or list(sub) != [(sre_c.ANY, None)]:
                raise SegmentSyntaxError(f"unexpected repeat {arg!r}")
            out.append(STAR)
            wildcard = True
        elif op is sre_c.SUBPATTERN:
            wildcard |= _walk(arg[-1], out)
        elif op is sre_c.ATOMIC_GROUP:
            wildcard |= _walk(arg, out)
        elif op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
            # Anchors, and wcmatch's guards against empty, '.' and '..'
            # segments: valid paths never hold those, and the search below
            # never produces them.
            continue
        else:
            raise SegmentSyntaxError(f"unexpected regex node {op}")
    return wildcard


def _class(items: _Nodes) -> CharSet:
    negate = False
    intervals: list[tuple[int, int]] = []
    for op, arg in items:
        if op is sre_c.NEGATE:
            negate = True
        elif op is sre_c.LITERAL:
            intervals.append((arg, arg))
        elif op is sre_c.RANGE:
            intervals.append(arg)
        else:
            raise SegmentSyntaxError(f"unexpected class item {op}")
    result = cs.normalise(intervals)
    return cs.complement(result) if negate else result


ANY_SEGMENT = parse_segment("*")


# --------------------------------------------------------------------------
# Intersection


def _valid(word: str) -> bool:
    return word not in _INVALID_SEGMENTS


@lru_cache(maxsize=16384)
def witness(seg: Segment) -> str | None:
    """A valid segment matched by ``seg``, or None."""
    return intersect(seg, ANY_SEGMENT)


@lru_cache(maxsize=65536)
def intersect(a: Segment, b: Segment) -> str | None:
    """A valid segment matched by both, or None. Symmetric in its verdict."""
    if a.empty or b.empty:
        return None
    if a.literal is not None:
        return a.literal if _valid(a.literal) and b.regex.fullmatch(a.literal) else None
    if b.literal is not None:
        return b.literal if _valid(b.literal) and a.regex.fullmatch(b.literal) else None
    a_star, b_star = a.has_star, b.has_star
    if a_star and b_star:
        return _both_starred(a.tokens, b.tokens)
    if a_star:
        return _fixed_against_starred(b.tokens, a.tokens)  # type: ignore[arg-type]
    if b_star:
        return _fixed_against_starred(a.tokens, b.tokens)  # type: ignore[arg-type]
    return _both_fixed(a.tokens, b.tokens)  # type: ignore[arg-type]


def _dot_free_variants(sets: list[CharSet]) -> list[list[CharSet]]:
    """Split a fixed-length word so that no variant can spell '.' or '..'."""
    n = len(sets)
    if n == 0:
        return []
    if n == 1:
        return [[cs.without(sets[0], cs.DOT)]]
    if n == 2:
        dot = cs.normalise([(cs.DOT, cs.DOT)])
        return [
            [cs.without(sets[0], cs.DOT), sets[1]],
            [cs.intersect(sets[0], dot), cs.without(sets[1], cs.DOT)],
        ]
    return [sets]


def _both_fixed(a: tuple[CharSet, ...], b: tuple[CharSet, ...]) -> str | None:
    if len(a) != len(b):
        return None
    sets = [cs.intersect(x, y) for x, y in zip(a, b, strict=True)]
    for variant in _dot_free_variants(sets):
        if all(variant):
            return "".join(cs.pick(s) for s in variant)
    return None


def _blocks(tokens: tuple[Token, ...]) -> list[list[CharSet]]:
    blocks: list[list[CharSet]] = [[]]
    for tok in tokens:
        if tok is STAR:
            blocks.append([])
        else:
            blocks[-1].append(tok)
    return blocks


def _merge(x: list[CharSet], y: list[CharSet]) -> list[CharSet] | None:
    """Overlay two fixed words aligned at their start; None if they clash."""
    out = []
    for i in range(max(len(x), len(y))):
        s = cs.intersect(x[i], y[i]) if i < len(x) and i < len(y) else (x if i < len(x) else y)[i]
        if not s:
            return None
        out.append(s)
    return out


def _both_starred(a: tuple[Token, ...], b: tuple[Token, ...]) -> str | None:
    ba, bb = _blocks(a), _blocks(b)
    head = _merge(ba[0], bb[0])
    tail = _merge(ba[-1][::-1], bb[-1][::-1])
    if head is None or tail is None:
        return None
    # Each side's inner blocks go one after the other; each side's stars
    # swallow the other side's blocks (and the filler below).
    middle = [s for blk in ba[1:-1] + bb[1:-1] for s in blk]
    word = "".join(cs.pick(s) for s in head)
    rest = "".join(cs.pick(s) for s in middle) + "".join(cs.pick(s) for s in tail[::-1])
    if not head or not _valid(word + rest):
        word += "a"  # readable examples: "a.ts" rather than ".ts"
    return word + rest


def _fixed_against_starred(fixed: tuple[CharSet, ...], starred: tuple[Token, ...]) -> str | None:
    for variant in _dot_free_variants(list(fixed)):
        if all(variant):
            found = _walk_fixed(variant, starred)
            if found is not None:
                return found
    return None


def _walk_fixed(fixed: list[CharSet], starred: tuple[Token, ...]) -> str | None:
    n = len(starred)
    stars = 0
    for i, tok in enumerate(starred):
        if tok is STAR:
            stars |= 1 << i

    def close(mask: int) -> int:
        return mask | ((mask & stars) << 1)

    levels = [close(1)]
    for q in fixed:
        reach = levels[-1]
        step = 0
        for i, tok in enumerate(starred):
            if tok is not STAR and (reach >> i) & 1 and cs.intersect(tok, q):
                step |= 1 << i
        reach = close((step << 1) | (reach & stars))
        if not reach:
            return None
        levels.append(reach)
    if not (levels[-1] >> n) & 1:
        return None
    # Walk back from the accepting position, spelling one character a level.
    pos = n
    chars: list[str] = []
    for t in range(len(fixed) - 1, -1, -1):
        before, after, q = levels[t], levels[t + 1], fixed[t]
        targets = [pos]
        if pos > 0 and starred[pos - 1] is STAR and (after >> (pos - 1)) & 1:
            targets.append(pos - 1)
        for target in targets:
            if target < n and starred[target] is STAR and (before >> target) & 1:
                chars.append(cs.pick(q))
                pos = target
                break
            prev = target - 1
            if prev >= 0 and starred[prev] is not STAR and (before >> prev) & 1:
                both = cs.intersect(starred[prev], q)  # type: ignore[arg-type]
                if both:
                    chars.append(cs.pick(both))
                    pos = prev
                    break
        else:  # pragma: no cover - the forward pass guarantees a predecessor
            raise AssertionError("no predecessor while spelling a witness")
    return "".join(reversed(chars))
