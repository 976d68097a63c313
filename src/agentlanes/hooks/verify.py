"""``lanes verify`` and the git pre-push hook: the files a range of commits changes, checked
against the other live sessions' edits and claims (SPEC "Line-level claims").

``git commit --no-verify`` skips the pre-commit hook (Aider commits that way by default);
a push, a CI job or a merge queue can still ask. The files of the range are every path a
commit of it changes (``git log --name-only --no-renames``: both sides of a rename, and
deletions; a merge commit adds none of its own). They go to ``POST /api/v1/conflicts/check``
with the caller's session token when one is known, so the caller's own session is left out.

- Refused (exit 1): another live session has reported edits (uncommitted changes, line
  ranges against its ``HEAD``) on a file of the range: a conflict whose ``edits`` names the
  file as edited by ``them`` or ``both`` (with ``block_on = lines``: only those graded
  ``lines``; the others are warnings). Each is named: file, agent, their lines, and
  ``lanes message send AGENT ...``. Lines an agent has committed are no one's edits any
  more (its post-commit hook reports so), so once every agent has committed the push
  passes.
- A claim without edits on a file of the range is a warning (exit 0).
- Server unreachable, no API key, or an error answer: exit 1 when ``fail_closed``
  (``.agentlanes.toml`` or ``AGENTLANES_FAIL_CLOSED=1``), else a warning and exit 0.
- A bad range or no git repository: exit 2, one line.

The default range is what ``HEAD`` has over its upstream (``@{upstream}..HEAD``); without
an upstream, the commits on no remote-tracking branch (``HEAD --not --remotes``).

As the pre-push hook (``python -m agentlanes.hooks.verify REMOTE URL``, written by
``lanes hook install`` and ``lanes init``) it reads git's lines
``<local ref> SP <local object name> SP <remote ref> SP <remote object name> LF`` on stdin
(https://git-scm.com/docs/githooks#_pre_push) and checks each pushed range:
``REMOTE_SHA..LOCAL_SHA``, or for a new branch (remote object name all zeros) the commits
not on the remote (``LOCAL_SHA --not --remotes=REMOTE``); deletions check nothing.
``AGENTLANES_SKIP=1 git push`` (or ``git push --no-verify``) skips it.

Standard library and the lean client only, like the pre-commit hook.
"""

from __future__ import annotations

import os
import sys

from agentlanes.client.config import ConfigError, list_sessions, load_config, read_session
from agentlanes.client.report import capped, conflict_lines, file_is_certain
from agentlanes.hooks.githook import CHUNK
from agentlanes.hooks.http import LeanApiError, LeanUnreachable, call_many

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any, TextIO

PASS = 0
REFUSE = 1
USAGE = 2
SHOWN_LINES = 20
SHOWN_RANGES = 6
HOW_PAST_PUSH = "to push anyway: AGENTLANES_SKIP=1 git push ... (or git push --no-verify)"
# Who edited a file of an overlap, as a conflict's ``edits`` says (them: the other session).
THEIRS = ("them", "both")


class UsageError(Exception):
    """Bad input: not a git repository, a revision range git does not know."""


class Range:
    """Some commits to check: the ``git log`` revision arguments and how to name them."""

    def __init__(self, revs: list[str], label: str, note: str | None = None) -> None:
        self.revs = revs
        self.label = label
        self.note = note  # said once: how a default was chosen


def _git(argv: list[str], cwd: str | None) -> tuple[int, str, str]:
    import subprocess

    try:
        done = subprocess.run(["git", *argv], cwd=cwd, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"cannot run git ({exc})") from None
    decode = lambda b: b.decode("utf-8", "surrogateescape")  # noqa: E731
    return done.returncode, decode(done.stdout), decode(done.stderr)


def _git_message(stderr: str) -> str:
    """git's first line of complaint, without its ``fatal: `` prefix."""
    for line in stderr.splitlines():
        if line.strip():
            return line.strip().removeprefix("fatal: ").removeprefix("error: ")
    return "git failed"


def has_commits(cwd: str | None = None) -> bool:
    rc, _, _ = _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], cwd)
    if rc != 0:
        inside, _, why = _git(["rev-parse", "--git-dir"], cwd)
        if inside != 0:
            raise UsageError(_git_message(why))
    return rc == 0


