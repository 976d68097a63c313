"""The claim rule, decided by wcmatch itself: does a pattern claim a concrete path,
reading a slash-less literal as possibly a directory (wide) or never (strict)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from wcmatch import glob

from . import segments as sg
from .braces import _EXPANSION_CAP, _expand

FLAGS = glob.GLOBSTAR | glob.BRACE | glob.DOTGLOB | glob.FORCEUNIX
"""The wcmatch flags that define what a pattern matches."""
_ALT_FLAGS = FLAGS & ~glob.BRACE  # for one brace alternative


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


def claimed_paths(patterns: Iterable[str], paths: Iterable[str]) -> list[str]:
    """The paths, in their order, that at least one of the normalised patterns claims
    (:func:`claims`, the wide reading). A pattern this version cannot read claims
    nothing: the patterns may come from a server of another version."""
    pattern_list = list(patterns)
    out = []
    for path in paths:
        for pattern in pattern_list:
            try:
                if claims(pattern, path):
                    out.append(path)
                    break
            except Exception:  # a pattern this version cannot read
                continue
    return out


def _parents(path: str) -> list[str]:
    segs = path.split("/")
    return ["/".join(segs[:k]) for k in range(1, len(segs))]
