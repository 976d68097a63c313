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

The walk reads patterns widely (a slash-less literal may be a directory), so
it finds every pair that overlaps at all; each pair found is then told
certain or not (:func:`_graded`), and an uncertain one carries the prefix of
its example that must be a directory.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

from .patterns import (
    GLOBSTAR,
    CompiledPattern,
    Rest,
    certain_example,
    compile_pattern,
    compile_strict,
    is_literal,
    names_maybe_directory,
    needs_directory,
    overlap,
    shared_rest,
)
from .segments import ANY_SEGMENT


@dataclass(frozen=True)
class Scope:
    """One live session's claim."""

    session_id: str
    agent_name: str
    declared_area: str | None
    patterns: tuple[str, ...]  # normalised


class _FileOverlapFields(NamedTuple):
    pattern: str
    their_pattern: str
    example: str
    certain: bool
    if_directory: str | None


class FileOverlap(_FileOverlapFields):
    """My pattern (or concrete path), theirs, a path both claim, and whether for certain.

    ``certain`` false: both claim ``example`` only if ``if_directory`` (a
    prefix of it, named by a slash-less literal) is a directory.

    The answer types are named tuples: a check-in against thousands of
    sessions builds thousands of them, and a tuple is the cheapest immutable
    record Python makes.
    """

    __slots__ = ()

    def _asdict(self) -> dict[str, Any]:  # type: ignore[override]
        """The wire shape (SPEC): ``if_directory`` only when the overlap is uncertain."""
        out: dict[str, Any] = {
            "pattern": self.pattern,
            "their_pattern": self.their_pattern,
            "example": self.example,
            "certain": self.certain,
        }
        if self.if_directory is not None:
            out["if_directory"] = self.if_directory
        return out


class Conflict(NamedTuple):
    """Another live session that my scope collides with, and why.

    ``certain``: the work areas are the same or some file overlap is certain
    (what ``block`` mode refuses on).
    """

    session_id: str
    agent_name: str
    declared_area: str | None
    overlapping_area: bool
    overlapping_files: tuple[FileOverlap, ...]
    certain: bool


class _Group:
    """Live alternatives filed at one node that share what follows the literal segments."""

    __slots__ = ("members", "rest")

    def __init__(self, rest: Rest) -> None:
        self.rest = rest
        self.members: dict[str, int] = {}  # pattern -> index of its first such alternative


# A pattern overlapping at least this many distinct live patterns has its
# answer kept. Kept answers hold at most this many overlaps in all per distinct
# live pattern, checked whenever an answer is kept (least recently used
# dropped first): their memory follows the index's, at most about four times
# it (docs/operations.md).
KEEP_ANSWERS_FROM = 256
KEEP_PER_PATTERN = 16
_PLAIN = ("**", "*/**")  # literal files and directories, and 'dir/**'
_DIRTY = object()


class _Node:
    __slots__ = ("_impure", "_plain", "_pure", "children", "depth", "groups", "path")

    def __init__(self, path: str, depth: int) -> None:
        self.children: dict[str, _Node] = {}
        self.groups: dict[str, _Group] = {}  # Rest.key -> group
        self.path = path  # the literal segments above this node, joined by '/'
        self.depth = depth
        self._plain: object = _DIRTY
        self._impure: object = _DIRTY
        self._pure: object = _DIRTY

    def plain_only(self) -> bool:
        """Whether every pattern filed in this subtree is plain (``**`` or ``*/**``
        after the prefix). Cached until the subtree changes."""
        if self._pure is _DIRTY:
            self._pure = all(key in _PLAIN for key in self.groups) and all(
                child.plain_only() for child in self.children.values()
            )
        return self._pure  # type: ignore[return-value]

    def plain_below(self) -> list[tuple[str, int, str, str]] | None:
        """Every (pattern, alternative, node path, rest key) filed in this subtree when
        it is plain only; else None. Cached until the subtree changes."""
        if self._plain is _DIRTY:
            found: list[tuple[str, int, str, str]] | None = None
            if self.plain_only():
                found = [
                    (p, i, self.path, key)
                    for key, group in self.groups.items()
                    for p, i in group.members.items()
                ]
                for child in self.children.values():
                    found.extend(child.plain_below())  # type: ignore[arg-type]
            self._plain = found
        return self._plain  # type: ignore[return-value]

    def impure_children(self) -> list[tuple[str, _Node]]:
        """(segment, child) for each child below which some pattern is not plain.
        Cached until the subtree changes."""
        if self._impure is _DIRTY:
            self._impure = [(w, c) for w, c in self.children.items() if not c.plain_only()]
        return self._impure  # type: ignore[return-value]


