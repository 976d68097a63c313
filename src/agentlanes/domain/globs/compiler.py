"""Compiling a pattern: its brace alternatives as one automaton (``CompiledPattern``),
wide (a slash-less literal may be a directory) or strict, with the trie entries the
conflict detector files it under and the shared rests that let verdicts be memoised."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import cached_property, lru_cache
from itertools import count
from typing import Final

from cachetools import LRUCache

from . import segments as sg
from .automaton import _END, _GLOB, _SEG, GLOBSTAR, Alternative, Automaton, Element
from .braces import _EXPANSION_CAP, _expand
from .claims import _last_segment_is_literal
from .search import _LEAD_MEMO, _REST_MEMO, _SERIAL_BITS, _search


@dataclass(frozen=True, eq=False)
class Rest:
    """What follows one literal prefix in some of a pattern's brace alternatives.

    ``key`` names the elements (equal keys, equal rests), so a verdict on a
    rest is shared by every pattern of the same shape (``**``, ``*/**``,
    ``*.py``, ``**/test_*.py`` …).
    """

    key: str
    alternatives: tuple[Alternative, ...]
    serial: int  # unique per Rest made, never reused (names it in memo keys)

    @cached_property
    def automaton(self) -> Automaton:
        return Automaton(self.alternatives)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Matches "/" + the segments after the prefix, for the paths claimed."""
        return _regex(self.alternatives)

    @cached_property
    def extension(self) -> str | None:
        """The extension (after the last '.') of every path matched, if fixed.

        Known when each alternative ends with a segment (not ``**``) whose
        fixed tail holds a dot, as ``*.py``: that segment is the path's last.
        """
        found = {_extension(alt[-1]) for alt in self.alternatives}
        return found.pop() if len(found) == 1 else None


def _extension(last: Element) -> str | None:
    if last is GLOBSTAR or "." not in last.tail:
        return None
    return last.tail.rpartition(".")[2]


@dataclass(frozen=True, eq=False)
class Entry:
    """The brace alternatives that share one literal prefix, and what follows it.

    Any path those alternatives match starts with ``prefix``; ``index`` is
    the first such alternative's place in the pattern.
    """

    prefix: tuple[str, ...]
    rest: Rest
    index: int


def _key(alt: Alternative) -> str:
    return "/".join("**" if el is GLOBSTAR else el.source for el in alt)


