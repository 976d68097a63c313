"""Line-level edits and how two of them meet (SPEC "Line-level claims").

An agent reports, per file it changed, the blob id of the file at ``HEAD`` (``base``; None
for a file new since ``HEAD``) and the lines of that base its hunks replace, read off
``git diff -U0``: a hunk ``@@ -a,b +c,d @@`` replaces base lines ``[a, a+b-1]`` (1-based,
inclusive); a pure insertion (``b = 0``, after line ``a``) replaces none and is written
``[a+1, a]`` (end = start - 1). A file new since ``HEAD`` is one insertion at the top,
``[1, 0]``; a binary file, whose lines git does not print, is every line (``WHOLE_FILE``).

Two sessions' changes to one file on one base *meet* as git's three-way merge decides it
(``xdl_merge``: two changes conflict unless one ends before the other starts with at least
one unchanged line between them): they intersect, or touch. ``margin`` widens that by N
lines for the cautious. On two different bases the line numbers cannot be compared: the
grade is then ``lines`` (a conflict ahead is assumed), and says so (``same_base`` false).

One shape git merges although the ranges meet: both sides making the very same change
(``xdl_merge`` takes a pair of hunks with the same base lines and the same new lines
once). Ranges alone cannot tell it (a deletion reads as a replacement of the same lines),
so each range may carry a digest of its new text (``digests``, one per range:
``domain/digests.py`` computes them from the diff): two ranges with the same lines and the
same digest are the same change and do not meet; without digests the grade stays
``lines``, the cautious side.

The ranges must be read as the merge diffs. merge-ort diffs with the histogram algorithm
and without the indent heuristic; plain ``git diff`` uses the heuristic (and any
``diff.algorithm`` configured), which can place a hunk among repeated lines (blank lines,
braces) one line away from where the merge sees it, so that changes the merge finds
touching read as apart. ``git diff -U0 --histogram --no-indent-heuristic`` reads them as
the merge does; ``GIT_DIFF_ARGS`` adds what keeps a user's configuration (colour, other
path prefixes, external diff drivers, textconv filters) out of the text that
``parse_unified_zero`` reads. ``tests/e2e/test_merge_agreement.py`` and ``bench/merge_agreement.py``
compare the grades with real merges of generated pairs (identical deletions left out):
they agree on every pair, also on a file without a final newline (a line added after its
last line changes that line, in the diff and in the merge alike).

Only the standard library (named tuples, not dataclasses: the hooks import this too, and
``dataclasses`` alone costs a hook ~10 ms at start-up).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

Range = tuple[int, int]

# How the agent side reads its ranges: ``git <GIT_DIFF_ARGS> [<commit>] -- <path>...``, fed to
# parse_unified_zero. Histogram without the indent heuristic: the hunks where merge-ort's
# diff puts them. The rest overrides configuration that changes the text (color.ui,
# diff.mnemonicPrefix / diff.noprefix, diff.external, textconv drivers).
GIT_DIFF_ARGS = (
    "diff",
    "-U0",
    "--histogram",
    "--no-indent-heuristic",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)

# A change whose lines cannot be told (a binary file): every line, as far as the service
# counts them (LIMITS.edit_line_max).
WHOLE_FILE: Range = (1, 10_000_000)

# Grades of one overlap (SPEC): the ranges meet (a merge conflict ahead), they are apart
# (git merges them), or the two sessions have not both edited a file of the overlap.
LINES = "lines"
FILE = "file"
CLAIMS = "claims"


# A range's digest (domain/digests.py), or None where its new text is not known.
Digest = str | None


class FileEdit(NamedTuple):
    """One session's change to one file: its base blob, the base lines it replaces
    (sorted by start) and, when known, a digest of each range's new text (``digests``,
    one per range; None: none known)."""

    base: str | None
    ranges: tuple[Range, ...]
    digests: tuple[Digest, ...] | None = None

    def wire(self, path: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": path,
            "base": self.base,
            "ranges": [list(r) for r in self.ranges],
        }
        if self.digests is not None:
            out["digests"] = list(self.digests)
        return out


def hull(ranges: Sequence[Range]) -> Range:
    """One range covering all of ``ranges`` (a conservative stand-in for many)."""
    return (min(s for s, _ in ranges), max(e for _, e in ranges))


def meet(
    mine: Sequence[Range],
    theirs: Sequence[Range],
    margin: int = 0,
    *,
    my_digests: Sequence[Digest] | None = None,
    their_digests: Sequence[Digest] | None = None,
) -> bool:
    """Whether some range of ``mine`` meets some range of ``theirs``: in 0-based half-open
    form ``[s-1, e)``, two changes conflict unless one ends strictly before the other
    starts (``e1 < s2 - 1``), i.e. at least one unchanged base line lies between them;
    ``margin`` asks for more than ``margin`` unchanged lines. Both lists sorted by start;
    a merge-like sweep, linear in their lengths, as ``xdl_merge`` walks two sides' hunks:
    a pair with the same lines and the same digest (both known) is one change made twice,
    which the merge takes once and passes (whatever the margin)."""
    i = j = 0
    while i < len(mine) and j < len(theirs):
        if (
            mine[i] == theirs[j]
            and my_digests is not None
            and their_digests is not None
            and my_digests[i] is not None
            and my_digests[i] == their_digests[j]
        ):
            i += 1
            j += 1
            continue
        s1, e1 = mine[i][0] - 1, mine[i][1]
        s2, e2 = theirs[j][0] - 1, theirs[j][1]
        if s1 <= e2 + margin and s2 <= e1 + margin:
            return True
        # The one that ends first cannot meet anything later of the other list.
        if e1 < e2:
            i += 1
        else:
            j += 1
    return False


def grade_file(mine: FileEdit, theirs: FileEdit, margin: int = 0) -> tuple[str, bool]:
    """``(grade, same_base)`` of two sessions' changes to one file."""
    if mine.base != theirs.base:
        return LINES, False
    met = meet(
        mine.ranges,
        theirs.ranges,
        margin,
        my_digests=mine.digests,
        their_digests=theirs.digests,
    )
    return (LINES if met else FILE), True


