"""File patterns: normalisation, the claim rule, and exact overlap.

Semantics (SPEC "File patterns"): wcmatch ``globmatch`` with ``GLOBSTAR |
BRACE | DOTGLOB`` (plus ``FORCEUNIX`` so a developer's laptop and the server
agree), and a pattern whose last segment has no wildcard also claims what
lies below what it matches. Two patterns overlap when a valid relative path
is claimed by both; :func:`overlap_example` decides that exactly and returns
such a path.

How: braces are expanded (by ``bracex``, as wcmatch does), each alternative
becomes a list of elements — a parsed segment, or ``GLOBSTAR`` (zero or more
whole segments) — and two alternatives are searched as a product over
(element of A, element of B). A segment pair is decided in closed form by
:mod:`agentlanes.domain.segments`. See ``docs/patterns.md``.

Imports only the standard library and wcmatch: the git hook loads this.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import islice

import bracex
from wcmatch import glob

from . import segments as sg
from .segments import Segment

FLAGS = glob.GLOBSTAR | glob.BRACE | glob.DOTGLOB | glob.FORCEUNIX
"""The wcmatch flags that define what a pattern matches."""
_ALT_FLAGS = FLAGS & ~glob.BRACE  # for one brace alternative


@dataclass(frozen=True)
class PatternLimits:
    """Guard rails on what a client may send. The server passes its settings."""

    max_length: int = 1024
    max_wildcards: int = 64
    max_brace_expansion: int = 256


DEFAULT_LIMITS = PatternLimits()


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


def _normalise_text(raw: str, kind: str) -> str:
    if "\x00" in raw:
        raise PatternError(raw, f"{kind} contains a NUL byte")
    text = _MULTI_SLASH.sub("/", raw.strip())
    if text.startswith("/"):
        raise PatternError(raw, f"{kind} must be relative, not absolute")
    while text.startswith("./"):
        text = text[2:]
    text = text.removesuffix("/")
    if not text:
        raise PatternError(raw, f"{kind} is empty")
    for segment in text.split("/"):
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

    Refuses (PatternError): empty, absolute, a ``..`` or ``.`` segment, a NUL
    byte, too long, too many wildcards, a brace expansion that is too large
    or yields an absolute or ``..`` alternative, and anything wcmatch cannot
    compile.
    """
    if len(raw) > limits.max_length * 2:
        raise PatternError(raw[:80] + "…", f"pattern longer than {limits.max_length} characters")
    text = _normalise_text(raw, "pattern")
    if len(text) > limits.max_length:
        raise PatternError(text, f"pattern longer than {limits.max_length} characters")
    wildcards = sum(1 for m in _WILDCARD.finditer(text) if len(m.group()) == 1)
    if wildcards > limits.max_wildcards:
        raise PatternError(text, f"pattern has more than {limits.max_wildcards} wildcards")
    alternatives = _expand(text, limits.max_brace_expansion)
    for alt in alternatives:
        if alt.startswith("/"):
            raise PatternError(text, f"brace alternative {alt!r} is absolute")
        if ".." in alt.split("/"):
            raise PatternError(text, f"brace alternative {alt!r} has a '..' segment")
    try:
        compile_pattern(text)
    except sg.SegmentSyntaxError as exc:  # pragma: no cover - defensive
        raise PatternError(text, f"pattern cannot be compiled ({exc})") from exc
    return text


def _expand(pattern: str, limit: int) -> list[str]:
    """Brace alternatives exactly as wcmatch makes them; PatternError if too many."""
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


@dataclass(frozen=True, eq=False)
class Entry:
    """One brace alternative as (leading literal segments, the elements after them).

    Any path the alternative matches starts with ``prefix``; ``rest_key``
    names ``rest`` (equal keys, equal elements), so verdicts on the rest can
    be shared by every pattern of the same shape.
    """

    prefix: tuple[str, ...]
    rest: Alternative
    rest_key: str


