"""Which live scopes a new scope, or a set of staged paths, collides with.

:class:`ConflictDetector` keeps the live scopes of one project in an index:

* distinct pattern strings, each with the sessions that hold it, so a
  pattern shared by many sessions is decided once;
* a trie keyed by the leading literal segments of each brace alternative of
  each live pattern. At a node, alternatives are grouped by what follows
  their literal segments (``**``, ``*/**``, ``*.py``, ``**/test_*.py`` …);
* work areas in a dictionary.

A new pattern is decided against all of them in one walk of the trie: its
automaton (all brace alternatives at once, see
:mod:`agentlanes.domain.patterns`) reads the literal segments of the nodes it
visits, and a subtree is skipped as soon as no position survives — no
pattern filed there can share a path with it. At each node it visits, one
memoised search per group decides every pattern of that group exactly and
spells the example. Staged paths walk the same trie alongside the sorted
paths, so a subtree is only visited when some staged path lies below it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter

from .patterns import CompiledPattern, Rest, compile_pattern


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


_OVERLAP_OBJECTS_CAP = 1 << 17


class _Group:
    """Live alternatives filed at one node that share what follows the literal segments."""

    __slots__ = ("members", "rest")

    def __init__(self, rest: Rest) -> None:
        self.rest = rest
        self.members: dict[str, int] = {}  # pattern -> index of its first such alternative


class _Node:
    __slots__ = ("children", "depth", "groups", "path")

    def __init__(self, path: str, depth: int) -> None:
        self.children: dict[str, _Node] = {}
        self.groups: dict[str, _Group] = {}  # Rest.key -> group
        self.path = path  # the literal segments above this node, joined by '/'
        self.depth = depth


class ConflictDetector:
    """Finds which live scopes a new scope collides with. Holds an index of the scopes."""

    def __init__(self, scopes: Iterable[Scope] = ()) -> None:
        self._scopes: dict[str, Scope] = {}
        self._order: dict[str, int] = {}
        self._next = 0
        # pattern -> {session id: index of the pattern in that scope}
        self._holders: dict[str, dict[str, int]] = {}
        self._areas: dict[str, dict[str, None]] = {}
        self._root = _Node("", 0)
        self._overlap_objects: dict[tuple[str, str], FileOverlap] = {}
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
        for n, pattern in enumerate(scope.patterns):
            holders = self._holders.get(pattern)
            if holders is None:
                holders = self._holders[pattern] = {}
                self._trie_add(pattern)
            holders.setdefault(sid, n)

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

    def _trie_add(self, pattern: str) -> None:
        for entry in compile_pattern(pattern).entries:
            node = self._root
            for seg in entry.prefix:
                child = node.children.get(seg)
                if child is None:
                    path = f"{node.path}/{seg}" if node.path else seg
                    child = node.children[seg] = _Node(path, node.depth + 1)
                node = child
            group = node.groups.get(entry.rest.key)
            if group is None:
                group = node.groups[entry.rest.key] = _Group(entry.rest)
            group.members.setdefault(pattern, entry.index)

    def _trie_remove(self, pattern: str) -> None:
        for entry in compile_pattern(pattern).entries:
            path = [self._root]
            for seg in entry.prefix:
                child = path[-1].children.get(seg)
                if child is None:
                    break
                path.append(child)
            else:
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

    def _overlaps_of(self, cp: CompiledPattern) -> dict[str, tuple[int, str]]:
        """Every live pattern sharing a path with ``cp``: {pattern: (alternative, example)}."""
        found: dict[str, tuple[int, str]] = {}
        memo: dict[tuple[int, bool, str], tuple[str, ...] | None] = {}
        stack = [(self._root, cp.starts)]
        while stack:
            node, mask = stack.pop()
            if node.groups:
                nonempty = node.depth > 0
                for key, group in node.groups.items():
                    at = (mask, nonempty, key)
                    if at in memo:
                        words = memo[at]
                    else:
                        words = memo[at] = cp.rest_words(mask, nonempty, group.rest)
                    if words is None:
                        continue
                    if not words:
                        example = node.path
                    elif node.path:
                        example = node.path + "/" + "/".join(words)
                    else:
                        example = "/".join(words)
                    for theirs, index in group.members.items():
                        seen = found.get(theirs)
                        if seen is None or index < seen[0]:
                            found[theirs] = (index, example)
            if not node.children:
                continue
            names = cp.next_literals(mask)
            if names is None:
                for word, child in node.children.items():
                    after = cp.advance(mask, word)
                    if after:
                        stack.append((child, after))
            else:
                for word in dict.fromkeys(names):
                    child = node.children.get(word)
                    if child is not None:
                        after = cp.advance(mask, word)
                        if after:
                            stack.append((child, after))
        return found

    def _claims_of(self, paths: list[str]) -> dict[str, dict[str, None]]:
        """Every live pattern claiming one of ``paths``: {pattern: {path: None}}."""
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
        stack = [(self._root, 0, len(keyed))]
        while stack:
            node, lo, hi = stack.pop()
            depth = node.depth
            for key, group in node.groups.items():
                if key == "**":  # a literal path: claims itself and all below
                    claimed = names[lo:hi]
                elif key == "*/**":  # 'dir/**': everything strictly below
                    claimed = [names[n] for n in range(lo, hi) if len(segs[n]) > depth]
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

    def _file_overlap(self, pattern: str, theirs: str, example: str) -> FileOverlap:
        # Verdicts are memoised, so the same pair comes back with the same
        # example; reusing the object saves most of a large answer's cost.
        key = (pattern, theirs)
        overlap = self._overlap_objects.get(key)
        if overlap is None or overlap.example != example:
            if len(self._overlap_objects) >= _OVERLAP_OBJECTS_CAP:
                self._overlap_objects.clear()
            overlap = self._overlap_objects[key] = FileOverlap(pattern, theirs, example)
        return overlap

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
        # session id -> list of (my rank, their rank, FileOverlap)
        hits: dict[str, list[tuple[int, int, FileOverlap]]] = {}
        mine = list(dict.fromkeys(patterns))
        for i, pattern in enumerate(mine):
            for theirs, (_, example) in self._overlaps_of(compile_pattern(pattern)).items():
                overlap = self._file_overlap(pattern, theirs, example)
                for sid, rank in self._holders[theirs].items():
                    entry = (i, rank, overlap)
                    found = hits.get(sid)
                    if found is None:
                        hits[sid] = [entry]
                    else:
                        found.append(entry)
        staged = list(dict.fromkeys(paths))
        if staged and self._holders:
            order = {p: len(mine) + k for k, p in enumerate(staged)}
            for theirs, claimed in self._claims_of(staged).items():
                pairs = [(order[path], FileOverlap(path, theirs, path)) for path in claimed]
                for sid, rank in self._holders[theirs].items():
                    entries = [(k, rank, overlap) for k, overlap in pairs]
                    found = hits.get(sid)
                    if found is None:
                        hits[sid] = entries
                    else:
                        found.extend(entries)
        area_sids = self._areas.get(declared_area, {}) if declared_area else {}
        sids = set(hits)
        sids.update(area_sids)
        sids.discard(exclude_session_id)  # type: ignore[arg-type]
        scopes = self._scopes
        if len(sids) * 8 > len(scopes):
            # Most scopes conflict: their insertion order is already oldest first.
            ordered = [sid for sid in scopes if sid in sids]
        else:
            ordered = sorted(sids, key=self._order.__getitem__)
        conflicts = []
        for sid in ordered:
            scope = scopes[sid]
            found = hits.get(sid)
            if not found:
                files: tuple[FileOverlap, ...] = ()
            elif len(found) == 1:
                files = (found[0][2],)
            else:
                found.sort(key=_RANK)
                files = tuple([h[2] for h in found])
            conflicts.append(
                Conflict(sid, scope.agent_name, scope.declared_area, sid in area_sids, files)
            )
        return conflicts


_RANK = itemgetter(0, 1)  # (my pattern or path, their pattern's place in their scope)
