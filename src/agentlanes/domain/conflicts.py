"""Which live scopes a new scope, or a set of staged paths, collides with.

:class:`ConflictDetector` keeps the live scopes of one project in an index:

* distinct pattern strings, each with the sessions that hold it, so a
  pattern shared by many sessions is decided once;
* a trie keyed by each pattern's leading literal segments (common to all its
  brace alternatives). Two patterns whose literal prefixes differ at some
  depth cannot overlap, so a query only visits the trie nodes along its own
  literal prefix and the subtree below it;
* work areas in a dictionary.

Pattern pairs are decided by :func:`~agentlanes.domain.patterns.overlap_example`
(exact, memoised); concrete paths by each pattern's compiled regex.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .patterns import compile_pattern, overlap_example


@dataclass(frozen=True)
class Scope:
    """One live session's claim."""

    session_id: str
    agent_name: str
    declared_area: str | None
    patterns: tuple[str, ...]  # normalised


@dataclass(frozen=True)
class FileOverlap:
    """My pattern (or concrete path), theirs, and a path both claim."""

    pattern: str
    their_pattern: str
    example: str


@dataclass(frozen=True)
class Conflict:
    """Another live session that my scope collides with, and why."""

    session_id: str
    agent_name: str
    declared_area: str | None
    overlapping_area: bool
    overlapping_files: tuple[FileOverlap, ...]


class _Node:
    __slots__ = ("_below", "children", "patterns")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.patterns: set[str] = set()
        self._below: tuple[str, ...] | None = None

    def below(self) -> tuple[str, ...]:
        """Every pattern in this subtree (cached until the subtree changes)."""
        if self._below is None:
            found = list(self.patterns)
            for child in self.children.values():
                found.extend(child.below())
            self._below = tuple(found)
        return self._below