@dataclass(eq=False)
class CompiledPattern:
    """A pattern as alternatives of elements, one automaton over all of them, and a regex.

    Automaton positions (bit ``p`` of a mask) hold the elements of every
    alternative one after the other, each alternative closed by an END
    position: ``kinds[p]`` is ``_GLOB``, ``_SEG`` or ``_END``.
    """

    source: str
    alternatives: tuple[Alternative, ...]
    literal_prefix: tuple[str, ...]  # leading literal segments common to all alternatives
    entries: tuple[Entry, ...]  # one per alternative, in order
    kinds: tuple[int, ...]
    segs: tuple[Segment | None, ...]
    literals: tuple[str | None, ...]  # the one word a literal segment position accepts
    starts: int  # positions before any segment is read (closed under GLOBSTAR skips)
    globstars: int  # mask of GLOBSTAR positions
    ends: int  # mask of END positions
    wild: int  # mask of positions that accept more than one word

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Matches "/" + path for exactly the paths the pattern claims (built on first use)."""
        return _regex(self.alternatives)

    def claims(self, path: str) -> bool:
        """Same verdict as :func:`claims` for a normalised path, much faster."""
        return self.regex.fullmatch("/" + path) is not None

    def closure(self, mask: int) -> int:
        """``mask`` plus every position reached by letting a GLOBSTAR match nothing."""
        while True:
            grown = mask | ((mask & self.globstars) << 1)
            if grown == mask:
                return mask
            mask = grown

    def advance(self, mask: int, word: str) -> int:
        """Positions after reading one valid path segment ``word`` from ``mask``."""
        out = 0
        m = mask & ~self.ends
        kinds, literals, segs = self.kinds, self.literals, self.segs
        while m:
            low = m & -m
            m ^= low
            p = low.bit_length() - 1
            if kinds[p] == _GLOB:
                out |= low
            else:
                lit = literals[p]
                if (word == lit) if lit is not None else segs[p].regex.fullmatch(word):  # type: ignore[union-attr]
                    out |= low << 1
        return self.closure(out) if out else 0

    def mask_after(self, words: tuple[str, ...], memo: dict[tuple[str, ...], int]) -> int:
        """Positions after reading ``words`` from the start; ``memo`` shares common prefixes."""
        mask = memo.get(words)
        if mask is not None:
            return mask
        k = len(words)
        while words[:k] not in memo:
            k -= 1
        mask = memo[words[:k]]
        for n in range(k, len(words)):
            mask = self.advance(mask, words[n]) if mask else 0
            memo[words[: n + 1]] = mask
        return mask

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

    def rest_words(
        self, mask: int, nonempty: bool, rest_key: str, rest: Alternative
    ) -> tuple[str, ...] | None:
        """Segments that this pattern accepts from ``mask`` and ``rest`` accepts (memoised).

        None when there are none; when ``nonempty`` is False (nothing read
        yet) the answer is never the empty sequence.
        """
        key = (self.source, mask, nonempty, rest_key)
        found = _REST_MEMO.get(key, _MISSING)
        if found is _MISSING:
            if len(_REST_MEMO) >= _REST_MEMO_CAP:
                _REST_MEMO.clear()
            found = _REST_MEMO[key] = _search(self, mask, nonempty, rest)
        return found  # type: ignore[return-value]


_MISSING = object()


@lru_cache(maxsize=8192)
def compile_pattern(pattern: str) -> CompiledPattern:
    """Compile a normalised pattern (cached). Limits were checked when normalising."""
    alternatives = tuple(_compile_alternative(alt) for alt in _expand(pattern, _EXPANSION_CAP))
    kinds: list[int] = []
    segs: list[Segment | None] = []
    literals: list[str | None] = []
    starts = globstars = ends = wild = 0
    entries = []
    for alt in alternatives:
        starts |= 1 << len(kinds)
        for el in alt:
            bit = 1 << len(kinds)
            if el is GLOBSTAR:
                kinds.append(_GLOB)
                segs.append(None)
                literals.append(None)
                globstars |= bit
                wild |= bit
            else:
                kinds.append(_SEG)
                segs.append(el)  # type: ignore[arg-type]
                literals.append(el.literal)  # type: ignore[union-attr]
                if el.literal is None:  # type: ignore[union-attr]
                    wild |= bit
        ends |= 1 << len(kinds)
        kinds.append(_END)
        segs.append(None)
        literals.append(None)
        prefix = _common_literal_prefix((alt,))
        rest = alt[len(prefix) :]
        key = "/".join("**" if el is GLOBSTAR else el.source for el in rest)  # type: ignore[union-attr]
        entries.append(Entry(prefix, rest, key))
    compiled = CompiledPattern(
        source=pattern,
        alternatives=alternatives,
        literal_prefix=_common_literal_prefix(alternatives),
        entries=tuple(entries),
        kinds=tuple(kinds),
        segs=tuple(segs),
        literals=tuple(literals),
        starts=0,
        globstars=globstars,
        ends=ends,
        wild=wild,
    )
    compiled.starts = compiled.closure(starts)
    return compiled


def _compile_alternative(alt: str) -> Alternative:
    elements: list[Element] = []
    for text in alt.split("/"):
        if text == "**":
            if not elements or elements[-1] is not GLOBSTAR:
                elements.append(GLOBSTAR)
        else:
            elements.append(sg.parse_segment(text))
    last = elements[-1]
    if last is GLOBSTAR:
        # A trailing '**' needs at least one segment: 'a/**' does not match 'a'.
        elements[-1:] = [sg.ANY_SEGMENT, GLOBSTAR]
    elif last.literal is not None:  # type: ignore[union-attr]
        # The claim rule: a last segment without wildcards may be a directory.
        elements.append(GLOBSTAR)
    return tuple(elements)


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


_REST_REGEXES: dict[str, re.Pattern[str]] = {}


def rest_regex(rest_key: str, rest: Alternative) -> re.Pattern[str]:
    """Matches "/" + the segments after an alternative's literal prefix (cached by key)."""
    rx = _REST_REGEXES.get(rest_key)
    if rx is None:
        if len(_REST_REGEXES) >= 8192:
            _REST_REGEXES.clear()
        rx = _REST_REGEXES[rest_key] = _regex((rest,))
    return rx