class Graded(NamedTuple):
    """The grade of one conflict, the edited files of its overlap (at most so many), and
    whether the other side has edits on a file of the overlap that this side has not
    edited (``block_on = lines`` refuses that too)."""

    grade: str
    files: tuple[dict[str, Any], ...]
    theirs_only: bool
    files_truncated: bool = False


def grade_pair(
    mine: Mapping[str, FileEdit],
    theirs: Mapping[str, FileEdit],
    *,
    i_claim: Callable[[str], bool],
    they_claim: Callable[[str], bool] | None = None,
    margin: int = 0,
    max_files: int | None = None,
) -> Graded:
    """Grade the overlap of two sessions from their edits: ``lines`` when a file both
    edited has ranges that meet (or two different bases), ``file`` when both edited some
    file of the overlap and none meets, else ``claims``. ``i_claim`` / ``they_claim``: the
    claim rule of each side, to tell which one-sided edits lie in the overlap; without
    ``they_claim`` my one-sided edits are not listed (they change neither the grade nor
    what ``block_on = lines`` refuses, and telling them costs a claim check per path and
    conflict: the server leaves them out)."""
    grade = CLAIMS
    files: list[dict[str, Any]] = []
    theirs_only = False
    for path in sorted(set(mine) | set(theirs)):
        m, t = mine.get(path), theirs.get(path)
        if m is not None and t is not None:
            file_grade, same = grade_file(m, t, margin)
            if file_grade == LINES or grade == CLAIMS:
                grade = file_grade
            entry: dict[str, Any] = {
                "path": path,
                "edited_by": "both",
                "grade": file_grade,
                "same_base": same,
                "base": t.base,
                "ranges": _wire(t.ranges),
                "my_ranges": _wire(m.ranges),
            }
        elif t is not None and i_claim(path):
            theirs_only = True
            entry = {"path": path, "edited_by": "them", "base": t.base, "ranges": _wire(t.ranges)}
        elif m is not None and they_claim is not None and they_claim(path):
            entry = {"path": path, "edited_by": "me", "my_ranges": _wire(m.ranges)}
        else:
            continue
        files.append(entry)
    # The ones that matter first: meeting ranges, then their edits, then mine.
    files.sort(key=lambda f: (f.get("grade") != LINES, f["edited_by"] != "them"))
    cut = max_files is not None and len(files) > max_files
    return Graded(grade, tuple(files[:max_files] if cut else files), theirs_only, cut)


def blocks_on_lines(conflict: Mapping[str, Any]) -> bool:
    """Whether ``block_on = lines`` refuses this (certain) conflict: its grade is
    ``lines``, or the other side edited a file of the overlap that this side has not
    edited yet. A conflict with no grade (an older server) counts as refusing."""
    grade = conflict.get("grade")
    if grade is None:
        return True
    return grade == LINES or any(f.get("edited_by") == "them" for f in conflict.get("edits") or [])