class ConflictDetector:
    """Finds which live scopes a new scope collides with. Holds an index of the scopes."""

    def __init__(
        self,
        scopes: Iterable[Scope] = (),
        *,
        keep_from: int = KEEP_ANSWERS_FROM,
        keep_per_pattern: int = KEEP_PER_PATTERN,
    ) -> None:
        self._scopes: dict[str, Scope] = {}
        self._order: dict[str, int] = {}
        self._next = 0
        # pattern -> the sessions holding it
        self._holders: dict[str, dict[str, None]] = {}
        # pattern -> a small integer, reused once no session holds the pattern
        self._ids: dict[str, int] = {}
        self._free_ids: list[int] = []
        # session id -> (id, agent name, area, its distinct patterns' ids in its
        # order), oldest first: what answering needs, without attribute lookups
        self._rows: dict[str, _Row] = {}
        self._areas: dict[str, dict[str, None]] = {}
        self._root = _Node("", 0)
        # pattern -> (node path, rest key) of its first plain alternative below
        # the root (a literal path, or 'dir/**'); and that alternative's
        # index, for the few patterns where it is not 0
        self._plain_entries: dict[str, tuple[str, str]] = {}
        self._plain_later: dict[str, int] = {}
        # Broad patterns' answers, kept up to date as live patterns come and go:
        # my pattern -> {their pattern: (overlap,)}, least recently used first.
        self._kept: dict[str, dict[str, tuple[FileOverlap]]] = {}
        self._keep_from = keep_from
        self._keep_per_pattern = keep_per_pattern
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
        ids = self._ids
        for pattern in scope.patterns:
            holders = self._holders.get(pattern)
            if holders is None:
                holders = self._holders[pattern] = {}
                ids[pattern] = self._free_ids.pop() if self._free_ids else len(ids)
                self._trie_add(pattern)
                for mine, kept in self._kept.items():
                    found = overlap(mine, pattern)
                    if found is not None:
                        kept[pattern] = (_new(FileOverlap, (mine, pattern, *found)),)
            holders[sid] = None
        pids = tuple([ids[p] for p in dict.fromkeys(scope.patterns)])
        self._rows[sid] = (sid, scope.agent_name, scope.declared_area, pids)

    def remove(self, session_id: str) -> None:
        """Forget a scope (no error if unknown)."""
        scope = self._scopes.pop(session_id, None)
        if scope is not None:
            self._unindex(scope)
            del self._order[session_id]
            del self._rows[session_id]

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
                self._free_ids.append(self._ids.pop(pattern))
                self._trie_remove(pattern)
                for kept in self._kept.values():
                    kept.pop(pattern, None)

    def _trie_add(self, pattern: str) -> None:
        entries = compile_pattern(pattern).entries
        for entry in entries:
            node = self._root
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
            self._plain_entries[pattern] = (path, key)
            if index:
                self._plain_later[pattern] = index

    def _trie_remove(self, pattern: str) -> None:
        self._plain_entries.pop(pattern, None)
        self._plain_later.pop(pattern, None)
        for entry in compile_pattern(pattern).entries:
            path = [self._root]
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

    def _overlaps_of(self, cp: CompiledPattern) -> dict[str, str]:
        """Every live pattern sharing a path with ``cp`` under the wide reading (``cp``
        is compiled so): {pattern: example} (see :func:`_record` for ``later``)."""
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
            flat = self._plain_tails(cp, cp.starts, plain_memo)
        if flat is not None:
            found = {t: path + flat[key] for t, (path, key) in self._plain_entries.items()}
            later = dict(self._plain_later)
        stack = [(self._root, cp.starts)]
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
                plain = self._plain_tails(cp, mask, plain_memo)
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
                    child = node.children.get(word)
                    if child is not None:
                        after = cp.advance(mask, word)
                        if after:
                            stack.append((child, after))
        return found

    def _answer(self, pattern: str) -> dict[str, tuple[FileOverlap]]:
        """{their pattern: (overlap,)} for every live pattern overlapping ``pattern``;
        the caller may change the dict it gets.

        A broad pattern (``**/*.py`` overlaps every literal path, by the claim
        rule) overlaps much of the index, and walking the index for it again
        on every check-in is most of that check-in's time. Its answer is kept
        instead, and kept exact by :meth:`add` and :meth:`remove`, which
        decide each pattern that starts or stops being live against the kept
        ones (one memoised pair verdict each).
        """
        kept = self._kept.pop(pattern, None)
        if kept is None:
            these = _graded(pattern, self._overlaps_of(compile_pattern(pattern)))
            budget = self._keep_per_pattern * len(self._ids)
            if not self._keep_from <= len(these) <= budget:
                return these
            kept = these
            held = len(kept) + sum(map(len, self._kept.values()))
            while held > budget:  # drop the least recently used
                held -= len(self._kept.pop(next(iter(self._kept))))
        self._kept[pattern] = kept  # most recently used last
        return kept.copy()

    def forget_kept_answers(self) -> None:
        """Drop every kept answer (they are rebuilt on demand)."""
        self._kept.clear()

    @staticmethod
    def _plain_tails(
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
        tails: dict[str, str] | None = {}
        for key, rest in _PLAIN_RESTS.items():
            words = cp.rest_words(start, True, rest)
            if words is None:
                tails = None
                break
            tails[key] = "/" + "/".join(words) if words else ""  # type: ignore[index]
        memo[sticky] = tails
        return tails

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
        ``patterns`` (normalised; for certain, or only if a slash-less literal
        is a directory) or claims one of ``paths`` (normalised concrete files,
        reported with ``example`` = the path; always certain: a file that
        exists has directories for parents). A conflict is ``certain`` when
        the areas are the same or one of its overlaps is certain. A conflict's
        overlaps follow their patterns in their scope's order; the overlaps
        with one of their patterns follow my patterns, then my paths, in
        order.
        """
        # Overlaps are found per distinct live pattern ("theirs"), never per
        # session: hits[theirs] lists the overlaps with theirs in my order,
        # and every session holding theirs shares that tuple. A session then
        # only looks up its own few patterns and joins their tuples in its
        # own order, so a large answer costs little more than one tuple per
        # conflicting session.
        hits: dict[str, tuple[FileOverlap, ...]] = {}
        mine = list(dict.fromkeys(patterns))
        for pattern in mine:
            these = self._answer(pattern)
            # Merge the smaller into the larger; earlier patterns' overlaps first.
            if len(hits) <= len(these):
                for theirs, earlier in hits.items():
                    later = these.get(theirs)
                    these[theirs] = earlier if later is None else earlier + later
                hits = these
            else:
                for theirs, later in these.items():
                    earlier = hits.get(theirs)
                    hits[theirs] = later if earlier is None else earlier + later
        staged = list(dict.fromkeys(paths))
        if staged and self._holders:
            order = {p: k for k, p in enumerate(staged)}
            for theirs, claimed in self._claims_of(staged).items():
                ranked = sorted(claimed, key=order.get)
                # A staged path is a file that exists, so its parents are
                # directories: every claim on it is certain (docs/patterns.md).
                claims = tuple([_new(FileOverlap, (p, theirs, p, True, None)) for p in ranked])
                # Paths come after every pattern of mine.
                hits[theirs] = hits.get(theirs, ()) + claims
        area_sids = self._areas.get(declared_area, {}) if declared_area else {}
        ids = self._ids
        rows: Iterable[_Row]
        if len(hits) * 8 > len(ids):
            # Many live patterns overlap: reading every row, oldest first, is
            # cheaper than collecting their holders.
            rows = self._rows.values()
        else:
            holders = self._holders
            sids: set[str] = set(area_sids)
            for theirs in hits:
                sids.update(holders[theirs])
            every = self._rows
            rows = [every[sid] for sid in sorted(sids, key=self._order.__getitem__)]
        # Pattern id -> its overlaps; () (false) where there are none.
        by_id: list[tuple[FileOverlap, ...]] = [()] * (len(ids) + len(self._free_ids))
        for theirs, overlaps in hits.items():
            by_id[ids[theirs]] = overlaps
        overlaps_of = by_id.__getitem__
        conflicts: list[Conflict] = []
        add = conflicts.append
        for sid, name, area, pids in rows:
            # A few short tuples each: summing them beats chaining (measured).
            files = sum(map(overlaps_of, pids), ())
            if (files or sid in area_sids) and sid != exclude_session_id:
                same_area = sid in area_sids
                sure = same_area or any(map(_is_certain, files))
                add(_new(Conflict, (sid, name, area, same_area, files, sure)))
        return conflicts


_Row = tuple[str, str, str | None, tuple[int, ...]]
_is_certain = itemgetter(3)  # FileOverlap.certain, read without a Python-level call
# tuple.__new__ builds a named tuple without the Python-level call its
# constructor makes: noticeably cheaper when an answer holds thousands.
_new = tuple.__new__
_PLAIN_RESTS = {
    "**": shared_rest(((GLOBSTAR,),)),
    "*/**": shared_rest(((ANY_SEGMENT, GLOBSTAR),)),
}


def _graded(mine: str, found: dict[str, str]) -> dict[str, tuple[FileOverlap]]:
    """Each overlap found under the wide reading ({their pattern: example}), told
    certain or not (SPEC "File patterns"): {their pattern: (overlap,)}.

    The walk finds every pair that overlaps at all; a pair is certain when both
    claim some path for certain (:func:`certain_example`, inlined here for the
    common cases: an answer may hold thousands). An uncertain pair keeps the
    walk's example, with the prefix of it that must be a directory.
    """
    mine_open = names_maybe_directory(mine)
    mine_literal = is_literal(mine)
    strict = None if mine_literal else compile_strict(mine)
    tail = "" if strict is None else strict.fixed_tail  # '.md' for '**/*.md'
    prefixes: dict[tuple[str, ...], int] = {}  # literal paths share their directories
    out: dict[str, tuple[FileOverlap]] = {}
    for theirs, example in found.items():
        theirs_open = names_maybe_directory(theirs)
        theirs_literal = theirs_open and is_literal(theirs)
        if not mine_open and not theirs_open:
            sure: str | None = example  # both read the same strictly and widely
        elif theirs_literal:
            # It claims only its own path for certain: does mine claim that path?
            if example == theirs and not mine_open:
                sure = theirs  # mine claims it, and reads the same either way
            elif strict is None:
                sure = theirs if theirs == mine else None
            elif not theirs.endswith(tail):
                sure = None  # mine matches only paths ending with its tail
            else:
                words = tuple(theirs.split("/"))
                sure = theirs if strict.mask_after(words, prefixes) & strict.ends else None
        elif mine_literal and not theirs_open and "{" not in theirs:
            # Mine claims only its own path for certain, theirs (one alternative, read
            # the same either way) claims for certain all it claims, and the walk
            # spelled the shortest path both claim: certain exactly when that is mine.
            sure = mine if example == mine else None
        else:
            sure = certain_example(mine, theirs, example)
        if sure is not None:
            out[theirs] = (_new(FileOverlap, (mine, theirs, sure, True, None)),)
            continue
        # Uncertain: the prefix of the example that must be a directory. A literal
        # side needs its own path (unless the example is it), a side that reads the
        # same either way needs nothing.
        if not mine_open and theirs_literal:
            # Mine would claim theirs itself for certain: the example lies below it.
            out[theirs] = (_new(FileOverlap, (mine, theirs, example, False, theirs)),)
            continue
        if mine_literal:
            k = 0 if example == mine else mine.count("/") + 1
        else:
            k = needs_directory(mine, example) if mine_open else 0
        if theirs_open:
            if theirs_literal:
                k = max(k, 0 if example == theirs else theirs.count("/") + 1)
            else:
                k = max(k, needs_directory(theirs, example))
        need = "/".join(example.split("/")[:k])
        out[theirs] = (_new(FileOverlap, (mine, theirs, example, False, need)),)
    return out


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