_REST_EXTENSIONS: dict[str, str | None] = {}


def rest_extension(rest_key: str, rest: Alternative) -> str | None:
    """The extension (text after the last '.') every path matched by ``rest`` ends with, if any.

    Only when ``rest`` ends with a segment (not ``**``) whose fixed tail holds a
    dot, as ``*.py`` or ``test_*.spec.ts``: that segment is the path's last, so
    the path's last segment ends with the tail and its extension is the tail's.
    """
    if rest_key in _REST_EXTENSIONS:
        return _REST_EXTENSIONS[rest_key]
    ext = None
    last = rest[-1]
    if last is not GLOBSTAR:
        tail: list[str] = []
        for tok in reversed(last.tokens):  # type: ignore[union-attr]
            char = None if tok is sg.STAR else sg.cs.singleton(tok)
            if char is None:
                break
            tail.append(char)
        text = "".join(reversed(tail))
        if "." in text:
            ext = text.rpartition(".")[2]
    if len(_REST_EXTENSIONS) >= 8192:
        _REST_EXTENSIONS.clear()
    _REST_EXTENSIONS[rest_key] = ext
    return ext


# --------------------------------------------------------------------------
# The claim rule, by wcmatch itself


def _last_segment_is_literal(alt: str) -> bool:
    last = alt.rsplit("/", 1)[-1]
    return last != "**" and sg.parse_segment(last).literal is not None


@lru_cache(maxsize=65536)
def claims(pattern: str, path: str) -> bool:
    """Whether a normalised pattern claims a normalised concrete path (SPEC).

    ``globmatch(path, pattern, flags=GLOBSTAR|BRACE|DOTGLOB)``, or, for a
    brace alternative whose last segment has no wildcard, ``path`` lies below
    a path that alternative matches.
    """
    if glob.globmatch(path, pattern, flags=FLAGS):
        return True
    parents = _parents(path)
    if not parents:
        return False
    for alt in _expand(pattern, _EXPANSION_CAP):
        if _last_segment_is_literal(alt) and any(
            glob.globmatch(parent, alt, flags=_ALT_FLAGS) for parent in parents
        ):
            return True
    return False


def _parents(path: str) -> list[str]:
    segs = path.split("/")
    return ["/".join(segs[:k]) for k in range(1, len(segs))]


# --------------------------------------------------------------------------
# Overlap
#
# A pattern is compiled into one automaton over path segments that holds all
# of its brace alternatives side by side: position p of the flat element list
# is a segment, a GLOBSTAR, or the END of one alternative. A set of positions
# is a bit mask, so stepping a whole brace expansion over one path segment is
# one pass over the set bits, never a product of alternatives.
#
# Two patterns a and b are decided by walking a's automaton over the literal
# leading segments of each alternative of b (any common path must start with
# them), then searching the product of a (from the positions reached) and
# the rest of b's alternative. That rest is one of few shapes (``**``,
# ``*/**``, ``*.py``, ``**/*.py`` …), so its verdicts are memoised by
# (a, positions, rest) and shared by every live pattern of the same shape.