def default_range(cwd: str | None = None) -> Range:
    """What ``HEAD`` has over its upstream; with no upstream, the commits on no
    remote-tracking branch (the commits no remote has, as far as this clone knows)."""
    rc, out, _ = _git(["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"], cwd)
    if rc == 0 and out.strip():
        return Range(["@{upstream}..HEAD"], f"{out.strip()}..HEAD")
    return Range(
        ["HEAD", "--not", "--remotes"],
        "HEAD --not --remotes",
        "no upstream branch: checking the commits of HEAD that are on no remote-tracking "
        "branch (HEAD --not --remotes)",
    )


def given_range(text: str) -> Range:
    """A range as typed (``main..HEAD``, ``HEAD~3..``; one commit ``C`` means all its history)."""
    if not text.strip() or text.startswith("-"):
        raise UsageError(
            f"{text!r} is not a revision range (expected e.g. origin/main..HEAD or HEAD~3..)"
        )
    return Range(["--end-of-options", text], text)


def changed_files(rng: Range, cwd: str | None = None) -> tuple[int, list[str]]:
    """(how many commits, every path they change, in order of first appearance).

    ``--no-renames`` lists a rename as the deletion of the old path and the addition of the
    new one, so both sides are checked.
    """
    argv = ["log", "--no-renames", "--name-only", "--format=%x01%H", "-z", *rng.revs, "--"]
    rc, out, stderr = _git(argv, cwd)
    if rc != 0:
        raise UsageError(f"bad revision range {rng.label!r}: {_git_message(stderr)}")
    commits = 0
    paths: dict[str, None] = {}
    for token in out.split("\0"):
        token = token.lstrip("\n")
        if token.startswith("\x01"):
            commits += 1
        elif token:
            paths[token] = None
    return commits, list(paths)


def _is_zero(sha: str) -> bool:
    return bool(sha) and set(sha) == {"0"}


def pushed_ranges(
    lines: Iterable[str], remote: str | None, cwd: str | None = None
) -> tuple[list[Range], list[str]]:
    """The ranges a push sends, from the pre-push hook's stdin; and lines it could not read.

    A deletion (``(delete)``, local object name all zeros) sends no commits. A new branch
    (remote object name all zeros) sends the commits the remote lacks: those on no branch
    of it we know (``--remotes=REMOTE``; for a push to a bare URL, on no remote-tracking
    branch at all). So does an update over a remote commit this clone has not fetched.
    """
    named = remote if remote and _is_named_remote(remote, cwd) else None
    not_remote = ["--not", f"--remotes={named}" if named else "--remotes"]
    ranges: list[Range] = []
    unread: list[str] = []
    for line in lines:
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            unread.append(line.rstrip("\n"))
            continue
        local_ref, local_sha, remote_ref, remote_sha = fields
        if _is_zero(local_sha) or local_ref == "(delete)":
            continue
        label = f"{local_ref} -> {remote_ref}"
        if not _is_zero(remote_sha) and _has_commit(remote_sha, cwd):
            ranges.append(Range([f"{remote_sha}..{local_sha}"], label))
        else:
            ranges.append(Range([local_sha, *not_remote], label))
    return ranges, unread


def _is_named_remote(name: str, cwd: str | None) -> bool:
    rc, out, _ = _git(["remote"], cwd)
    return rc == 0 and name in out.split()


def _has_commit(sha: str, cwd: str | None) -> bool:
    rc, _, _ = _git(["cat-file", "-e", f"{sha}^{{commit}}"], cwd)
    return rc == 0


