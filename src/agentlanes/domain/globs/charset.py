"""Sets of path characters as sorted, disjoint code-point intervals.

The glob engine reasons about character classes symbolically: a class such
as ``[!a-z]`` is a handful of intervals, never an enumeration of the
million-odd code points it admits. Every set here is already restricted to
the characters a path segment may hold: anything but ``/`` and NUL.
"""

from __future__ import annotations

from functools import lru_cache

CharSet = tuple[tuple[int, int], ...]
"""Sorted, disjoint, non-adjacent closed intervals of code points."""

_MAX = 0x10FFFF
SLASH = ord("/")
DOT = ord(".")

EMPTY: CharSet = ()
SEGMENT_CHARS: CharSet = ((1, SLASH - 1), (SLASH + 1, _MAX))
"""What ``?`` and ``*`` may consume: any code point except ``/`` and NUL."""

# Examples read better with ordinary characters, so a witness is picked from
# these first, in this order, before falling back to the lowest code point.
_PREFERRED = [ord(c) for c in "abcdefghijklmnopqrstuvwxyz0123456789_-ABCDEFGHIJKLMNOPQRSTUVWXYZ"]


def normalise(intervals: list[tuple[int, int]]) -> CharSet:
    """Sort and merge intervals, then clip them to the segment alphabet."""
    merged: list[list[int]] = []
    for lo, hi in sorted(i for i in intervals if i[0] <= i[1]):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return intersect(tuple((lo, hi) for lo, hi in merged), SEGMENT_CHARS)


def complement(cs: CharSet) -> CharSet:
    """Every segment character not in ``cs``."""
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in cs:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= _MAX:
        out.append((nxt, _MAX))
    return intersect(tuple(out), SEGMENT_CHARS)


def intersect(a: CharSet, b: CharSet) -> CharSet:
    """Characters in both sets."""
    if a is b:
        return a
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def without(cs: CharSet, code: int) -> CharSet:
    """``cs`` minus one character."""
    out: list[tuple[int, int]] = []
    for lo, hi in cs:
        if lo <= code <= hi:
            if lo < code:
                out.append((lo, code - 1))
            if code < hi:
                out.append((code + 1, hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def contains(cs: CharSet, code: int) -> bool:
    """Whether ``code`` is in the set."""
    return any(lo <= code <= hi for lo, hi in cs)


@lru_cache(maxsize=4096)
def pick(cs: CharSet) -> str:
    """A readable member of a non-empty set."""
    if contains(cs, 97):  # 'a', by far the usual answer
        return "a"
    for code in _PREFERRED:
        if contains(cs, code):
            return chr(code)
    for lo, hi in cs:
        for code in range(lo, min(hi, lo + 256) + 1):
            if chr(code).isprintable():
                return chr(code)
    return chr(cs[0][0])


def singleton(cs: CharSet) -> str | None:
    """The only member of the set, or None when it has more or none."""
    if len(cs) == 1 and cs[0][0] == cs[0][1]:
        return chr(cs[0][0])
    return None


def to_regex(cs: CharSet) -> str:
    """A regular-expression class matching exactly the set."""
    if not cs:
        return "(?!)"
    if len(cs) == 1 and cs[0][0] == cs[0][1]:
        return _escape(cs[0][0])
    if cs[-1][1] == _MAX:
        # Spell a set that runs to the last code point as the negation of what
        # it lacks: Python's regex compiler takes hundreds of milliseconds over
        # a class such as [\x01-.0-\U0010ffff], and no time over [^/\x00].
        lacking: list[tuple[int, int]] = []
        nxt = 0
        for lo, hi in cs:
            if lo > nxt:
                lacking.append((nxt, lo - 1))
            nxt = hi + 1
        return "[^" + _ranges(lacking) + "]"
    return "[" + _ranges(list(cs)) + "]"


def _ranges(intervals: list[tuple[int, int]]) -> str:
    parts = []
    for lo, hi in intervals:
        if lo == hi:
            parts.append(_escape(lo))
        else:
            parts.append(f"{_escape(lo)}-{_escape(hi)}")
    return "".join(parts)


def _escape(code: int) -> str:
    # Plain letters and digits as themselves: the regex parser reads long
    # escape sequences slowly, and compiling is part of every new pattern's cost.
    if code < 128 and chr(code).isalnum():
        return chr(code)
    return f"\\x{code:02x}" if code < 256 else f"\\U{code:08x}"