class CompiledPattern(Automaton):
    """A pattern as alternatives of elements, one automaton over all of them, and a regex."""

    def __init__(
        self, source: str, alternatives: tuple[Alternative, ...], *, name: str | None = None
    ) -> None:
        super().__init__(alternatives)
        self.source = source
        self.name = source if name is None else name  # names this reading in memo keys
        self._shapes: dict[int, str | tuple[str, int]] = {}
        self.alternatives = alternatives
        # Leading literal segments common to all alternatives.
        self.literal_prefix = _common_literal_prefix(alternatives)
        grouped: dict[tuple[str, ...], list[tuple[int, Alternative]]] = {}
        for index, alt in enumerate(alternatives):
            prefix = _common_literal_prefix((alt,))
            grouped.setdefault(prefix, []).append((index, alt[len(prefix) :]))
        self.entries = tuple(
            Entry(
                prefix,
                shared_rest(tuple(rest for _, rest in items)),
                items[0][0],
            )
            for prefix, items in grouped.items()
        )

    def shape(self, low: int) -> str | tuple[str, int]:
        """Names the positions from ``low`` on (kinds and segments): two patterns
        with equal shapes from their lowest live positions read the same
        words from there. Memoised.

        Past :data:`_SHAPE_CHARS` characters the name is (source, low) instead,
        which no other pattern shares: a long pattern read at many depths
        would otherwise keep a long name per depth.
        """
        found = self._shapes.get(low)
        if found is None:
            # Segments hold neither '/' nor NUL, and '**' is always a GLOBSTAR.
            parts: list[str] = []
            size = 0
            for kind, seg in zip(self.kinds[low:], self.segs[low:], strict=True):
                part = "**" if kind == _GLOB else "\x00" if kind == _END else seg.source  # type: ignore[union-attr]
                size += len(part) + 1
                if size > _SHAPE_CHARS:
                    found = (self.name, low)
                    break
                parts.append(part)
            else:
                found = "/".join(parts)
            self._shapes[low] = found
        return found

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Matches "/" + path for exactly the paths the pattern claims (built on first use)."""
        return _regex(self.alternatives)

    @cached_property
    def fixed_tail(self) -> str:
        """The characters every path this pattern matches ends with ('.md' for
        '**/*.md'); '' when an alternative ends with '**'. A cheap refusal: a path
        without it is not matched."""
        tails: list[str] = []
        for alt in self.alternatives:
            last = alt[-1]
            if last is GLOBSTAR:
                return ""
            tails.append(last.tail)
        shortest = min(tails, key=len)
        n = len(shortest)
        while n and not all(t.endswith(shortest[len(shortest) - n :]) for t in tails):
            n -= 1
        return shortest[len(shortest) - n :] if n else ""

    def claims(self, path: str) -> bool:
        """Same verdict as :func:`claims` for a normalised path, much faster."""
        return self.regex.fullmatch("/" + path) is not None

    def mask_after(self, words: tuple[str, ...], memo: dict[tuple[str, ...], int]) -> int:
        """Positions after reading ``words`` from the start; ``memo`` shares common prefixes."""
        mask = memo.get(words)
        if mask is not None:
            return mask
        # Entries share short prefixes; only those are kept (keys of every
        # length would cost quadratic time on a 500-segment prefix).
        k = min(len(words), _SHARED_PREFIX)
        while k and words[:k] not in memo:
            k -= 1
        mask = memo[words[:k]] if k else self.starts
        steps: dict[tuple[int, str], int] = {}  # long repetitive prefixes reach a fixed point
        for n in range(k, len(words)):
            if mask:
                at = (mask, words[n])
                after = steps.get(at)
                if after is None:
                    after = steps[at] = self.advance(mask, words[n])
                mask = after
            if n < _SHARED_PREFIX:
                memo[words[: n + 1]] = mask
        memo[words] = mask
        return mask

    def rest_words(self, mask: int, nonempty: bool, rest: Rest) -> tuple[str, ...] | None:
        """Segments that this pattern accepts from ``mask`` and ``rest`` accepts (memoised).

        None when there are none; when ``nonempty`` is False (nothing read
        yet) the answer is never the empty sequence.
        """
        if not mask:
            return None
        # Keyed by what is left of this pattern, not by which pattern it is:
        # 'src/*.py' and 'web/*.py' share their verdicts below their directories.
        low = (mask & -mask).bit_length() - 1
        table = _REST_MEMO.table(self.shape(low))
        key = ((mask >> low) << 1 | nonempty) << _SERIAL_BITS | rest.serial
        found = table.get(key, _MISSING)
        if found is _MISSING:
            words = self.literal_run(mask)
            if words is not None and (words or nonempty):
                found = _after_literal(words, rest.automaton)
            else:
                found = self._after_lead(mask, nonempty, rest)
            _REST_MEMO.store(table, key, found)
        return found

    def literal_lead(self, mask: int) -> tuple[tuple[str, ...], int]:
        """The words ``mask`` must read first (while it is one literal position),
        and the positions after them."""
        kinds, literals, valid = self.kinds, self.literals, self.witnessed
        words: list[str] = []
        while mask == mask & -mask:
            p = mask.bit_length() - 1
            word = literals[p]
            if kinds[p] != _SEG or word is None or not valid >> p & 1:
                break
            words.append(word)
            mask = self.closure(mask << 1)
        return tuple(words), mask

    def _after_lead(self, mask: int, nonempty: bool, rest: Rest) -> tuple[str, ...] | None:
        """:meth:`rest_words` by search: the words this pattern must read first
        (a literal lead, as ``src/api`` in ``src/api/**/*.py``) step ``rest`` on
        directly, and only what follows is searched, memoised by its shape and
        where ``rest`` stands, so patterns alike after their literal segments
        share it."""
        lead, after = self.literal_lead(mask)
        y = rest.automaton
        if not lead:
            return _search(self, mask, y, nonempty)
        ymask = y.starts
        for word in lead:
            ymask = y.advance(ymask, word)
            if not ymask:
                return None
        low = (after & -after).bit_length() - 1
        table = _LEAD_MEMO.table(self.shape(low))
        # ymask < 2 ** len(y.kinds), and y is the rest's own automaton.
        key = ((after >> low) << len(y.kinds) | ymask) << _SERIAL_BITS | rest.serial
        found = table.get(key, _MISSING)
        if found is _MISSING:
            found = _search(self, after, y, True, ymask)
            _LEAD_MEMO.store(table, key, found)
        return None if found is None else lead + found


def _after_literal(words: tuple[str, ...], y: Automaton) -> tuple[str, ...] | None:
    """What :func:`_search` finds for a literal pattern's rest (``words``, then
    anything below them) against ``y``, without the product search.

    A common path must start with ``words`` (any shorter one is not the
    literal's), so the shortest is ``words`` and the fewest words ``y``
    needs after them to reach its end.
    """
    mask = y.starts
    for word in words:
        mask = y.advance(mask, word)
        if not mask:
            return None
    tail = y.completion(mask)
    return None if tail is None else words + tail


class _Missing(Enum):
    """Not in the memo (an enum member, so that ``is _MISSING`` narrows the type)."""

    MISSING = 0


_MISSING: Final = _Missing.MISSING
_SHARED_PREFIX = 16
_SHAPE_CHARS = 128
# Rests kept (one object per key); the least recently used go first.
RESTS_KEPT = 16384
_RESTS: LRUCache[str, Rest] = LRUCache(maxsize=RESTS_KEPT)
_SERIALS = count()


def shared_rest(alternatives: tuple[Alternative, ...]) -> Rest:
    """The shared Rest for these elements (one object per key, bounded)."""
    # NUL separates alternatives: no pattern holds one ('|' is a literal character).
    key = "\x00".join(_key(alt) for alt in alternatives)
    rest = _RESTS.get(key)
    if rest is None:
        rest = _RESTS[key] = Rest(key, alternatives, next(_SERIALS))
    return rest


@lru_cache(maxsize=8192)
def compile_pattern(pattern: str) -> CompiledPattern:
    """Compile a normalised pattern under the wide reading (cached): a literal last
    segment also claims everything below what it matches, as if it were a
    directory. Limits were checked when normalising."""
    alternatives = tuple(
        _compile_alternative(alt, strict=False) for alt in _expand(pattern, _EXPANSION_CAP)
    )
    return CompiledPattern(pattern, alternatives)


@lru_cache(maxsize=8192)
def compile_strict(pattern: str) -> CompiledPattern:
    """Compile a normalised pattern under the strict reading (cached): what it claims
    for certain, never reading a slash-less literal as a directory."""
    if not names_maybe_directory(pattern):
        return compile_pattern(pattern)  # both readings are the same
    alternatives = tuple(
        _compile_alternative(alt, strict=True) for alt in _expand(pattern, _EXPANSION_CAP)
    )
    # A name of its own, so that memo keys never mix the two readings of one pattern.
    return CompiledPattern(pattern, alternatives, name="\x00" + pattern)


def _compile_alternative(alt: str, *, strict: bool) -> Alternative:
    directory = alt.endswith("/")
    elements: list[Element] = []
    for text in alt.removesuffix("/").split("/"):
        if text == "**":
            if not elements or elements[-1] is not GLOBSTAR:
                elements.append(GLOBSTAR)
        else:
            elements.append(sg.parse_segment(text))
    last = elements[-1]
    if last is GLOBSTAR:
        # A trailing '**' needs at least one segment: 'a/**' does not match 'a'
        # (and everything below is matched already, '/' or not).
        elements[-1:] = [sg.ANY_SEGMENT, GLOBSTAR]
    elif directory:
        # 'src/api/' claims what 'src/api' matches and everything below it.
        elements.append(GLOBSTAR)
    elif last.literal is not None and not strict:
        # The wide reading: a last segment without wildcards may be a directory.
        elements.append(GLOBSTAR)
    return tuple(elements)


@lru_cache(maxsize=65536)
def names_maybe_directory(pattern: str) -> bool:
    """Whether some brace alternative of a normalised pattern ends with a literal
    segment and no '/': only then do its strict and wide readings differ.

    Its own cache, larger than the compiled patterns': the detector asks it of
    every live pattern an answer holds, and a server holds more live patterns
    than it keeps compiled.
    """
    return any(
        not alt.endswith("/") and _last_segment_is_literal(alt)
        for alt in _expand(pattern, _EXPANSION_CAP)
    )


_SPECIAL = re.compile(r"[*?\[\\{]")


@lru_cache(maxsize=65536)
def is_literal(pattern: str) -> bool:
    """Whether a normalised pattern names one path, file or directory (no wildcard, no
    brace, no escape, no trailing '/'): it claims that path for certain and what is
    below it only if it is a directory."""
    return _SPECIAL.search(pattern) is None and not pattern.endswith("/")


def _common_literal_prefix(alternatives: tuple[Alternative, ...]) -> tuple[str, ...]:
    """Leading literal segments shared by all alternatives (never '', '.' or '..')."""
    prefix: list[str] | None = None
    for alt in alternatives:
        lits: list[str] = []
        for el in alt:
            if el is GLOBSTAR or el.literal is None or el.literal in ("", ".", ".."):
                break
            lits.append(el.literal)
        if prefix is None:
            prefix = lits
        else:
            n = 0
            while n < min(len(prefix), len(lits)) and prefix[n] == lits[n]:
                n += 1
            prefix = prefix[:n]
    return tuple(prefix or ())


def _regex(alternatives: tuple[Alternative, ...]) -> re.Pattern[str]:
    parts = []
    for alt in alternatives:
        parts.append(
            "".join("(?:/[^/\\x00]+)*" if el is GLOBSTAR else "/" + el.regex_body for el in alt)
        )
    return re.compile("(?:" + "|".join(parts) + ")", re.DOTALL)