class ConflictDetector:
    """Finds which live scopes a new scope collides with. Holds an index of the scopes."""

    def __init__(self, scopes: Iterable[Scope] = ()) -> None:
        self._scopes: dict[str, Scope] = {}
        self._order: dict[str, int] = {}
        self._next = 0
        self._holders: dict[str, dict[str, None]] = {}  # pattern -> session ids
        self._areas: dict[str, dict[str, None]] = {}
        self._root = _Node()
        for scope in scopes:
            self.add(scope)

    def __len__(self) -> int:
        return len(self._scopes)

    def add(self, scope: Scope) -> None:
        """Add a live scope; one with the same session_id is replaced in place."""
        if scope.session_id in self._scopes:
            self._unindex(self._scopes[scope.session_id])
        else:
            self._order[scope.session_id] = self._next
            self._next += 1
        self._scopes[scope.session_id] = scope
        sid = scope.session_id
        if scope.declared_area:
            self._areas.setdefault(scope.declared_area, {})[sid] = None
        for pattern in scope.patterns:
            holders = self._holders.get(pattern)
            if holders is None:
                holders = self._holders[pattern] = {}
                self._trie_add(pattern)
            holders[sid] = None

    def remove(self, session_id: str) -> None:
        """Forget a scope (no error if unknown)."""
        scope = self._scopes.pop(session_id, None)
        if scope is not None:
            self._unindex(scope)
            del self._order[session_id]

    def _unindex(self, scope: Scope) -> None:
        sid = scope.session_id
        if scope.declared_area:
            holders = self._areas.get(scope.declared_area, {})
            holders.pop(sid, None)
            if not holders:
                self._areas.pop(scope.declared_area, None)
        for pattern in scope.patterns:
            holders = self._holders.get(pattern)
            if holders is None:
                continue
            holders.pop(sid, None)
            if not holders:
                del self._holders[pattern]
                self._trie_remove(pattern)

    # A brace pattern is filed under each alternative's literal prefix, so
    # '{src,tests}/pkg/**' is found under both src/pkg and tests/pkg.

    def _trie_add(self, pattern: str) -> None:
        for prefix in compile_pattern(pattern).alternative_prefixes:
            node = self._root
            node._below = None
            for seg in prefix:
                node = node.children.setdefault(seg, _Node())
                node._below = None
            node.patterns.add(pattern)

    def _trie_remove(self, pattern: str) -> None:
        for prefix in compile_pattern(pattern).alternative_prefixes:
            self._trie_remove_at(pattern, prefix)

    def _trie_remove_at(self, pattern: str, prefix: tuple[str, ...]) -> None:
        path = [self._root]
        for seg in prefix:
            child = path[-1].children.get(seg)
            if child is None:
                return
            path.append(child)
        path[-1].patterns.discard(pattern)
        for node in path:
            node._below = None
        # Prune empty leaves so the trie does not grow with history.
        for depth in range(len(prefix), 0, -1):
            node = path[depth]
            if node.patterns or node.children:
                break
            del path[depth - 1].children[prefix[depth - 1]]

    def _candidates_for_pattern(self, prefix: tuple[str, ...]) -> Iterable[str]:
        node = self._root
        for seg in prefix:
            yield from node.patterns
            child = node.children.get(seg)
            if child is None:
                return
            node = child
        yield from node.below()

    def _candidates_for_path(self, segs: list[str]) -> Iterable[str]:
        node = self._root
        yield from node.patterns
        for seg in segs:
            child = node.children.get(seg)
            if child is None:
                return
            node = child
            yield from node.patterns

    def find(
        self,
        *,
        declared_area: str | None = None,
        patterns: Sequence[str] = (),
        paths: Sequence[str] = (),
        exclude_session_id: str | None = None,
    ) -> list[Conflict]:
        """One Conflict per other live scope that overlaps, oldest first.

        A scope overlaps when it has the same non-empty work area
        (case-sensitive) and/or one of its patterns shares a path with one of
        ``patterns`` (normalised) or claims one of ``paths`` (normalised
        concrete files, reported with ``example`` = the path).
        """
        # session id -> list of (sort key, FileOverlap)
        hits: dict[str, list[tuple[tuple[int, int], FileOverlap]]] = {}
        mine = list(dict.fromkeys(patterns))
        for i, pattern in enumerate(mine):
            prefixes = compile_pattern(pattern).alternative_prefixes
            candidates: Iterable[str] = (
                self._candidates_for_pattern(prefixes[0])
                if len(prefixes) == 1
                else dict.fromkeys(c for p in prefixes for c in self._candidates_for_pattern(p))
            )
            for theirs in candidates:
                example = overlap_example(pattern, theirs)
                if example is None:
                    continue
                overlap = FileOverlap(pattern, theirs, example)
                for sid in self._holders[theirs]:
                    hits.setdefault(sid, []).append(((i, 0), overlap))
        for k, path in enumerate(dict.fromkeys(paths)):
            for theirs in dict.fromkeys(self._candidates_for_path(path.split("/"))):
                if compile_pattern(theirs).claims(path):
                    overlap = FileOverlap(path, theirs, path)
                    for sid in self._holders[theirs]:
                        hits.setdefault(sid, []).append(((len(mine) + k, 0), overlap))
        area_sids = self._areas.get(declared_area, {}) if declared_area else {}
        sids = set(hits) | set(area_sids)
        sids.discard(exclude_session_id)  # type: ignore[arg-type]
        conflicts = []
        for sid in sorted(sids, key=self._order.__getitem__):
            scope = self._scopes[sid]
            found = hits.get(sid, [])
            if found:
                rank = {p: n for n, p in enumerate(scope.patterns)}
                found.sort(key=lambda h: (h[0][0], rank.get(h[1].their_pattern, 0)))
            conflicts.append(
                Conflict(
                    session_id=sid,
                    agent_name=scope.agent_name,
                    declared_area=scope.declared_area,
                    overlapping_area=sid in area_sids,
                    overlapping_files=tuple(h[1] for h in found),
                )
            )
        return conflicts
