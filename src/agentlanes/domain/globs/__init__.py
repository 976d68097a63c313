"""File patterns: normalisation, the compiled automaton, the claim rule, exact overlap.

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
:mod:`.segments`. See ``docs/patterns.md``.

The modules, in the order they build on each other: ``errors`` (PatternError, the
limits), ``braces`` (expansion), ``charset`` and ``segments`` (one segment, in closed
form), ``automaton``, ``search`` (the memoised product search), ``claims`` (the claim
rule, by wcmatch), ``compiler`` (a pattern compiled, wide or strict), ``normalise``
and ``overlap``. Imports only the standard library, wcmatch and bracex.
"""

from .claims import claimed_paths, claims, claims_for_certain
from .compiler import compile_pattern, compile_strict
from .errors import DEFAULT_LIMITS, PatternError, PatternLimits
from .normalise import normalise_path, normalise_pattern
from .overlap import Overlap, clear_caches, overlap, overlap_example

__all__ = [
    "DEFAULT_LIMITS",
    "Overlap",
    "PatternError",
    "PatternLimits",
    "claimed_paths",
    "claims",
    "claims_for_certain",
    "clear_caches",
    "compile_pattern",
    "compile_strict",
    "normalise_path",
    "normalise_pattern",
    "overlap",
    "overlap_example",
]
