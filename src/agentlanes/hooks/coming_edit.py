"""The lines an edit is about to change, before it is made (SPEC "Line-level claims").

Under ``block_on = lines`` the editor guard (``PreToolUse``) decides on an edit to a file
another live session has edited: it refuses only when the two sessions' changes will meet
at merge. Before the edit there is no diff to read, so this module makes one: the file as
it will be after the tool call (``Edit``, ``MultiEdit``, ``Write``), diffed by git itself
against the file at ``HEAD`` (``git diff --no-index --full-index`` with the merge's diff
options, ``domain.edits.GIT_DIFF_ARGS``, as the report after the edit; the ``index`` line
gives the base's blob id). Two git processes, and only when another session's edits are on the file.

Standard library only: it runs inside a hook.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable
from typing import Any, NamedTuple

from agentlanes.domain.edits import GIT_DIFF_ARGS, FileEdit, Range, parse_unified_zero

GIT_SECONDS = 5.0
# The merge's diff (domain.edits.GIT_DIFF_ARGS: histogram, no indent heuristic, no colour,
# fixed prefixes), between two files outside the repository, with full blob ids.
DIFF = ("git", *GIT_DIFF_ARGS, "--no-index", "--full-index", "--")


def after_tool(payload: dict[str, Any], path: str) -> str | None:
    """The text of ``path`` (absolute) once this tool call is made, or None when it cannot
    be told (another tool, an ``old_string`` not found, an unreadable file)."""
    tool = payload.get("tool_name")
    args = payload.get("tool_input") or {}
    if tool == "Write":
        content = args.get("content")
        return content if isinstance(content, str) else None
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return None
    edits: list[Any]
    if tool == "Edit":
        edits = [args]
    elif tool == "MultiEdit":
        listed = args.get("edits")
        if not isinstance(listed, list):
            return None
        edits = listed
    else:
        return None
    for e in edits:
        if not isinstance(e, dict):
            return None
        old, new = e.get("old_string"), e.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or not old or old not in text:
            return None
        text = text.replace(old, new) if e.get("replace_all") else text.replace(old, new, 1)
    return text


def coming_edit(repo: str, rel: str, text: str, own: Own | None = None) -> FileEdit | None:
    """The change ``text`` makes to ``rel`` against ``HEAD`` in ``repo``: its base blob id
    (None: not in ``HEAD``) and the base lines it replaces; None when git cannot tell.
    With ``own`` (a working tree shared with other live agents): only the hunks that
    hold this agent's lines once the call is made, as ``own`` tells from git's hunks."""
    try:
        head = subprocess.run(
            ["git", "-C", repo, "cat-file", "blob", f"HEAD:{rel}"],
            capture_output=True,
            timeout=GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return FileEdit(None, ((1, 0),))  # new since HEAD: one insertion at the top
    with tempfile.TemporaryDirectory(prefix="agentlanes-") as tmp:
        before, after = os.path.join(tmp, "base"), os.path.join(tmp, "next")
        with open(before, "wb") as fh:
            fh.write(head.stdout)
        with open(after, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        try:
            diff = subprocess.run(
                [DIFF[0], "-C", repo, *DIFF[1:], before, after],
                capture_output=True,
                text=True,
                timeout=GIT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
    if diff.returncode not in (0, 1):
        return None
    ranges: list[Range] = [r for rs in parse_unified_zero(diff.stdout).values() for r in rs]
    if own is not None:
        from agentlanes.agent.ledger import parse_hunks

        hunks = [h for hs in parse_hunks(diff.stdout).values() for h in hs]
        mine = own(rel, text, hunks)
        if mine is not None:
            ranges = mine
    base = _index_base(diff.stdout)
    if base is None:  # no change at all: the base is HEAD's blob
        base = _blob_id(repo, rel)
    return FileEdit(base, tuple(sorted(ranges)))


def _index_base(diff: str) -> str | None:
    for line in diff.split("\n"):
        if line.startswith("index "):
            return line.split()[1].split("..")[0]
    return None


def _blob_id(repo: str, rel: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", repo, "rev-parse", f"HEAD:{rel}"],
            capture_output=True,
            text=True,
            timeout=GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


# The agent's own base ranges among git's hunks of ``HEAD`` to the coming text (path,
# text, hunks), or None when that cannot be told (agent/ledger.Ledger.owned_after).
Own = Callable[[str, str, list[tuple[int, int, int, int]]], list[Range] | None]


class Meeting(NamedTuple):
    """What :func:`meeting` found: the conflicts the edit meets, the coming edits by path,
    and one line per meeting (who, which file, whose lines)."""

    refusing: list[dict[str, Any]]
    coming: dict[str, FileEdit]
    why: list[str]


def meeting(
    payload: dict[str, Any],
    repo: str,
    paths: list[str],
    conflicts: list[dict[str, Any]],
    margin: int,
    own: Own | None = None,
) -> Meeting:
    """Under ``block_on = lines``: the conflicts this edit would meet (their edits to a file
    it changes meet its lines, on the same base; another base, or an edit whose lines
    cannot be told, counts as meeting), and the coming edits by path (to report with the
    claim, so the server grades them too). ``own``: in a working tree shared with other
    live agents, the coming edit is this agent's hunks only, never the others' lines."""
    from agentlanes.client.report import ranges_text
    from agentlanes.domain.edits import LINES, grade_file

    coming: dict[str, FileEdit | None] = {}
    for rel in paths:
        text = after_tool(payload, os.path.join(repo, rel))
        coming[rel] = coming_edit(repo, rel, text, own) if text is not None else None
    refusing, why = [], []
    for c in conflicts:
        for f in c.get("edits") or []:
            if f.get("path") not in coming or f.get("edited_by") not in ("them", "both"):
                continue
            mine = coming[f["path"]]
            theirs = FileEdit(f.get("base"), tuple((s, e) for s, e in f.get("ranges") or []))
            grade, same = grade_file(mine, theirs, margin) if mine else (LINES, True)
            if grade != LINES:
                continue
            refusing.append(c)
            who, path = c.get("agent_name", "?"), f["path"]
            if mine is None:
                how = "cannot be told line by line, and they have edited it"
            elif not same:
                how = "is on another base than their edits (line numbers not comparable)"
            else:
                how = f"(lines {ranges_text(mine.ranges)}) meets their lines"
            why.append(
                f"your edit of {path} {how}: {who}'s edits (lines "
                f"{ranges_text(theirs.ranges)}) and yours would conflict at merge"
            )
            break
    return Meeting(refusing, {p: e for p, e in coming.items() if e is not None and e.ranges}, why)