def _wire(ranges: Iterable[Range]) -> list[list[int]]:
    return [[s, e] for s, e in ranges]


def parse_unified_zero(diff: str) -> dict[str, list[Range]]:
    """The base ranges per file of ``git diff -U0`` output (``b/`` paths; a deleted file
    under its old path). Pure text: the agent side runs git. See :func:`read_hunks`."""
    return {path: [r for r, _ in hunks] for path, hunks in read_hunks(diff, False).items()}


# One hunk: the base lines it replaces, and its new lines, each with its line end (a
# line git marks "\ No newline at end of file" has none); None when not asked for, and
# for a binary file (WHOLE_FILE), whose lines git does not print.
Hunk = tuple[Range, list[str] | None]


def read_hunks(diff: str, new_text: bool = True) -> dict[str, list[Hunk]]:
    """The hunks per file of ``git diff -U0`` output (``b/`` paths; a deleted file under
    its old path), with each hunk's new lines when ``new_text``.

    A hunk's body is as long as its header says, as ``git apply`` reads it: a body line
    that looks like a header (an added ``++ x`` prints as ``+++ x``, a deleted SQL comment
    ``-- x`` as ``--- x``) stays body. Lines end at ``\\n`` only: a form feed or U+2028
    inside a line (``str.splitlines`` would cut there) does not end it."""
    out: dict[str, list[Hunk]] = {}
    old_path: str | None = None
    path: str | None = None
    old_left = new_left = 0  # body lines of the current hunk still to come
    new: list[str] | None = None  # the current hunk's new lines (when asked for)
    last = ""  # the mark of the body line before
    for line in diff.split("\n"):
        if old_left or new_left:
            mark = line[:1]
            if mark == "-" and old_left:
                old_left -= 1
                last = mark
                continue
            if mark == "+" and new_left:
                new_left -= 1
                if new is not None:
                    new.append(line[1:] + "\n")
                last = mark
                continue
            if mark == " " and old_left and new_left:  # context (none with -U0)
                old_left -= 1
                new_left -= 1
                last = mark
                continue
            if mark == "\\":  # "\ No newline at end of file"
                if last == "+" and new:
                    new[-1] = new[-1][:-1]
                continue
            old_left = new_left = 0  # a hunk cut short: read on as headers
        elif line[:1] == "\\" and last == "+" and new:  # the marker after a hunk's last line
            new[-1] = new[-1][:-1]
            last = ""
            continue
        last = ""
        if line.startswith("--- "):
            old_path = _diff_path(line[4:].rstrip("\r"))
        elif line.startswith("+++ "):
            path = _diff_path(line[4:].rstrip("\r")) or old_path
            if path is not None:
                out.setdefault(path, [])
        elif line.startswith("Binary files ") and line.endswith(" differ"):
            # No lines to tell: the whole file (git's merge conflicts on two changes of a
            # binary file, and so does this grade).
            binary = _binary_path(line[len("Binary files ") : -len(" differ")])
            if binary is not None:
                out[binary] = [(WHOLE_FILE, None)]
        elif line.startswith("@@ ") and path is not None:
            old, new_side = line.split(" ")[1:3]  # -a,b or -a; +c,d or +c
            start, count = _hunk_side(old)
            old_left, new_left = count, _hunk_side(new_side)[1]
            new = [] if new_text else None
            out[path].append(((start, start + count - 1) if count else (start + 1, start), new))
    return out


def _binary_path(pair: str) -> str | None:
    """The path of ``a/X and b/Y`` (a name may hold " and ": split before the new side)."""
    for marker in (" and b/", ' and "b/', " and /dev/null"):
        at = pair.rfind(marker)
        if at >= 0:
            return _diff_path(pair[at + 5 :]) or _diff_path(pair[:at])
    return None


def _hunk_side(text: str) -> tuple[int, int]:
    start_text, _, count_text = text[1:].partition(",")
    return int(start_text), int(count_text or "1")


def _diff_path(text: str) -> str | None:
    text = text.split("\t", 1)[0]
    if text == "/dev/null":
        return None
    if text.startswith('"'):  # git quotes unusual names C-style
        text = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        text = text.encode("latin-1").decode("utf-8", "replace")
    return text[2:] if text[:2] in ("a/", "b/") else text


# A path as ``git diff`` prints it (``a/``/``b/`` prefix, C-style quoting), for the agent
# side's readers of the same text (agent/ledger.py).
diff_path = _diff_path
