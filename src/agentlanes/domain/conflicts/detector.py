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
:mod:`agentlanes.domain.globs`) reads the literal segments of the nodes it
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

from collections.abc import Iterable, Sequence
from itertools import filterfalse, islice
from operator import itemgetter

from agentlanes.domain.globs.compiler import (
    compile_pattern,
    compile_strict,
    is_literal,
    names_maybe_directory,
)
from agentlanes.domain.globs.overlap import certain_example, needs_directory, overlap

from .model import Conflict, FileOverlap, Scope, SearchTooLong, work_clock
from .trie import PatternTrie

# A pattern overlapping at least this many distinct live patterns has its
# answer kept. Kept answers hold at most this many overlaps in all per distinct
# live pattern, checked whenever an answer is kept (least recently used
# dropped first): their memory follows the index's, at most about four times
# it (docs/operations.md).
KEEP_ANSWERS_FROM = 256
KEEP_PER_PATTERN = 16


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
        self._trie = PatternTrie()
        # Broad patterns' answers, kept up to date as live patterns come and go:
        # my pattern -> {their pattern: (overlap,)}, least recently used first.
        self._kept: dict[str, dict[str, tuple[FileOverlap, ...]]] = {}
        self._keep_from = keep_from
        self._keep_per_pattern = keep_per_pattern
        for scope in scopes:
            self.add(scope)

    def __len__(self) -> int:
        return len(self._scopes)

    def scope_of(self, session_id: str) -> Scope | None:
        """The scope held for ``session_id`` (as last added), or None."""
        return self._scopes.get(session_id)

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
        patterns = [p for p in scope.patterns if _usable(p)]
        for pattern in patterns:
            holders = self._holders.get(pattern)
            if holders is None:
                holders = self._holders[pattern] = {}
                ids[pattern] = self._free_ids.pop() if self._free_ids else len(ids)
                self._trie.add(pattern)
                for mine, kept in self._kept.items():
                    found = overlap(mine, pattern)
                    if found is not None:
                        kept[pattern] = (_new(FileOverlap, (mine, pattern, *found)),)
            holders[sid] = None
        pids = tuple([ids[p] for p in dict.fromkeys(patterns)])
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
            in_area = self._areas.get(scope.declared_area, {})
            in_area.pop(sid, None)
            if not in_area:
                self._areas.pop(scope.declared_area, None)
        for pattern in scope.patterns:
            holders = self._holders.get(pattern)
            if holders is None:
                continue
            holders.pop(sid, None)
            if not holders:
                del self._holders[pattern]
                self._free_ids.append(self._ids.pop(pattern))
                self._trie.remove(pattern)
                for kept in self._kept.values():
                    kept.pop(pattern, None)

    def _answer(
        self, pattern: str, deadline: float | None = None
    ) -> dict[str, tuple[FileOverlap, ...]]:
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
            cp = compile_pattern(pattern)
            trie = self._trie
            found = trie.overlaps_of(cp) if deadline is None else trie.overlaps_of(cp, deadline)
            these = _graded(pattern, found)
            budget = self._keep_per_pattern * len(self._ids)
            if not self._keep_from <= len(these) <= budget:
                return these
            kept = these
            held = len(kept) + sum(map(len, self._kept.values()))
            while held > budget:  # drop the least recently used
                held -= len(self._kept.pop(next(iter(self._kept))))
        self._kept[pattern] = kept  # most recently used last
        return kept.copy()

    def find(
        self,
        *,
        declared_area: str | None = None,
        patterns: Sequence[str] = (),
        paths: Sequence[str] = (),
        exclude_session_id: str | None = None,
        deadline: float | None = None,
        max_files: int | None = None,
    ) -> list[Conflict]:
        """One Conflict per other live scope that overlaps, oldest first.

        ``deadline`` (``time.work_clock()``): :class:`SearchTooLong` once it has passed
        (checked between decisions, so a search of long patterns against many is cut
        off, not left to run). ``max_files``: each conflict keeps at most that many
        overlaps, certain ones first, and says when it had more (``files_truncated``);
        an answer against hundreds of sessions then holds a few of each, not all.

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
        mine = [p for p in dict.fromkeys(patterns) if _usable(p)]
        for pattern in mine:
            these = self._answer(pattern, deadline)
            # Merge the smaller into the larger; earlier patterns' overlaps first.
            if len(hits) <= len(these):
                for theirs, earlier in hits.items():
                    later = these.get(theirs)
                    these[theirs] = earlier if later is None else earlier + later
                hits = these
            else:
                for theirs, added in these.items():
                    before = hits.get(theirs)
                    hits[theirs] = added if before is None else before + added
        staged = list(dict.fromkeys(paths))
        if staged and self._holders:
            order = {p: k for k, p in enumerate(staged)}
            for theirs, claimed in self._trie.claims_of(staged, deadline).items():
                ranked = sorted(claimed, key=order.__getitem__)
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
        if max_files is not None:
            # Per overlapping live pattern: whether some overlap with it is certain (only
            # those: a pass over every live pattern would cost each search the swarm).
            sure_of = {ids[theirs]: any(map(_is_certain, t)) for theirs, t in hits.items()}
            return self._bounded_rows(
                rows, by_id, sure_of, area_sids, exclude_session_id, deadline, max_files
            )
        for sid, name, area, pids in rows:
            # A few short tuples each: summing them beats chaining (measured).
            files = sum(map(overlaps_of, pids), ())
            if (files or sid in area_sids) and sid != exclude_session_id:
                same_area = sid in area_sids
                sure = same_area or any(map(_is_certain, files))
                add(_new(Conflict, (sid, name, area, same_area, files, sure, False, *_UNGRADED)))
        return conflicts

    @staticmethod
    def _bounded_rows(
        rows: Iterable[_Row],
        by_id: list[tuple[FileOverlap, ...]],
        sure_of: dict[int, bool],
        area_sids: dict[str, None],
        exclude_session_id: str | None,
        deadline: float | None,
        max_files: int,
    ) -> list[Conflict]:
        """The conflicts of ``rows``, each with at most ``max_files`` overlaps (certain
        ones first): the work per session follows its own patterns and ``max_files``,
        never the product of its patterns and mine."""
        conflicts: list[Conflict] = []
        for n, (sid, name, area, pids) in enumerate(rows):
            if deadline is not None and not n % 64 and work_clock() > deadline:
                raise SearchTooLong(n)
            if sid == exclude_session_id:
                continue
            same_area = sid in area_sids
            hit = [pid for pid in pids if by_id[pid]]
            if not hit and not same_area:
                continue
            certain_ids = [pid for pid in hit if sure_of[pid]]
            sure = same_area or bool(certain_ids)
            if sum([len(by_id[pid]) for pid in hit]) <= max_files:  # all of them, in order
                files_all = sum([by_id[pid] for pid in hit], ())
                conflicts.append(
                    _new(Conflict, (sid, name, area, same_area, files_all, sure, False, *_UNGRADED))
                )
                continue
            # Too many: certain ones first.
            files: list[FileOverlap] = []
            room = max_files + 1  # one more than shown: then there were more
            for pid in certain_ids:
                files.extend(islice(filter(_is_certain, by_id[pid]), room - len(files)))
                if len(files) >= room:
                    break
            if len(files) < room:
                for pid in hit:
                    files.extend(islice(filterfalse(_is_certain, by_id[pid]), room - len(files)))
                    if len(files) >= room:
                        break
            more = len(files) > max_files
            shown = tuple(files[:max_files])
            conflicts.append(
                _new(Conflict, (sid, name, area, same_area, shown, sure, more, *_UNGRADED))
            )
        return conflicts


_Row = tuple[str, str, str | None, tuple[int, ...]]


def _usable(pattern: str) -> bool:
    """Whether a stored pattern compiles (a dictionary look-up once it has). Every
    pattern is checked before it is stored, but rows written before a rule was added
    (``{,}`` was once let through) may hold one that does not: it claims nothing, and
    is passed over rather than failing every read of its project."""
    try:
        compile_pattern(pattern)
    except ValueError:
        return False
    return True


_is_certain = itemgetter(3)  # FileOverlap.certain, read without a Python-level call
# tuple.__new__ builds a named tuple without the Python-level call its
# constructor makes: noticeably cheaper when an answer holds thousands.
_new = tuple.__new__
# A conflict's line-level fields before it is graded (Conflict's defaults).
_UNGRADED = (None, (), False, ())


def _graded(mine: str, found: dict[str, str]) -> dict[str, tuple[FileOverlap, ...]]:
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
    out: dict[str, tuple[FileOverlap, ...]] = {}
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
