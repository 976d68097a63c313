"""File patterns: normalisation, the claim rule, and exact overlap.

Semantics (SPEC "File patterns"): wcmatch ``globmatch`` with ``GLOBSTAR |
BRACE | DOTGLOB`` (plus ``FORCEUNIX`` so a developer's laptop and the server
agree). A brace alternative ending in ``/`` also claims everything below what
it matches; one whose last segment has no wildcard (``Makefile``) claims
what lies below what it matches only if that is a directory. Two patterns
overlap for certain when a valid relative path is claimed by both without
reading such a literal as a directory (the strict reading), else only if a
directory when one is claimed by both once such literals may be directories
(the wide reading). :func:`overlap` decides both exactly and returns an
example; :func:`overlap_example` is the wide decision alone.

How: braces are expanded (by ``bracex``, as wcmatch does), each alternative
becomes a list of elements — a parsed segment, or ``GLOBSTAR`` (zero or more
whole segments) — and two alternatives are searched as a product over
(element of A, element of B). A segment pair is decided in closed form by
:mod:`agentlanes.domain.segments`. See ``docs/patterns.md``.

Imports only the standard library and wcmatch: the git hook loads this.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import count, islice
from typing import NamedTuple

import bracex
from wcmatch import glob

from . import segments as sg
from .segments import Segment

FLAGS = glob.GLOBSTAR | glob.BRACE | glob.DOTGLOB | glob.FORCEUNIX
"""The wcmatch flags that define what a pattern matches."""
_ALT_FLAGS = FLAGS & ~glob.BRACE  # for one brace alternative


@dataclass(frozen=True)
class PatternLimits:
    """Guard rails on what a client may send. The server passes its settings.

    The defaults keep every pair of allowed patterns decidable in a few
    milliseconds (``bench/conflicts.py`` shows the adversarial pairs): each
    ``**`` counts as two wildcards, and all brace alternatives together may
    hold at most ``EXPANSION_LENGTH_FACTOR`` times ``max_length`` characters.
    """

    max_length: int = 1024
    max_wildcards: int = 32
    max_brace_expansion: int = 64


DEFAULT_LIMITS = PatternLimits()
EXPANSION_LENGTH_FACTOR = 4


class PatternError(ValueError):
    """Bad pattern or path; ``str(exc)`` is a message for a person that quotes it."""

    def __init__(self, pattern: str, message: str) -> None:
        self.pattern = pattern
        self.message = message
        super().__init__(f"{message}: {pattern!r}")


class _GlobStar:
    """A whole ``**`` segment: zero or more whole path segments."""

    def __repr__(self) -> str:
        return "GLOBSTAR"


GLOBSTAR = _GlobStar()
Element = Segment | _GlobStar
Alternative = tuple[Element, ...]

_EXPANSION_CAP = 1 << 16  # beyond any configured limit; normalise_pattern enforces those
_MULTI_SLASH = re.compile(r"/{2,}")
_WILDCARD = re.compile(r"\\.|[*?\[]", re.DOTALL)


# --------------------------------------------------------------------------
# Normalisation


def _normalise_text(raw: str, kind: str, *, keep_slash: bool = False) -> str:
    if "\x00" in raw:
        raise PatternError(raw, f"{kind} contains a NUL byte")
    text = _MULTI_SLASH.sub("/", raw.strip())
    if text.startswith("/"):
        raise PatternError(raw, f"{kind} must be relative, not absolute")
    while text.startswith("./"):
        text = text[2:]
    # A pattern keeps its trailing '/': it claims a directory (SPEC). A concrete
    # path names a file, so its trailing '/' means nothing and goes.
    body = text.removesuffix("/")
    if not body:
        raise PatternError(raw, f"{kind} is empty")
    if not keep_slash:
        text = body
    for segment in body.split("/"):
        if segment == "..":
            raise PatternError(raw, f"{kind} has a '..' segment")
        if segment == ".":
            raise PatternError(raw, f"{kind} has a '.' segment")
    return text


def normalise_path(raw: str, limits: PatternLimits = DEFAULT_LIMITS) -> str:
    """Normalise a concrete file path (SPEC rules); raise PatternError if invalid.

    A path is literal: ``src/[x].py`` names a file called ``[x].py``.
    """
    if len(raw) > limits.max_length * 2:  # cheap refusal before any work
        raise PatternError(raw[:80] + "…", f"path longer than {limits.max_length} characters")
    text = _normalise_text(raw, "path")
    if len(text) > limits.max_length:
        raise PatternError(text, f"path longer than {limits.max_length} characters")
    return text


def normalise_pattern(raw: str, limits: PatternLimits = DEFAULT_LIMITS) -> str:
    """Normalise a file pattern (SPEC rules) and check it against the limits.

    A trailing ``/`` is kept: it marks a directory claim (``src/api/``).
    Refuses (PatternError): empty, absolute, a ``..`` or ``.`` segment, a NUL
    byte, too long, too many wildcards, a brace expansion that yields too
    many alternatives, too many characters in all, or an absolute, ``..`` or
    ``.`` alternative, and anything wcmatch cannot compile.
    """
    if len(raw) > limits.max_length * 2:
        raise PatternError(raw[:80] + "…", f"pattern longer than {limits.max_length} characters")
    text = _normalise_text(raw, "pattern", keep_slash=True)
    if len(text) > limits.max_length:
        raise PatternError(text, f"pattern longer than {limits.max_length} characters")
    wildcards = sum(1 for m in _WILDCARD.finditer(text) if len(m.group()) == 1)
    if wildcards > limits.max_wildcards:
        raise PatternError(text, f"pattern has more than {limits.max_wildcards} wildcards")
    alternatives = _expand(text, limits.max_brace_expansion)
    expanded = limits.max_length * EXPANSION_LENGTH_FACTOR
    if sum(len(alt) for alt in alternatives) > expanded:
        raise PatternError(text, f"brace expansion longer than {expanded} characters in all")
    for alt in alternatives:
        if alt.startswith("/"):
            raise PatternError(text, f"brace alternative {alt!r} is absolute")
        segments = alt.split("/")
        if ".." in segments:
            raise PatternError(text, f"brace alternative {alt!r} has a '..' segment")
        if "." in segments:
            raise PatternError(text, f"brace alternative {alt!r} has a '.' segment")
    try:
        compile_pattern(text)
    except sg.SegmentSyntaxError as exc:  # pragma: no cover - defensive
        raise PatternError(text, f"pattern cannot be compiled ({exc})") from exc
    return text


def _expand(pattern: str, limit: int) -> list[str]:
    """Brace alternatives exactly as wcmatch makes them; PatternError if too many."""
    if "{" not in pattern:  # no brace: the pattern itself (bracex would say so, slowly)
        collapsed = _MULTI_SLASH.sub("/", pattern)
        return [collapsed] if collapsed else []
    try:
        expanded = bracex.iexpand(pattern, keep_escapes=True, limit=0, return_empty=True)
        alts = list(islice(expanded, limit + 1))
    except (bracex.ExpansionLimitException, ValueError, RecursionError) as exc:
        raise PatternError(pattern, "brace expansion cannot be computed") from exc
    if len(alts) > limit:
        raise PatternError(pattern, f"brace expansion yields more than {limit} alternatives")
    # wcmatch collapses repeated separators, as a brace may leave 'a//b'.
    out: list[str] = []
    for alt in alts:
        collapsed = _MULTI_SLASH.sub("/", alt)
        if collapsed and collapsed not in out:
            out.append(collapsed)
    return out


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
                    by_segment.setdefault(el, []).append(len(kinds))  # type: ignore[arg-type]
                    if sg.witness(el) is not None:  # type: ignore[arg-type]
                        witnessed.append(len(kinds))
                    kinds.append(_SEG)
                    segs.append(el)  # type: ignore[arg-type]
            ends.append(len(kinds))
            kinds.append(_END)
            segs.append(None)
        self.kinds = tuple(kinds)
        self.segs = tuple(segs)
        self.literals = tuple(s.literal if s is not None else None for s in segs)
        self.globstars = _mask(globstars)
        self.ends = _mask(ends)
        # Ends right after a literal segment: in a strictly compiled pattern, where
        # an alternative ending in a slash-less literal matches (maybe a directory).
        self.literal_ends = _mask(
            [e for e in ends if e and kinds[e - 1] == _SEG and segs[e - 1].literal is not None]  # type: ignore[union-attr]
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
        while kinds[p] == _SEG and literals[p] is not None and valid >> p & 1:
            words.append(literals[p])  # type: ignore[arg-type]
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
            words: list[str] | None = []
            while self.kinds[p] != _END:
                if self.kinds[p] == _SEG:
                    word = sg.witness(self.segs[p])  # type: ignore[arg-type]
                    if word is None:
                        words = None
                        break
                    words.append(word)  # type: ignore[union-attr]
                p += 1
            if words is not None and (best is None or len(words) < len(best)):
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
    if last is GLOBSTAR or "." not in last.tail:  # type: ignore[union-attr]
        return None
    return last.tail.rpartition(".")[2]  # type: ignore[union-attr]


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
    return "/".join("**" if el is GLOBSTAR else el.source for el in alt)  # type: ignore[union-attr]


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
            tails.append(last.tail)  # type: ignore[union-attr]
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
            _REST_MEMO.store(table, key, found)  # type: ignore[arg-type]
        return found  # type: ignore[return-value]

    def literal_lead(self, mask: int) -> tuple[tuple[str, ...], int]:
        """The words ``mask`` must read first (while it is one literal position),
        and the positions after them."""
        kinds, literals, valid = self.kinds, self.literals, self.witnessed
        words: list[str] = []
        while mask == mask & -mask:
            p = mask.bit_length() - 1
            if kinds[p] != _SEG or literals[p] is None or not valid >> p & 1:
                break
            words.append(literals[p])  # type: ignore[arg-type]
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
            _LEAD_MEMO.store(table, key, found)  # type: ignore[arg-type]
        return None if found is None else lead + found  # type: ignore[operator]


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


_MISSING = object()
_SHARED_PREFIX = 16
_SHAPE_CHARS = 128
_RESTS: dict[str, Rest] = {}
_SERIALS = count()


def shared_rest(alternatives: tuple[Alternative, ...]) -> Rest:
    """The shared Rest for these elements (one object per key, bounded)."""
    # NUL separates alternatives: no pattern holds one ('|' is a literal character).
    key = "\x00".join(_key(alt) for alt in alternatives)
    rest = _RESTS.get(key)
    if rest is None:
        if len(_RESTS) >= 16384:
            _RESTS.clear()
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
    elif last.literal is not None and not strict:  # type: ignore[union-attr]
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
            if el is GLOBSTAR or el.literal is None or el.literal in ("", ".", ".."):  # type: ignore[union-attr]
                break
            lits.append(el.literal)  # type: ignore[union-attr]
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
            "".join(
                "(?:/[^/\\x00]+)*" if el is GLOBSTAR else "/" + el.regex_body  # type: ignore[union-attr]
                for el in alt
            )
        )
    return re.compile("(?:" + "|".join(parts) + ")", re.DOTALL)


# --------------------------------------------------------------------------
# The claim rule, by wcmatch itself


def _last_segment_is_literal(alt: str) -> bool:
    last = alt.rsplit("/", 1)[-1]
    return last != "**" and sg.parse_segment(last).literal is not None


def _alternative_claims(alt: str, path: str, parents: list[str], wide: bool) -> bool:
    directory = alt.endswith("/")
    body = alt.removesuffix("/")
    if glob.globmatch(path, body, flags=_ALT_FLAGS):
        return True
    if directory or (wide and _last_segment_is_literal(body)):
        return any(glob.globmatch(parent, body, flags=_ALT_FLAGS) for parent in parents)
    return False


@lru_cache(maxsize=65536)
def claims(pattern: str, path: str) -> bool:
    """Whether a normalised pattern claims a normalised concrete path, reading a
    literal last segment as possibly a directory (SPEC, the wide reading).

    For each brace alternative: ``globmatch(path, alternative, flags=GLOBSTAR|DOTGLOB)``;
    or ``path`` lies below a path the alternative matches, when the alternative
    ends with ``/`` or its last segment has no wildcard. Right for a path that
    exists (a file's parents are directories): the guard and staged paths.
    """
    parents = _parents(path)
    return any(
        _alternative_claims(alt, path, parents, True) for alt in _expand(pattern, _EXPANSION_CAP)
    )


@lru_cache(maxsize=65536)
def claims_for_certain(pattern: str, path: str) -> bool:
    """Whether a normalised pattern claims ``path`` without reading any slash-less
    literal as a directory (SPEC, the strict reading)."""
    parents = _parents(path)
    return any(
        _alternative_claims(alt, path, parents, False) for alt in _expand(pattern, _EXPANSION_CAP)
    )


def _parents(path: str) -> list[str]:
    segs = path.split("/")
    return ["/".join(segs[:k]) for k in range(1, len(segs))]


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


class _Memo:
    """Verdicts on rests: the shape of what is left of a pattern -> an int
    naming the positions and the rest -> words. Bounded: emptied when it holds
    ``cap`` verdicts.

    Keyed by a string, then an int, never by a tuple made per verdict: once
    full, a server replaces memoised verdicts all the time, and each stored
    tuple would be one more object for the garbage collector's young passes
    to walk (docs/operations.md).
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.size = 0
        self.by_shape: dict[str | tuple[str, int], dict[int, tuple[str, ...] | None]] = {}

    def table(self, shape: str | tuple[str, int]) -> dict[int, tuple[str, ...] | None]:
        table = self.by_shape.get(shape)
        if table is None:
            table = self.by_shape[shape] = {}
        return table

    def store(
        self, table: dict[int, tuple[str, ...] | None], key: int, words: tuple[str, ...] | None
    ) -> None:
        if self.size >= self.cap:
            self.clear()  # the caller's table goes with the rest
            return
        table[key] = words
        self.size += 1

    def clear(self) -> None:
        self.by_shape.clear()
        self.size = 0


# What a pattern accepts from some positions that a rest accepts from its
# start; and, after a literal lead, from where the lead left the rest.
_REST_MEMO = _Memo(1 << 18)
_LEAD_MEMO = _Memo(1 << 16)
_SERIAL_BITS = 48  # rest serials stay below 2 ** 48


def _search(
    x: Automaton, xmask: int, y: Automaton, nonempty: bool, ymask: int | None = None
) -> tuple[str, ...] | None:
    """Shortest words accepted by ``x`` from ``xmask`` and by ``y`` from ``ymask``
    (default: its start).

    Breadth-first over pairs (position of x, position of y), one level per
    word read, with all positions of the larger automaton at once as a bit
    mask: a level costs one step per active position of the smaller one.
    Without ``nonempty`` (nothing read yet) the words must not be empty.
    """
    if ymask is None:
        ymask = y.starts
    # Iterate over the smaller automaton's positions, counting x's from the
    # lowest live one: the words found then depend only on x's shape from there.
    swapped = len(x.kinds) - ((xmask & -xmask).bit_length() - 1) > len(y.kinds)
    if swapped:
        x, y = y, x
        xmask, ymask = ymask, xmask
    cur: dict[int, int] = {}
    m = xmask
    while m:
        low = m & -m
        m ^= low
        cur[low.bit_length() - 1] = ymask
    kinds, segs, yglob, ywit = x.kinds, x.segs, y.globstars, y.witnessed
    if nonempty:
        for p, mask in cur.items():
            if kinds[p] == _END and mask & y.ends:
                return ()
        seen = dict(cur)
    else:
        seen = {}
    levels = [cur]
    compat: dict[Segment, int] = {}
    while cur:
        nxt: dict[int, int] = {}
        for p, mask in cur.items():
            kind = kinds[p]
            if kind == _SEG:
                seg = segs[p]
                ok = compat.get(seg)  # type: ignore[arg-type]
                if ok is None:
                    ok = compat[seg] = y.compatible(seg)  # type: ignore[index,arg-type]
                stepped = ((mask & ok) << 1) | (mask & yglob if sg.witness(seg) else 0)  # type: ignore[arg-type]
                target = p + 1
            elif kind == _GLOB:
                stepped = ((mask & ywit) << 1) | (mask & yglob)
                target = p
            else:
                continue
            if stepped:
                stepped = y.closure(stepped)
                nxt[target] = nxt.get(target, 0) | stepped
                done = stepped & y.ends
                if done and kinds[target + (kind == _GLOB)] == _END:  # complete pair: stop
                    end = target + (kind == _GLOB)
                    return _spell(x, y, [*levels, nxt], end, done.bit_length() - 1)
        for p in list(nxt):
            if kinds[p] == _GLOB:  # a GLOBSTAR may match nothing
                nxt[p + 1] = nxt.get(p + 1, 0) | nxt[p]
        for p in list(nxt):
            new = nxt[p] & ~seen.get(p, 0)
            if new:
                nxt[p] = new
                seen[p] = seen.get(p, 0) | new
            else:
                del nxt[p]
        levels.append(nxt)
        for p, mask in nxt.items():
            if kinds[p] == _END and mask & y.ends:
                b = (mask & y.ends).bit_length() - 1
                return _spell(x, y, levels, p, b)
        cur = nxt
    return None


def _spell(
    x: Automaton, y: Automaton, levels: list[dict[int, int]], p: int, b: int
) -> tuple[str, ...]:
    """Walk back from (p, b) at the last level, one word per level."""
    words: list[str] = []
    for k in range(len(levels) - 1, 0, -1):
        before = levels[k - 1]
        found = None
        for p_step in (p, p - 1) if p and x.kinds[p - 1] == _GLOB else (p,):
            for b_step in (b, b - 1) if b and y.kinds[b - 1] == _GLOB else (b,):
                for p_from, word_x in _preds(x, p_step):
                    row = before.get(p_from, 0)
                    if not row:
                        continue
                    for b_from, word_y in _preds(y, b_step):
                        if not (row >> b_from) & 1:
                            continue
                        word = _common_word(word_x, word_y)
                        if word is not None:
                            found = (p_from, b_from, word)
                            break
                    if found:
                        break
                if found:
                    break
            if found:
                break
        if found is None:  # pragma: no cover - the forward pass guarantees one
            raise AssertionError("no predecessor while spelling an example")
        p, b, word = found
        words.append(word)
    return tuple(reversed(words))


def _preds(auto: Automaton, q: int) -> list[tuple[int, Element]]:
    """(position, element read) pairs that reach ``q`` by reading one segment."""
    out: list[tuple[int, Element]] = []
    if q and auto.kinds[q - 1] == _SEG:
        out.append((q - 1, auto.segs[q - 1]))  # type: ignore[arg-type]
    if auto.kinds[q] == _GLOB:
        out.append((q, GLOBSTAR))
    return out


def _common_word(a: Element, b: Element) -> str | None:
    if a is GLOBSTAR and b is GLOBSTAR:
        return "a"
    if a is GLOBSTAR:
        return sg.witness(b)  # type: ignore[arg-type]
    if b is GLOBSTAR:
        return sg.witness(a)  # type: ignore[arg-type]
    return sg.intersect(a, b) if sg.may_intersect(a, b) else None  # type: ignore[arg-type]


def iter_alternatives(pattern: str) -> Iterator[str]:
    """The brace alternatives of a normalised pattern (for display and tests)."""
    yield from _expand(pattern, _EXPANSION_CAP)


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
