"""Whose lines are whose in a working tree several agents share (SPEC "Many agents, one
working tree"): a blame of the working copy, kept by the agents' hooks.

Per file, the ledger keeps the file's content as last seen, the owner of each of its
lines (the agent whose tool call last changed it; None: nobody known — unchanged, or
changed by a person's editor), tombstones for deleted lines (where, and who deleted
them), and per agent when it last changed the file and when it last read or wrote it.

- Before a tool call touches a file (``observe(..., None)``): whatever changed since the
  ledger last looked changed without a hook, so its lines belong to nobody known.
- After an agent's tool call (``observe(..., agent)``): the lines it changed become the
  agent's, a deletion leaves the agent's tombstone, the rest keep their owners, mapped
  through the diff of before and after.
- An agent's edits against ``HEAD`` (``owned_ranges``) are the hunks of
  ``git diff HEAD`` (the merge's own diff) that hold a line or a tombstone it owns: lines
  equal to ``HEAD`` again (committed, or undone) are in no hunk, so nobody's edits.
- A whole-file write is stale (``stale``) when another live agent changed the file after
  this agent last read or wrote it.

Files that are binary or larger than ``MAX_BYTES`` are followed as a whole (who changed
them and when, no lines). One JSON file per followed file under
``<git dir>/agentlanes/ledger/``, each read and rewritten under an exclusive ``flock``:
the hooks of several agents update it at once. Standard library only (every hook imports
this); the mapping diff (``difflib``) is imported only when a file changed.
"""

from __future__ import annotations

import json
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

LEDGER_DIR = "ledger"
# Larger files (and binary ones) are followed as a whole: who changed them, no lines.
MAX_BYTES = 1_000_000
MAX_LINES = 20_000
# One hunk of ``git diff -U0``: base start, base count, new start, new count (git's own
# numbers: a count of 0 starts after the line it names).
Hunk = tuple[int, int, int, int]


class Entry:
    """One followed file, as the ledger keeps it (see the module doc)."""

    def __init__(self, path: str, data: dict[str, Any] | None = None) -> None:
        data = data or {}
        self.path = path
        self.exists = bool(data.get("exists", False))
        self.whole = bool(data.get("whole", False))
        self.sig: list[int] = list(data.get("sig") or [])
        self.lines: list[str] = list(data.get("lines") or [])
        self.owners: list[str | None] = list(data.get("owners") or [None] * len(self.lines))
        self.tombs: list[list[Any]] = [list(t) for t in data.get("tombs") or []]
        self.changed: dict[str, float] = dict(data.get("changed") or {})
        self.seen: dict[str, float] = dict(data.get("seen") or {})

    def data(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "exists": self.exists,
            "whole": self.whole,
            "sig": self.sig,
            "lines": self.lines,
            "owners": self.owners,
            "tombs": self.tombs,
            "changed": self.changed,
            "seen": self.seen,
        }

    def owned_lines(self, agent: str) -> list[int]:
        """The 1-based lines of the current content that ``agent`` owns."""
        return [n + 1 for n, owner in enumerate(self.owners) if owner == agent]

    def owns_any(self, agent: str) -> bool:
        if self.whole:
            return agent in self.changed
        return agent in self.owners or any(owner == agent for _, owner in self.tombs)


# -- reading a file --------------------------------------------------------------------------