def overlap_example(a: str, b: str) -> str | None:
    """A path claimed by both normalised patterns, or None when there is none.

    Exact: None means no valid relative path is claimed by both. The verdict
    and the example do not depend on argument order. Memoised.
    """
    return _overlap(a, b) if a <= b else _overlap(b, a)


@lru_cache(maxsize=262144)
def _overlap(a: str, b: str) -> str | None:
    pa, pb = compile_pattern(a), compile_pattern(b)
    n = min(len(pa.literal_prefix), len(pb.literal_prefix))
    if pa.literal_prefix[:n] != pb.literal_prefix[:n]:
        return None
    masks: dict[tuple[str, ...], int] = {(): pa.starts}
    for entry in pb.entries:
        mask = pa.mask_after(entry.prefix, masks)
        if not mask:
            continue
        words = pa.rest_words(mask, bool(entry.prefix), entry.rest_key, entry.rest)
        if words is not None:
            return "/".join(entry.prefix + words)
    return None


_NO_OVERLAP = ()
_REST_MEMO: dict[tuple[str, int, bool, str], tuple[str, ...] | None] = {}
_REST_MEMO_CAP = 1 << 18


def _search(
    auto: CompiledPattern, mask: int, nonempty: bool, rest: Alternative
) -> tuple[str, ...] | None:
    """Words w such that ``auto`` accepts w from ``mask`` and ``rest`` accepts w.

    Breadth-first over states (position of auto, element of rest, consumed
    a segment yet); at most 2·|auto|·(|rest|+1) states. With ``nonempty``
    False the words must not be empty (the prefix before them was).
    """
    kinds, segs = auto.kinds, auto.segs
    lr = len(rest)
    parent: dict[tuple[int, int, bool], tuple[tuple[int, int, bool], str | None] | None] = {}
    queue: deque[tuple[int, int, bool]] = deque()
    m = mask
    while m:
        low = m & -m
        m ^= low
        state = (low.bit_length() - 1, 0, nonempty)
        parent[state] = None
        queue.append(state)
    while queue:
        state = queue.popleft()
        p, j, ne = state
        kind = kinds[p]
        if kind == _END and j == lr:
            if ne:
                return _spell_words(parent, state)
            continue
        eb = rest[j] if j < lr else None
        moves: list[tuple[tuple[int, int, bool], str | None]] = []
        if kind == _GLOB:
            moves.append(((p + 1, j, ne), None))
        if eb is GLOBSTAR:
            moves.append(((p, j + 1, ne), None))
            if kind == _GLOB and not ne:
                moves.append(((p, j, True), "a"))
            elif kind == _SEG:
                word = sg.witness(segs[p])
                if word is not None:
                    moves.append(((p + 1, j, True), word))
        elif eb is not None:
            if kind == _GLOB:
                word = sg.witness(eb)  # type: ignore[arg-type]
                if word is not None:
                    moves.append(((p, j + 1, True), word))
            elif kind == _SEG:
                word = sg.intersect(segs[p], eb)  # type: ignore[arg-type]
                if word is not None:
                    moves.append(((p + 1, j + 1, True), word))
        for nxt, word in moves:
            if nxt not in parent:
                parent[nxt] = (state, word)
                queue.append(nxt)
    return None


def _spell_words(parent: dict, state: tuple[int, int, bool]) -> tuple[str, ...]:
    words: list[str] = []
    link = parent[state]
    while link is not None:
        state, word = link
        if word is not None:
            words.append(word)
        link = parent[state]
    return tuple(reversed(words))


def iter_alternatives(pattern: str) -> Iterator[str]:
    """The brace alternatives of a normalised pattern (for display and tests)."""
    yield from _expand(pattern, _EXPANSION_CAP)


def clear_verdict_caches() -> None:
    """Forget every memoised verdict, keeping compiled patterns (as a server compiles
    a pattern when it normalises it)."""
    _overlap.cache_clear()
    _REST_MEMO.clear()
    sg.intersect.cache_clear()
    sg.witness.cache_clear()


def clear_caches() -> None:
    """Empty every module-level cache (benchmarks measure cold costs with it)."""
    clear_verdict_caches()
    for fn in (compile_pattern, claims, sg.parse_segment):
        fn.cache_clear()
