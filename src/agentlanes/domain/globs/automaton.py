"""The automaton: each brace alternative a list of elements (a parsed segment, or
``GLOBSTAR``), all alternatives of a pattern side by side, stepped over path segments
with sets of positions held as int bit masks."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from enum import Enum
from typing import Final

from . import segments as sg
from .segments import Segment


class _GlobStar(Enum):
    """A whole ``**`` segment: zero or more whole path segments. An enum member, so that
    ``el is GLOBSTAR`` tells the type checker what ``el`` is otherwise (a segment)."""

    GLOBSTAR = "**"

    def __repr__(self) -> str:
        return "GLOBSTAR"


GLOBSTAR: Final = _GlobStar.GLOBSTAR
Element = Segment | _GlobStar
Alternative = tuple[Element, ...]


# --------------------------------------------------------------------------
# Compilation

_GLOB, _SEG, _END = 0, 1, 2  # kinds of automaton positions


def _mask(positions: list[int]) -> int:
    """The bit mask of these positions, in linear time (``|=`` bit by bit is quadratic)."""
    if not positions:
        return 0
    bits = bytearray(b"0" * (max(positions) + 1))
    for p in positions:
        bits[p] = 49  # '1'
    return int(bits[::-1].decode(), 2)


class _Affixes:
    """Positions by a fixed affix (a segment's head, or its tail reversed)."""

    def __init__(self, by_affix: dict[str, list[int]]) -> None:
        self.masks = {affix: _mask(ps) for affix, ps in by_affix.items()}
        self.free = self.masks.pop("", 0)
        self.sorted = sorted(self.masks)

    def agreeing(self, affix: str) -> int:
        """Positions whose affix is a prefix of ``affix`` or has it as a prefix."""
        found = self.free
        masks = self.masks
        for k in range(1, len(affix)):
            found |= masks.get(affix[:k], 0)
        n = bisect_left(self.sorted, affix)
        while n < len(self.sorted) and self.sorted[n].startswith(affix):
            found |= masks[self.sorted[n]]
            n += 1
        return found


class Automaton:
    """Alternatives side by side as one automaton over path segments.

    Position ``p`` (bit ``p`` of a mask) holds an element of one alternative:
    ``kinds[p]`` is ``_GLOB``, ``_SEG`` (``segs[p]``), or ``_END`` (that
    alternative is complete). A set of positions is an int, so a whole brace
    expansion steps over a segment in one pass, never as a product.
    """

    def __init__(self, alternatives: Iterable[Alternative]) -> None:
        kinds: list[int] = []
        segs: list[Segment | None] = []
        starts: list[int] = []
        globstars: list[int] = []
        ends: list[int] = []
        witnessed: list[int] = []
        by_segment: dict[Segment, list[int]] = {}
        for alt in alternatives:
            starts.append(len(kinds))
            for el in alt:
                if el is GLOBSTAR:
                    globstars.append(len(kinds))
                    kinds.append(_GLOB)
                    segs.append(None)
                else:
                    by_segment.setdefault(el, []).append(len(kinds))
                    if sg.witness(el) is not None:
                        witnessed.append(len(kinds))
                    kinds.append(_SEG)
                    segs.append(el)
            ends.append(len(kinds))
            kinds.append(_END)
            segs.append(None)
        self.kinds = tuple(kinds)
        self.segs = tuple(segs)
        self.literals = literals = tuple(s.literal if s is not None else None for s in segs)
        self.globstars = _mask(globstars)
        self.ends = _mask(ends)
        # Ends right after a literal segment: in a strictly compiled pattern, where
        # an alternative ending in a slash-less literal matches (maybe a directory).
        self.literal_ends = _mask(
            [e for e in ends if e and kinds[e - 1] == _SEG and literals[e - 1] is not None]
        )
        self.witnessed = _mask(witnessed)  # segment positions that accept some valid word
        self.by_segment = {seg: _mask(ps) for seg, ps in by_segment.items()}
        self.segments = _mask([p for ps in by_segment.values() for p in ps])
        self.by_literal: dict[str, int] = {}  # positions of literal segments, by their word
        by_head: dict[str, list[int]] = {}
        by_tail: dict[str, list[int]] = {}
        wild_segments: list[int] = []
        for seg, ps in by_segment.items():
            if seg.literal is not None:
                # `a` and `[a]` are different segments with the same one word: merge them.
                word = seg.literal
                self.by_literal[word] = self.by_literal.get(word, 0) | self.by_segment[seg]
            else:
                wild_segments.extend(ps)
            by_head.setdefault(seg.head, []).extend(ps)
            by_tail.setdefault(seg.tail[::-1], []).extend(ps)
        self.wild_segments = _mask(wild_segments)
        self.wild = self.wild_segments | self.globstars  # positions reading more than one word
        self._heads = _Affixes(by_head)
        self._tails = _Affixes(by_tail)
        self.starts = self.closure(_mask(starts))  # before any segment is read
        self._runs: dict[int, tuple[str, ...] | None] = {}
        self._completions: dict[int, tuple[str, ...] | None] = {}

    def compatible(self, seg: Segment) -> int:
        """Segment positions whose segment shares a valid word with ``seg``."""
        # Fixed heads must agree (one a prefix of the other), fixed tails too:
        # an index of both rules out most positions before any pair is tried.
        candidates = self._heads.agreeing(seg.head) & self._tails.agreeing(seg.tail[::-1])
        ok = 0
        checked: set[Segment] = set()
        segs = self.segs
        while candidates:
            low = candidates & -candidates
            candidates ^= low
            other = segs[low.bit_length() - 1]
            if other in checked:
                continue
            checked.add(other)  # type: ignore[arg-type]
            if sg.may_intersect(seg, other) and sg.intersect(seg, other) is not None:  # type: ignore[arg-type]
                ok |= self.by_segment[other]  # type: ignore[index]
        return ok

    def closure(self, mask: int) -> int:
        """``mask`` plus every position reached by letting a GLOBSTAR match nothing."""
        while True:
            grown = mask | ((mask & self.globstars) << 1)
            if grown == mask:
                return mask
            mask = grown

    def advance(self, mask: int, word: str) -> int:
        """Positions after reading one valid path segment ``word`` from ``mask``."""
        # GLOBSTARs stay, literal segments equal to the word step (both as
        # whole masks); only wildcard segments are matched one by one.
        out = (mask & self.globstars) | ((mask & self.by_literal.get(word, 0)) << 1)
        m = mask & self.wild_segments
        segs = self.segs
        while m:
            low = m & -m
            m ^= low
            if segs[low.bit_length() - 1].regex.fullmatch(word):  # type: ignore[union-attr]
                out |= low << 1
        return self.closure(out) if out else 0

    def accepts(self, mask: int, words: tuple[str, ...]) -> bool:
        """Whether reading ``words`` from ``mask`` can complete an alternative."""
        for word in words:
            mask = self.advance(mask, word)
            if not mask:
                return False
        return bool(mask & self.ends)

    def literal_run(self, mask: int) -> tuple[str, ...] | None:
        """The words, when ``mask`` is what is left of a literal pattern: one
        position followed by valid literal segments only, then a GLOBSTAR (the
        claim rule's "and everything below") and the end. Else None. Memoised."""
        if mask in self._runs:
            return self._runs[mask]
        kinds, literals, valid = self.kinds, self.literals, self.witnessed
        p = (mask & -mask).bit_length() - 1
        words: list[str] = []
        # Only valid words: an empty or '.' segment matches no path (the search decides those).
        while kinds[p] == _SEG and (word := literals[p]) is not None and valid >> p & 1:
            words.append(word)
            p += 1
        run: tuple[str, ...] | None = None
        if kinds[p] == _GLOB and kinds[p + 1] == _END:
            alone = mask == (mask & -mask) if words else mask == self.closure(1 << p)
            if alone:
                run = tuple(words)
        self._runs[mask] = run
        return run

    def completion(self, mask: int) -> tuple[str, ...] | None:
        """Fewest words leading from ``mask`` to the end, or None. Memoised.

        Each segment is read as its witness and each GLOBSTAR matches
        nothing: from one position, the shortest way to the end of its
        alternative reads every segment up to that end once.
        """
        if mask in self._completions:
            return self._completions[mask]
        best: tuple[str, ...] | None = () if mask & self.ends else None
        m = mask if best is None else 0
        while m:
            low = m & -m
            m ^= low
            p = low.bit_length() - 1
            words: list[str] = []
            while self.kinds[p] != _END:
                if self.kinds[p] == _SEG:
                    word = sg.witness(self.segs[p])
                    if word is None:
                        break  # this alternative cannot complete
                    words.append(word)
                p += 1
            else:
                if best is None or len(words) < len(best):
                    best = tuple(words)
        self._completions[mask] = best
        return best

    def next_literals(self, mask: int) -> tuple[str, ...] | None:
        """The only words that can be read from ``mask``, or None when a wildcard reads any."""
        if mask & self.wild:
            return None
        out = []
        m = mask & ~self.ends
        while m:
            low = m & -m
            m ^= low
            out.append(self.literals[low.bit_length() - 1])
        return tuple(out)  # type: ignore[arg-type]