class Content:
    """A file's content as the ledger compares it: its lines (split at ``\\n`` only, as
    git counts them), or only a signature (length, CRC-32) when it is followed as a whole;
    ``exists`` False for a missing file."""

    def __init__(self, raw: bytes | None) -> None:
        self.exists = raw is not None
        raw = raw or b""
        self.whole = len(raw) > MAX_BYTES or b"\0" in raw[:8000]
        self.lines: list[str] = []
        self.sig: list[int] = []
        if self.whole:
            import zlib

            self.sig = [len(raw), zlib.crc32(raw)]
        else:
            parts = raw.decode("utf-8", "surrogateescape").split("\n")
            # Lines end at "\n" only, as git counts them; a last line without one is kept.
            self.lines = [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
            if len(self.lines) > MAX_LINES:
                import zlib

                self.whole, self.lines, self.sig = True, [], [len(raw), zlib.crc32(raw)]


def read_content(root: str, path: str) -> Content:
    try:
        with open(os.path.join(root, path), "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return Content(None)
    except OSError:
        return Content(None)
    return Content(raw)


def _same(entry: Entry, content: Content) -> bool:
    if entry.exists != content.exists or entry.whole != content.whole:
        return False
    return entry.sig == content.sig if content.whole else entry.lines == content.lines


# -- mapping owners through a change ---------------------------------------------------------


def carry(entry: Entry, content: Content, owner: str | None) -> None:
    """Move ``entry`` to ``content``: changed and inserted lines become ``owner``'s, each
    deletion leaves ``owner``'s tombstone (none for an unknown owner), unchanged lines
    keep theirs (mapped through the diff), and earlier tombstones move with their place."""
    if content.whole or entry.whole:
        entry.whole, entry.sig, entry.lines, entry.owners, entry.tombs = (
            content.whole,
            content.sig,
            content.lines,
            [owner] * len(content.lines),
            [],
        )
        entry.exists = content.exists
        return
    from difflib import SequenceMatcher

    ops = SequenceMatcher(None, entry.lines, content.lines, autojunk=False).get_opcodes()
    owners: list[str | None] = []
    tombs: list[list[Any]] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            owners.extend(entry.owners[i1:i2])
        else:
            owners.extend([owner] * (j2 - j1))
            if j2 == j1 and owner is not None:  # lines deleted, none in their place
                tombs.append([j1, owner])
    for gap, who in entry.tombs:
        tombs.append([_map_gap(ops, int(gap), len(content.lines)), who])
    entry.tombs = [list(t) for t in dict.fromkeys((g, w) for g, w in tombs)]
    entry.lines, entry.owners, entry.exists = content.lines, owners, content.exists


def _map_gap(ops: Sequence[tuple[str, int, int, int, int]], gap: int, size: int) -> int:
    """Where the gap before old line ``gap + 1`` lies in the new lines: inside or at the
    edge of a changed block, at that block's start; inside an unchanged one, as far in."""
    kept = None
    for tag, i1, i2, j1, _ in ops:
        if i1 <= gap <= i2:
            if tag != "equal":
                return j1
            if kept is None:
                kept = j1 + gap - i1
    return kept if kept is not None else size


# -- the ledger ------------------------------------------------------------------------------


class Ledger:
    """The ledger of one working tree: ``<state dir>/ledger`` (``state_dir`` is
    ``<git dir>/agentlanes``, ``LocalConfig.state_dir``)."""

    def __init__(self, state_dir: str, root: str) -> None:
        self.dir = os.path.join(state_dir, LEDGER_DIR)
        self.root = root

    def file_of(self, path: str) -> str:
        import hashlib

        return os.path.join(
            self.dir, hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest() + ".json"
        )

    def has(self, path: str) -> bool:
        return os.path.exists(self.file_of(path))

    def load(self, path: str) -> Entry | None:
        """The entry as last written (no lock, not brought up to date), or None."""
        try:
            with open(self.file_of(path), encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return None
        return Entry(path, data) if isinstance(data, dict) else None

    def locked(self, path: str, keep: bool = True) -> _Locked:
        """The entry under its lock; rewritten on the way out when ``keep``. Readers bring
        the entry up to date in memory only (``keep=False``): a change on disk that no
        hook has placed yet may be another agent's tool call whose after-hook is about to
        run, and written back as nobody's it would never be that agent's."""
        return _Locked(self, path, keep)

    def _current(self, path: str) -> Entry:
        """``path``'s entry brought up to date with the file on disk, in memory only (what
        changed without a hook is nobody's here; the ledger keeps it unplaced)."""
        with self.locked(path, keep=False) as (entry, _):
            content = read_content(self.root, path)
            if not _same(entry, content):
                carry(entry, content, None)
        return entry

    def observe(
        self,
        path: str,
        owner: str | None,
        *,
        wrote: bool = False,
        before: Content | None = None,
        now: float | None = None,
    ) -> bool:
        """Bring ``path``'s entry up to date with the file on disk, the change made by
        ``owner`` (None: by nobody known). ``wrote``: ``owner`` just wrote it (its last
        read or write is now). ``before``: the content a new entry starts from (default:
        the file as it is now, so nothing changed). Whether ``owner`` changed anything."""
        now = time.time() if now is None else now
        with self.locked(path) as found:
            entry, fresh = found
            content = read_content(self.root, path)
            if fresh and before is not None:
                carry(entry, before, None)
            elif fresh:
                carry(entry, content, None)
            changed = not _same(entry, content)
            if changed:
                carry(entry, content, owner)
                if owner is not None:
                    entry.changed[owner] = now
            if wrote and owner is not None:
                entry.seen[owner] = now
        return changed and owner is not None

    def read(self, path: str, agent: str, now: float | None = None) -> None:
        """``agent`` read ``path``: a whole-file write after this is not stale. Only for a
        followed file (one nobody changed needs no record: a change creates the entry).
        What changed on disk since is left for the hooks to place: it may be another
        agent's tool call whose after-hook has not run yet."""
        if not self.has(path):
            return
        now = time.time() if now is None else now
        with self.locked(path) as (entry, _):
            entry.seen[agent] = now

    def stale(self, path: str, agent: str, live: Iterable[str]) -> list[tuple[str, float, str]]:
        """Who of ``live`` (other live agents of this tree) changed ``path`` after
        ``agent`` last read or wrote it, and still has lines in it: (agent, when, which
        lines), oldest first. The entry is brought up to date first."""
        if not self.has(path):
            return []
        live = set(live) - {agent}
        entry = self._current(path)
        mine = entry.seen.get(agent, 0.0)
        found = []
        for other, when in sorted(entry.changed.items(), key=lambda kv: kv[1]):
            if other not in live or when <= mine or not entry.owns_any(other):
                continue
            found.append((other, when, _lines_text(entry, other)))
        return found

    def owned_ranges(
        self, path: str, agent: str, hunks: list[Hunk], new_file: bool
    ) -> list[tuple[int, int]] | None:
        """The base ranges of ``hunks`` (``git diff -U0 HEAD`` of ``path``) that hold a
        line or tombstone of ``agent``'s; for a file new since ``HEAD`` (``new_file``)
        ``[(1, 0)]`` when the agent has a line in it. None when the ledger does not follow
        the file (no hook saw it change)."""
        if not self.has(path):
            return None
        entry = self._current(path)
        if new_file:
            return [(1, 0)] if entry.owns_any(agent) else []
        return _owned_hunks(entry, agent, hunks)

    def owned_after(
        self, path: str, agent: str, text: str, hunks: list[Hunk]
    ) -> list[tuple[int, int]] | None:
        """As ``owned_ranges``, for the file as ``agent``'s coming tool call will leave it
        (``text``): its changes become the agent's, in memory only, and ``hunks`` are git's
        diff of ``HEAD`` to ``text``. None when the ledger does not follow the file."""
        if not self.has(path):
            return None
        entry = self._current(path)
        coming = Content(text.encode("utf-8", "surrogateescape"))
        if not _same(entry, coming):
            carry(entry, coming, agent)
        return _owned_hunks(entry, agent, hunks)

    def owners_in(self, path: str, content: Content, hunks: list[Hunk]) -> dict[str, list[int]]:
        """Whose lines ``hunks`` (of ``git diff HEAD`` to ``content``: the staged copy,
        say) hold, mapped from the working file's owners: per agent, the numbers of its
        lines in ``content`` (its tombstones as the line after them). Empty when the
        ledger does not follow the file."""
        if not self.has(path):
            return {}
        staged = self._current(path)
        if not _same(staged, content):
            carry(staged, content, None)  # lines only the working file has drop out
        found: dict[str, list[int]] = {}
        for _, _, c, d in hunks:
            for n in range(c, c + d):
                who = None if staged.whole else staged.owners[n - 1]
                if who is not None:
                    found.setdefault(who, []).append(n)
            gaps = range(c - 1, c + d) if d else range(c, c + 1)
            for gap, who in staged.tombs:
                if int(gap) in gaps:
                    found.setdefault(str(who), []).append(int(gap) + 1)
        if staged.whole and hunks:
            for who in staged.changed:
                found.setdefault(who, [])
        return {who: sorted(set(ns)) for who, ns in found.items()}


def _owned_hunks(entry: Entry, agent: str, hunks: list[Hunk]) -> list[tuple[int, int]]:
    """The base ranges of ``hunks`` that hold a line or tombstone of ``agent``'s."""
    return [
        (a, a + b - 1) if b else (a + 1, a) for a, b, c, d in hunks if _hunk_is(entry, agent, c, d)
    ]


def _hunk_is(entry: Entry, agent: str, start: int, count: int) -> bool:
    """Whether the hunk with new lines ``start``..``start+count-1`` (git's numbers) holds
    a line or a tombstone of ``agent``'s (a tombstone on either edge of it counts: git
    makes one hunk of a deletion next to a change)."""
    if entry.whole:
        return agent in entry.changed
    if count:
        if agent in entry.owners[start - 1 : start - 1 + count]:
            return True
        gaps = range(start - 1, start + count)
    else:
        gaps = range(start, start + 1)
    return any(owner == agent and int(gap) in gaps for gap, owner in entry.tombs)


def _lines_text(entry: Entry, agent: str) -> str:
    """``lines 3-5, 9`` / ``lines deleted after line 7`` / ``the whole file``."""
    if entry.whole:
        return "the file"
    lines = entry.owned_lines(agent)
    parts = [lines_text(lines)] if lines else []
    gaps = sorted({int(g) for g, owner in entry.tombs if owner == agent})
    if gaps:
        parts.append("lines deleted after line " + ", ".join(str(g) for g in gaps[:5]))
    return "; ".join(parts)


def lines_text(numbers: Iterable[int]) -> str:
    """``line 7`` / ``lines 3-5, 9`` for sorted line numbers."""
    from agentlanes.client.report import ranges_text

    spans: list[tuple[int, int]] = []
    for n in numbers:
        if spans and spans[-1][1] == n - 1:
            spans[-1] = (spans[-1][0], n)
        else:
            spans.append((n, n))
    single = len(spans) == 1 and spans[0][0] == spans[0][1]
    return f"{'line' if single else 'lines'} {ranges_text(spans)}"


class _Locked:
    """An entry read and rewritten under an exclusive ``flock`` on its file; yields
    ``(entry, fresh)`` (fresh: the ledger had none)."""

    def __init__(self, ledger: Ledger, path: str, keep: bool = True) -> None:
        self.ledger = ledger
        self.path = path
        self.keep = keep

    def __enter__(self) -> tuple[Entry, bool]:
        os.makedirs(self.ledger.dir, mode=0o700, exist_ok=True)
        fd = os.open(self.ledger.file_of(self.path), os.O_RDWR | os.O_CREAT, 0o600)
        self.fh = os.fdopen(fd, "r+", encoding="utf-8", errors="surrogateescape")
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:
            pass
        try:
            data = json.loads(self.fh.read() or "null")
        except ValueError:
            data = None
        fresh = not isinstance(data, dict)
        self.entry = Entry(self.path, None if fresh else data)
        return self.entry, fresh

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None and self.keep:
                self.fh.seek(0)
                self.fh.truncate()
                self.fh.write(json.dumps(self.entry.data(), separators=(",", ":")))
                self.fh.flush()
        finally:
            self.fh.close()  # releases the lock


# -- git's hunks -----------------------------------------------------------------------------


def parse_hunks(diff: str) -> dict[str, list[Hunk]]:
    """Each file's hunks (base start, base count, new start, new count) in
    ``git diff -U0`` output, by ``b/`` path (a deleted file by its old path). A hunk's
    body is as long as its header says (a body line that looks like a header stays body),
    as ``domain.edits.parse_unified_zero`` reads the same text."""
    from agentlanes.domain.edits import diff_path  # git's quoting of names

    out: dict[str, list[Hunk]] = {}
    old_path: str | None = None
    path: str | None = None
    left = 0  # body lines of the current hunk still to come
    for line in diff.split("\n"):
        if left and line[:1] in ("-", "+", "\\"):
            if line[:1] != "\\":
                left -= 1
            continue
        left = 0
        if line.startswith("--- "):
            old_path = diff_path(line[4:].rstrip("\r"))
        elif line.startswith("+++ "):
            path = diff_path(line[4:].rstrip("\r")) or old_path
        elif line.startswith("@@ ") and path is not None:
            old, new = line.split(" ")[1:3]
            a, b = _side(old)
            c, d = _side(new)
            out.setdefault(path, []).append((a, b, c, d))
            left = b + d
    return out


def _side(text: str) -> tuple[int, int]:
    start, _, count = text[1:].partition(",")
    return int(start), int(count or "1")