def describe_ranges(ranges: Sequence[Sequence[int]]) -> str:
    """``lines 10-14, line 30, new lines after line 41`` (an edit's base lines, SPEC)."""
    parts = []
    for pair in ranges[:SHOWN_RANGES]:
        try:
            start, end = int(pair[0]), int(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        if end < start:
            parts.append("new lines at the top" if start <= 1 else f"new lines after {end}")
        elif end == start:
            parts.append(f"line {start}")
        else:
            parts.append(f"lines {start}-{end}")
    if len(ranges) > SHOWN_RANGES:
        parts.append(f"and {len(ranges) - SHOWN_RANGES} more")
    return ", ".join(parts) or "some lines"


class Verdict:
    """What a check found: its exit status, the lines for people, and the JSON for tools."""

    def __init__(self) -> None:
        self.exit_code = PASS
        self.lines: list[str] = []
        self.data: dict[str, Any] = {}


def _holders(
    conflicts: Iterable[dict[str, Any]], paths: set[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(their edits on our files, one entry per session and file; the conflicts trimmed to
    the files they only claim)."""
    edits: dict[tuple[str, str], dict[str, Any]] = {}
    claims: dict[str, dict[str, Any]] = {}
    for c in conflicts:
        sid = str(c.get("session_id", ""))
        edited = set()
        for e in c.get("edits") or []:
            path = e.get("path")
            if e.get("edited_by") in THEIRS and path in paths:
                edited.add(path)
                edits.setdefault(
                    (sid, path),
                    {
                        "session_id": sid,
                        "agent_name": c.get("agent_name", "?"),
                        "path": path,
                        "edited_by": e.get("edited_by"),
                        "ranges": e.get("ranges") or [],
                        "grade": e.get("grade"),
                        "same_base": e.get("same_base"),
                    },
                )
        files = [
            f
            for f in c.get("overlapping_files") or []
            if f.get("example") not in edited and f.get("pattern") not in edited
        ]
        if files or c.get("overlapping_area"):
            # Its edits are said as refusals above (or lie outside the range): a claim's
            # warning names the claim only.
            kept = claims.setdefault(sid, {**c, "edits": [], "overlapping_files": []})
            kept["overlapping_files"].extend(files)
    return list(edits.values()), list(claims.values())


def edit_line(held: dict[str, Any]) -> str:
    """``src/app.py: alice is editing lines 10-14 (uncommitted); lanes message send ...``."""
    agent = held["agent_name"]
    line = f"{held['path']}: {agent} is editing {describe_ranges(held['ranges'])} (not committed)"
    if held.get("edited_by") == "both":
        if held.get("grade") == "lines":
            line += "; your session's edits meet theirs"
        elif held.get("grade") == "file":
            line += "; your session edits it too, apart"
    if held.get("same_base") is False:
        line += " on another base"
    return f'{line}; ask them: lanes message send {agent} "..."'


def check_range(
    ranges: Sequence[Range],
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    agent: str | None = None,
    push: bool = False,
    ignore_agents: Sequence[str] = (),
) -> Verdict:
    """Check the files of ``ranges`` against the other live sessions (see the module doc).

    ``ignore_agents``: sessions of these agents are left out too (a CI job knows the
    author of a branch by name, not by session token). Raises UsageError for bad input
    (exit 2); every other outcome is a Verdict.
    """
    env = dict(os.environ) if env is None else env
    verdict = Verdict()
    say = verdict.lines.append
    refused = "push refused" if push else "refused"
    not_checked = "push not checked" if push else "not verified"
    label = "; ".join(r.label for r in ranges) or "nothing"
    commits = 0
    seen: dict[str, None] = {}
    for rng in ranges:
        if rng.note:
            say(rng.note)
        n, files = changed_files(rng, cwd)
        commits += n
        seen.update(dict.fromkeys(files))
    paths = list(seen)
    verdict.data = {
        "range": label,
        "commits": commits,
        "files": paths,
        "checked": False,
        "refused": False,
        "edits": [],
        "claims": [],
    }
    if not paths:
        verdict.data["checked"] = True
        if not push:
            say(f"nothing to check: {label} changes no file ({commits} commit(s))")
        return verdict

    try:
        cfg = load_config(cwd, env)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None

    def unchecked(why: str) -> Verdict:
        if cfg.fail_closed:
            say(f"{why}; {refused} (fail_closed)")
            if push:
                say(HOW_PAST_PUSH)
            verdict.exit_code = REFUSE
            verdict.data["refused"] = True
        else:
            say(f"{why}; {not_checked}")
        verdict.data["error"] = why
        return verdict

    if not cfg.api_key:
        return unchecked("no API key (AGENTLANES_API_KEY or .agentlanes.toml)")
    try:
        session = read_session(cfg, env, agent)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    token = session.get("session_token") if session else None
    mine = session.get("session_id") if session else None
    if not token:
        local = [str(s.get("agent_name")) for s in list_sessions(cfg)]
        if local:
            # Our own session's edits would count as another's: say how to name us.
            from agentlanes.client.identity import how_to_name

            say(how_to_name(local, "git push ..." if push else "lanes verify ..."))

    chunks = [paths[start : start + CHUNK] for start in range(0, len(paths), CHUNK)]

    def asks(tok: str | None) -> list[Any]:
        return [("POST", "/api/v1/conflicts/check", {"paths": c}, tok) for c in chunks]

    try:
        answers = call_many(cfg, asks(token))
        if token and any(
            isinstance(a, LeanApiError) and a.code in ("SESSION_NOT_FOUND", "SESSION_ENDED")
            for a in answers
        ):
            say("your saved session is no longer active; checking as nobody")
            answers = call_many(cfg, asks(None))
        conflicts: list[dict[str, Any]] = []
        cut = False
        for answer in answers:
            if isinstance(answer, LeanApiError):
                raise answer
            conflicts.extend(answer.get("conflicts") or [])
            cut = cut or bool(answer.get("truncated"))
    except LeanUnreachable as exc:
        return unchecked(f"server unreachable at {cfg.url} ({exc})")
    except LeanApiError as exc:
        return unchecked(f"the server refused the check ({exc})")

    verdict.data["checked"] = True
    conflicts = [
        c
        for c in conflicts
        if not (mine and c.get("session_id") == mine) and c.get("agent_name") not in ignore_agents
    ]
    held, claimed = _holders(conflicts, set(paths))
    if held and _block_on(cfg) == "lines":
        # Only edits graded `lines` refuse (SPEC "Line-level claims").
        apart = [h for h in held if h.get("grade") != "lines"]
        held = [h for h in held if h.get("grade") == "lines"]
        for line in capped((edit_line(h) for h in apart), SHOWN_LINES):
            say(f"warning: {line} (block_on = lines: only edits that meet refuse)")
    verdict.data["edits"] = held
    verdict.data["claims"] = [
        {
            "session_id": c.get("session_id"),
            "agent_name": c.get("agent_name"),
            "path": f.get("example"),
            "their_pattern": f.get("their_pattern"),
            "certain": file_is_certain(f),
        }
        for c in claimed
        for f in c["overlapping_files"]
    ]
    if cut:
        # Certain overlaps come first in a cut answer, but some may be missing here.
        say("the server cut its answer short (answer_max_conflicts): not every overlap is shown")
    if conflicts and not any("edits" in c for c in conflicts):
        say("the server reports no edits (a version before line-level claims): claims only")
    for line in capped((edit_line(h) for h in held), SHOWN_LINES):
        say(line)
    for line in conflict_lines(claimed, limit=SHOWN_LINES):
        say(f"warning: {line}, with no edits of theirs reported")
    counted = f"{len(paths)} file(s) of {label} ({commits} commit(s))"
    if held:
        names = list(dict.fromkeys(h["agent_name"] for h in held))
        file_count = len({h["path"] for h in held})
        say(
            f"{refused}: {file_count} of the {counted} hold uncommitted edits of {len(names)} "
            f"other live session(s) ({', '.join(names[:5])}): agree who goes first, or "
            "wait until they commit or check out"
        )
        if push:
            say(HOW_PAST_PUSH)
        verdict.exit_code = REFUSE
        verdict.data["refused"] = True
    elif not push or claimed:  # the hook is quiet when all is well
        passes = "push passes" if push else "verify passes"
        say(f"{passes}: no other live session has edits on the {counted}")
    return verdict


def _block_on(cfg: Any) -> str | None:
    """The project's ``block_on`` (None when the server does not say)."""
    from agentlanes.hooks.http import call

    try:
        project = call(cfg, "GET", "/api/v1/project")
    except (LeanUnreachable, LeanApiError):
        return None
    return project.get("block_on") if isinstance(project, dict) else None


def pre_push(
    stdin: TextIO, remote: str | None, out: TextIO | None = None, cwd: str | None = None
) -> int:
    """The pre-push hook: check every range the push sends; 0 lets it through."""
    out = out or sys.stderr
    env = dict(os.environ)

    def say(line: str) -> None:
        print(f"agentlanes: {line}", file=out)

    if env.get("AGENTLANES_SKIP", "").strip().lower() in ("1", "true", "yes"):
        return PASS
    try:
        ranges, unread = pushed_ranges(stdin, remote, cwd)
        for line in unread:
            say(f"cannot read the pre-push line {line!r}; it is not checked")
        if not ranges:
            return PASS
        verdict = check_range(ranges, cwd, env, push=True)
    except UsageError as exc:
        say(f"{exc}; push refused")
        say(HOW_PAST_PUSH)
        return REFUSE
    for line in verdict.lines:
        say(line)
    return verdict.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return pre_push(sys.stdin, args[0] if args else None)


if __name__ == "__main__":
    sys.exit(main())
