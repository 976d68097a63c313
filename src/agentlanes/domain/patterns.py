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


@dataclass(eq=False)
class CompiledPattern:
    """A pattern as alternatives of elements, plus a regex for fast claims."""

    source: str
    alternatives: tuple[Alternative, ...]
    literal_prefix: tuple[str, ...]  # leading literal segments common to all alternatives
    alternative_prefixes: tuple[tuple[str, ...], ...]  # each alternative's, distinct

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Matches "/" + path for exactly the paths the pattern claims (built on first use)."""
        return _regex(self.alternatives)

    def claims(self, path: str) -> bool:
        """Same verdict as :func:`claims` for a normalised path, much faster."""
        return self.regex.fullmatch("/" + path) is not None


@lru_cache(maxsize=8192)
def compile_pattern(pattern: str) -> CompiledPattern:
    """Compile a normalised pattern (cached). Limits were checked when normalising."""
    alternatives = tuple(_compile_alternative(alt) for alt in _expand(pattern, _EXPANSION_CAP))
    prefixes = tuple(dict.fromkeys(_common_literal_prefix((alt,)) for alt in alternatives))
    return CompiledPattern(pattern, alternatives, _common_literal_prefix(alternatives), prefixes)


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
    prefix: list[str] | None = None
    for alt in alternatives:
        lits: list[str] = []
        for el in alt:
            if el is GLOBSTAR or el.literal is None:  # type: ignore[union-attr]
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
    for alt_a in pa.alternatives:
        for alt_b in pb.alternatives:
            found = alternatives_overlap(alt_a, alt_b)
            if found is not None:
                return found
    return None


def alternatives_overlap(a: Alternative, b: Alternative) -> str | None:
    """A path matched by both alternatives, by breadth-first search of the product.

    States are (element of A, element of B, whether a segment was consumed
    yet); there are at most 2·(len(a)+1)·(len(b)+1) of them. Breadth-first
    keeps examples short.
    """
    la, lb = len(a), len(b)
    start = (0, 0, False)
    parent: dict[tuple[int, int, bool], tuple[tuple[int, int, bool], str | None] | None] = {
        start: None
    }
    queue = deque([start])
    while queue:
        state = queue.popleft()
        i, j, nonempty = state
        if i == la and j == lb:
            if nonempty:
                return _spell(parent, state)
            continue
        ea = a[i] if i < la else None
        eb = b[j] if j < lb else None
        moves: list[tuple[tuple[int, int, bool], str | None]] = []
        if ea is GLOBSTAR:
            moves.append(((i + 1, j, nonempty), None))
        if eb is GLOBSTAR:
            moves.append(((i, j + 1, nonempty), None))
        if ea is GLOBSTAR and eb is GLOBSTAR and not nonempty:
            moves.append(((i, j, True), "a"))
        if ea is GLOBSTAR and isinstance(eb, Segment):
            word = sg.witness(eb)
            if word is not None:
                moves.append(((i, j + 1, True), word))
        if eb is GLOBSTAR and isinstance(ea, Segment):
            word = sg.witness(ea)
            if word is not None:
                moves.append(((i + 1, j, True), word))
        if isinstance(ea, Segment) and isinstance(eb, Segment):
            word = sg.intersect(ea, eb)
            if word is not None:
                moves.append(((i + 1, j + 1, True), word))
        for nxt, word in moves:
            if nxt not in parent:
                parent[nxt] = (state, word)
                queue.append(nxt)
    return None


def _spell(parent: dict, state: tuple[int, int, bool]) -> str:
    words: list[str] = []
    link = parent[state]
    while link is not None:
        state, word = link
        if word is not None:
            words.append(word)
        link = parent[state]
    return "/".join(reversed(words))


def iter_alternatives(pattern: str) -> Iterator[str]:
    """The brace alternatives of a normalised pattern (for display and tests)."""
    yield from _expand(pattern, _EXPANSION_CAP)


def clear_caches() -> None:
    """Empty every module-level cache (benchmarks measure cold costs with it)."""
    for fn in (
        compile_pattern,
        claims,
        _overlap,
        sg.parse_segment,
        sg.intersect,
        sg.witness,
    ):
        fn.cache_clear()
