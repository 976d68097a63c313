"""The index the conflict detector walks: a trie keyed by the leading literal segments
of each brace alternative of each live pattern; at a node, alternatives are grouped by
what follows their literal segments (``**``, ``*/**``, ``*.py``, ``**/test_*.py`` …).

A new pattern is decided against all of them in one walk (:meth:`PatternTrie.overlaps_of`):
its automaton reads the literal segments of the nodes it visits, and a subtree is skipped
as soon as no position survives. At each node it visits, one memoised search per group
decides every pattern of that group exactly and spells the example. Staged paths walk
the same trie alongside the sorted paths (:meth:`PatternTrie.claims_of`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from enum import Enum
from typing import Final

from agentlanes.domain.globs.automaton import GLOBSTAR
from agentlanes.domain.globs.compiler import CompiledPattern, Rest, compile_pattern, shared_rest
from agentlanes.domain.globs.segments import ANY_SEGMENT

from .model import SearchTooLong, work_clock


class _Group:
    """Live alternatives filed at one node that share what follows the literal segments."""

    __slots__ = ("members", "rest")

    def __init__(self, rest: Rest) -> None:
        self.rest = rest
        self.members: dict[str, int] = {}  # pattern -> index of its first such alternative


_PLAIN = ("**", "*/**")  # literal files and directories, and 'dir/**'
_PLAIN_RESTS = {
    "**": shared_rest(((GLOBSTAR,),)),
    "*/**": shared_rest(((ANY_SEGMENT, GLOBSTAR),)),
}


class _Dirty(Enum):
    """A cached value not computed yet, or stale (an enum member, so that ``is _DIRTY``
    tells the type checker the value is there)."""

    DIRTY = 0


_DIRTY: Final = _Dirty.DIRTY


class _Node:
    __slots__ = ("_impure", "_plain", "_pure", "children", "depth", "groups", "path")

    def __init__(self, path: str, depth: int) -> None:
        self.children: dict[str, _Node] = {}
        self.groups: dict[str, _Group] = {}  # Rest.key -> group
        self.path = path  # the literal segments above this node, joined by '/'
        self.depth = depth
        self._plain: list[tuple[str, int, str, str]] | _Dirty | None = _DIRTY
        self._impure: list[tuple[str, _Node]] | _Dirty = _DIRTY
        self._pure: bool | _Dirty = _DIRTY

    def plain_only(self) -> bool:
        """Whether every pattern filed in this subtree is plain (``**`` or ``*/**``
        after the prefix). Cached until the subtree changes."""
        pure = self._pure
        if pure is _DIRTY:
            pure = self._pure = all(key in _PLAIN for key in self.groups) and all(
                child.plain_only() for child in self.children.values()
            )
        return pure

    def plain_below(self) -> list[tuple[str, int, str, str]] | None:
        """Every (pattern, alternative, node path, rest key) filed in this subtree when
        it is plain only; else None. Cached until the subtree changes."""
        plain = self._plain
        if plain is _DIRTY:
            found: list[tuple[str, int, str, str]] | None = None
            if self.plain_only():
                found = [
                    (p, i, self.path, key)
                    for key, group in self.groups.items()
                    for p, i in group.members.items()
                ]
                for child in self.children.values():
                    found.extend(child.plain_below() or ())  # plain too: never None
            plain = self._plain = found
        return plain

    def impure_children(self) -> list[tuple[str, _Node]]:
        """(segment, child) for each child below which some pattern is not plain.
        Cached until the subtree changes."""
        impure = self._impure
        if impure is _DIRTY:
            impure = self._impure = [(w, c) for w, c in self.children.items() if not c.plain_only()]
        return impure


class PatternTrie:
    """Every live pattern, filed by the literal prefix of each brace alternative."""

    def __init__(self) -> None:
        self.root = _Node("", 0)
        # pattern -> (node path, rest key) of its first plain alternative below
        # the root (a literal path, or 'dir/**'); and that alternative's
        # index, for the few patterns where it is not 0
        self.plain_entries: dict[str, tuple[str, str]] = {}
        self.plain_later: dict[str, int] = {}

    def add(self, pattern: str) -> None:
        entries = compile_pattern(pattern).entries
        for entry in entries:
            node = self.root
            node._plain = node._impure = node._pure = _DIRTY
            for seg in entry.prefix:
                child = node.children.get(seg)
                if child is None:
                    path = f"{node.path}/{seg}" if node.path else seg
                    child = node.children[seg] = _Node(path, node.depth + 1)
                node = child
                node._plain = node._impure = node._pure = _DIRTY
            group = node.groups.get(entry.rest.key)
            if group is None:
                group = node.groups[entry.rest.key] = _Group(entry.rest)
            group.members.setdefault(pattern, entry.index)
        plain = [
            (e.index, "/".join(e.prefix), e.rest.key)
            for e in entries
            if e.prefix and e.rest.key in _PLAIN
        ]
        if plain:
            index, path, key = min(plain)
            self.plain_entries[pattern] = (path, key)
            if index:
                self.plain_later[pattern] = index

    def remove(self, pattern: str) -> None:
        self.plain_entries.pop(pattern, None)
        self.plain_later.pop(pattern, None)
        for entry in compile_pattern(pattern).entries:
            path = [self.root]
            for seg in entry.prefix:
                child = path[-1].children.get(seg)
                if child is None:
                    break
                path.append(child)
            else:
                for node in path:
                    node._plain = node._impure = node._pure = _DIRTY
                node = path[-1]
                group = node.groups.get(entry.rest.key)
                if group is not None:
                    group.members.pop(pattern, None)
                    if not group.members:
                        del node.groups[entry.rest.key]
                # Prune empty leaves so the trie does not grow with history.
                for depth in range(len(entry.prefix), 0, -1):
                    node = path[depth]
                    if node.groups or node.children:
                        break
                    del path[depth - 1].children[entry.prefix[depth - 1]]

    def overlaps_of(self, cp: CompiledPattern, deadline: float | None = None) -> dict[str, str]:
        """Every live pattern sharing a path with ``cp`` under the wide reading (``cp``
        is compiled so): {pattern: example} (see :func:`_record` for ``later``).

        ``deadline`` (``time.work_clock()``): :class:`SearchTooLong` once it has passed,
        checked before each decision that is not memoised (long patterns make each one
        cost milliseconds)."""
        decided = 0
        found: dict[str, str] = {}
        later: dict[str, int] = {}
        # (mask, below the root) -> {rest key: example suffix, or None if disjoint}
        memo: dict[tuple[int, bool], dict[str, str | None]] = {}
        plain_memo: dict[int, dict[str, str] | None] = {}
        # A pattern starting with '**' ('**/*.py'): its globstar stays live
        # everywhere, so when it settles plain rests (see _plain_tails) every
        # plain pattern below the root overlaps. List those from the flat
        # table at once; the walk then only visits subtrees holding others.
        flat = None
        if cp.starts & cp.globstars:
            flat = self.plain_tails(cp, cp.starts, plain_memo)
        if flat is not None:
            found = {t: path + flat[key] for t, (path, key) in self.plain_entries.items()}
            later = dict(self.plain_later)
        stack = [(self.root, cp.starts)]
        while stack:
            node, mask = stack.pop()
            if node.groups:
                nonempty = node.depth > 0
                suffixes = memo.get((mask, nonempty))
                if suffixes is None:
                    suffixes = memo[mask, nonempty] = {}
                for key, group in node.groups.items():
                    if flat is not None and nonempty and key in _PLAIN:
                        continue  # listed from the flat table
                    suffix = suffixes.get(key, _DIRTY)
                    if suffix is _DIRTY:
                        if deadline is not None and work_clock() > deadline:
                            raise SearchTooLong(decided)
                        decided += 1
                        words = cp.rest_words(mask, nonempty, group.rest)
                        suffix = suffixes[key] = None if words is None else "/".join(words)
                    if suffix is None:
                        continue
                    if not suffix:
                        example = node.path
                    elif nonempty:
                        example = node.path + "/" + suffix
                    else:
                        example = suffix
                    _record(found, later, [(t, i, example) for t, i in group.members.items()])
            if not node.children:
                continue
            names = cp.next_literals(mask)
            if flat is not None:
                for word, child in node.impure_children():
                    after = cp.advance(mask, word)
                    if after:
                        stack.append((child, after))
            elif names is None:
                plain = self.plain_tails(cp, mask, plain_memo)
                for word, child in node.children.items():
                    if plain is not None:
                        below = child.plain_below()
                        if below is not None:
                            _record_plain(found, later, below, plain)
                            continue
                    after = cp.advance(mask, word)
                    if after:
                        stack.append((child, after))
            else:
                for word in dict.fromkeys(names):
                    named = node.children.get(word)
                    if named is not None:
                        after = cp.advance(mask, word)
                        if after:
                            stack.append((named, after))
        return found

    @staticmethod
    def plain_tails(
        cp: CompiledPattern, mask: int, memo: dict[int, dict[str, str] | None]
    ) -> dict[str, str] | None:
        """{rest key: what an example adds to the node's path ('' or '/words')} for
        plain rests below a node, when the mask settles them.

        A GLOBSTAR position in ``mask`` stays in the mask whatever is read
        below, so any pattern below whose rest is ``**`` or ``*/**`` overlaps
        as soon as the pattern accepts some words from those positions alone:
        the words need not be recomputed node by node.
        """
        sticky = mask & cp.globstars
        if not sticky:
            return None
        if sticky in memo:
            return memo[sticky]
        start = cp.closure(sticky)
        tails: dict[str, str] = {}
        for key, rest in _PLAIN_RESTS.items():
            words = cp.rest_words(start, True, rest)
            if words is None:
                memo[sticky] = None
                return None
            tails[key] = "/" + "/".join(words) if words else ""
        memo[sticky] = tails
        return tails

    def claims_of(
        self, paths: list[str], deadline: float | None = None
    ) -> dict[str, dict[str, None]]:
        """Every live pattern claiming one of ``paths``: {pattern: {path: None}};
        :class:`SearchTooLong` once ``deadline`` has passed (checked per node)."""
        keyed = sorted((tuple(p.split("/")), p) for p in paths)
        segs = [k for k, _ in keyed]
        names = [p for _, p in keyed]
        # Paths by extension, for patterns whose last segment fixes one
        # ('**/*.py'): those test only the paths that can possibly match.
        by_ext: dict[str, list[int]] = {}
        for n, parts in enumerate(segs):
            base = parts[-1]
            if "." in base:
                by_ext.setdefault(base.rpartition(".")[2], []).append(n)
        found: dict[str, dict[str, None]] = {}
        stack = [(self.root, 0, len(keyed))]
        while stack:
            node, lo, hi = stack.pop()
            if deadline is not None and work_clock() > deadline:
                raise SearchTooLong(len(found))
            depth = node.depth
            for key, group in node.groups.items():
                if key == "**":  # a literal path: claims itself and all below
                    claimed = names[lo:hi]
                elif key == "*/**":  # 'dir/**': everything strictly below
                    # Only the node's own path can end here, and it sorts first.
                    claimed = names[lo + (len(segs[lo]) == depth) : hi]
                else:
                    rx = group.rest.regex
                    start = len(node.path) + 1 if depth else 0
                    ext = group.rest.extension
                    if ext is None:
                        candidates: Iterable[int] = range(lo, hi)
                    else:
                        same = by_ext.get(ext, [])
                        candidates = same[bisect_left(same, lo) : bisect_left(same, hi)]
                    claimed = [
                        names[n]
                        for n in candidates
                        if rx.fullmatch("/" + names[n], start) is not None
                    ]
                if claimed:
                    # A pattern filed at several nodes (brace alternatives) may
                    # claim a path from more than one of them: keep it once.
                    for theirs in group.members:
                        found.setdefault(theirs, {}).update(dict.fromkeys(claimed))
            if not node.children:
                continue
            # Paths below this node are sorted by their next segment.
            n = lo
            while n < hi and len(segs[n]) == depth:
                n += 1
            while n < hi:
                word = segs[n][depth]
                end = n + 1
                while end < hi and segs[end][depth] == word:
                    end += 1
                child = node.children.get(word)
                if child is not None:
                    stack.append((child, n, end))
                n = end
        return found


def _record_plain(
    found: dict[str, str],
    later: dict[str, int],
    below: list[tuple[str, int, str, str]],
    tails: dict[str, str],
) -> None:
    """Record every plain pattern of ``below`` as overlapping."""
    _record(found, later, [(t, i, path + tails[key]) for t, i, path, key in below])


def _record(
    found: dict[str, str],
    later: dict[str, int],
    overlaps: list[tuple[str, int, str]],
) -> None:
    """Record each (their pattern, alternative, example) as overlapping.

    A pattern met through several of its brace alternatives keeps the first
    alternative's example; ``later`` holds the alternative a pattern was met
    through when that is not its first (0), which is rare.
    """
    for theirs, index, example in overlaps:
        if index:
            if theirs in found and later.get(theirs, 0) <= index:
                continue
            later[theirs] = index
        elif later:
            later.pop(theirs, None)
        found[theirs] = example
