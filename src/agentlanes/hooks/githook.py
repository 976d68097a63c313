"""The git pre-commit check: staged paths against the other live sessions.

Run by the hook that ``lanes hook install`` writes (``python -m agentlanes.hooks.githook``) and
by ``lanes hook run`` (the pre-commit framework). It imports only the standard library
and the lean parts of ``agentlanes.client`` so that it stays fast on every commit.

- ``AGENTLANES_SKIP=1`` (or ``git commit --no-verify``) skips it.
- Quiet when nothing collides. Otherwise one line per overlap (path, agent, whether for
  certain, their pattern); in ``warn`` mode the commit goes through, in ``block`` mode
  it is refused when an overlap is certain. A staged path is a file that exists, so the
  server calls every claim on it certain; a line for an overlap that holds only if a
  path is a directory ("only if `package.json` is a directory") never refuses.
- Warns when the committer has no active session.
- Server unreachable: warns and allows, unless ``fail_closed = true`` in
  ``.agentlanes.toml`` (or ``AGENTLANES_FAIL_CLOSED=1``).

Exit status: 0 commit allowed, 1 commit refused.
"""

from __future__ import annotations

import os
import sys

from agentlanes.client.config import ConfigError, list_sessions, load_config, read_session
from agentlanes.client.report import capped, claimed_earlier, conflict_lines, is_certain
from agentlanes.hooks.http import LeanApiError, LeanUnreachable, call_many

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: every import costs the hook
    from collections.abc import Sequence
    from typing import Any, TextIO

ALLOW = 0
REFUSE = 1
# Staged paths sent per request: well under the server's max_paths default (10,000).
CHUNK = 5000
SHOWN_LINES = 20
HOW_PAST = "to commit anyway: AGENTLANES_SKIP=1 git commit ... (or git commit --no-verify)"


class GitError(Exception):
    """git could not list the staged paths."""


def staged_paths(cwd: str | None = None) -> list[str]:
    """Every path the commit touches: added, modified, deleted, and both sides of renames.

    ``--no-renames`` reports a rename as a deletion of the old path and an addition of the
    new one, so both sides are checked.
    """
    argv = ["git", "diff", "--cached", "--name-only", "-z", "--no-renames"]
    return [p for p in _run_git(argv, cwd).decode("utf-8", "surrogateescape").split("\0") if p]


def _run_git(argv: list[str], cwd: str | None) -> bytes:
    """git's stdout. posix_spawn rather than ``subprocess`` (~25 ms less to import)."""
    if not hasattr(os, "posix_spawnp") or cwd is not None:
        import subprocess

        try:
            return subprocess.run(argv, cwd=cwd, capture_output=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            raise GitError(str(exc)) from None
    read_end, write_end = os.pipe()
    try:
        pid = os.posix_spawnp(
            argv[0],
            argv,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, write_end, 1),
                (os.POSIX_SPAWN_CLOSE, read_end),
            ],
        )
    except OSError as exc:
        os.close(read_end)
        os.close(write_end)
        raise GitError(str(exc)) from None
    os.close(write_end)
    chunks = []
    with os.fdopen(read_end, "rb") as out:
        while chunk := out.read(65536):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise GitError(f"{' '.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    return b"".join(chunks)


def check(
    paths: Sequence[str] | None = None,
    cwd: str | None = None,
    out: TextIO | None = None,
    env: dict[str, str] | None = None,
) -> int:
    """Check the staged paths (or ``paths``); print what a committer needs; 0 or 1."""
    out = out or sys.stderr
    env = dict(os.environ) if env is None else env

    def say(line: str) -> None:
        print(f"agentlanes: {line}", file=out)

    if env.get("AGENTLANES_SKIP", "").strip().lower() in ("1", "true", "yes"):
        return ALLOW
    try:
        cfg = load_config(cwd, env)
    except ConfigError as exc:
        say(f"{exc}; commit not checked")
        return ALLOW
    if not cfg.api_key:
        say("no API key (AGENTLANES_API_KEY or .agentlanes.toml); commit not checked")
        return ALLOW
    try:
        todo = list(paths) if paths is not None else staged_paths(cwd)
    except GitError as exc:
        say(f"cannot list the staged paths ({exc}); commit not checked")
        return ALLOW
    if not todo:
        return ALLOW

    session = read_session(cfg, env)
    theirs = others_staged(cfg, session, todo, cwd)
    if theirs:
        for line in theirs:
            say(line)
        say(HOW_PAST)
        return REFUSE
    token = session["session_token"] if session else None
    if not token:
        # Several agents share this tree and none of them started this commit (or none
        # was named): say how to name the committer rather than "no session".
        local = [str(s.get("agent_name")) for s in list_sessions(cfg)]
        if local:
            from agentlanes.client.identity import how_to_name

            say(how_to_name(local, "git commit ..."))
        else:
            say("you have no active session (run `lanes checkin`); others cannot see you")
    chunks = [todo[start : start + CHUNK] for start in range(0, len(todo), CHUNK)]
    # All at once, each on its own connection: the server answers them concurrently.
    # The check sends the token so the committer's own claims are left out; the heartbeat
    # says whether that session is still active (and a commit is a sign of life).
    # Knowing our session's id, the check goes without the token: our own claims come
    # back too, with when each was made (the older claim stands, see claimed_earlier).
    mine = session.get("session_id") if session else None
    check_token = None if mine else token
    requests: list[Any] = [("GET", "/api/v1/project", None, None)]
    # Our own edits, as the agent's hooks last reported them (hooks/edits.py), grade each
    # overlap by lines (SPEC "Line-level claims"); without them the server grades as if
    # we had none.
    edits = None
    if session and isinstance(session.get("agent_name"), str):
        from agentlanes.hooks.edits import last_reported

        edits = last_reported(cfg, session["agent_name"], session)
    graded = {"edits": edits} if isinstance(edits, list) else {}
    requests += [
        ("POST", "/api/v1/conflicts/check", {"paths": c, **graded}, check_token) for c in chunks
    ]
    if token:
        requests.append(("POST", "/api/v1/heartbeat", {}, token))
    try:
        answers = call_many(cfg, requests)
        if token and isinstance(answers[-1], LeanApiError) and answers[-1].status in (404, 410):
            say(
                "your saved session is no longer active (run `lanes checkin`); others can't see you"
            )
        if check_token and any(_unknown_token(a) for a in answers[1 : 1 + len(chunks)]):
            # A token the server has never seen: check as nobody rather than fail.
            answers[1 : 1 + len(chunks)] = call_many(
                cfg,
                [("POST", "/api/v1/conflicts/check", {"paths": c, **graded}, None) for c in chunks],
            )
        for answer in answers[: 1 + len(chunks)]:
            if isinstance(answer, LeanApiError):
                raise answer
        mode = answers[0].get("conflict_mode", "warn")
        block_on = answers[0].get("block_on", "claims")
        conflicts: list[dict[str, Any]] = []
        for answer in answers[1 : 1 + len(chunks)]:
            conflicts.extend(answer["conflicts"])
    except (LeanUnreachable, LeanApiError) as exc:
        if isinstance(exc, LeanUnreachable):
            why = f"server unreachable at {cfg.url} ({exc})"
        else:
            why = f"the server refused the check ({exc})"
        if cfg.fail_closed:
            say(f"{why}; commit refused (fail_closed)")
            say(HOW_PAST)
            return REFUSE
        say(f"{why}; commit not checked")
        return ALLOW

    own = [c for c in conflicts if mine and c.get("session_id") == mine]
    conflicts = [c for c in conflicts if not (mine and c.get("session_id") == mine)]
    if not conflicts:
        return ALLOW
    merged = _merge(conflicts)
    for line in conflict_lines(merged, limit=SHOWN_LINES):
        say(line)
    # The older claim stands: an overlap on a path we claimed first never refuses.
    certain = [c for c in claimed_earlier(merged, _merge(own)) if is_certain(c)]
    if block_on == "lines":
        from agentlanes.domain.edits import blocks_on_lines

        certain = [c for c in certain if blocks_on_lines(c)]
    if mode == "block" and certain:
        say(
            f"commit refused: the project is in block mode and {len(certain)} other "
            "session(s) hold these paths for certain"
        )
        say(coordinate_line(certain))
        say(HOW_PAST)
        return REFUSE
    if mode == "block":
        say(
            "commit allowed: you claimed these paths before them, or the overlaps hold "
            "only if a path is a directory (block mode refuses only certain overlaps with "
            "an earlier claim"
            + (
                "; with block_on = lines, only where edits meet or only they edited)"
                if block_on == "lines"
                else ")"
            )
        )
        return ALLOW
    say("commit allowed (warn mode); tell the agents above, or narrow your change")
    return ALLOW


def others_staged(
    cfg: Any, session: dict[str, Any] | None, paths: list[str], cwd: str | None
) -> list[str]:
    """In a working tree shared with other live agents: the lines to say when the commit
    stages lines another of them changed and has not committed (SPEC "Many agents, one
    working tree"), in every mode; none when it stages only the committer's (or a
    person's) lines. Read from the tree's ledger (``agent/ledger.py``) and git's diff of
    the staged copy against ``HEAD``."""
    from agentlanes.agent.ledger import Content, lines_text, parse_hunks
    from agentlanes.agent.tree import ledger_of, others
    from agentlanes.domain.edits import GIT_DIFF_ARGS

    me = session.get("agent_name") if session else None
    live = others(cfg, me if isinstance(me, str) else None)
    ledger = ledger_of(cfg) if live else None
    followed = [p for p in paths if ledger is not None and ledger.has(p)]
    if ledger is None or not followed:
        return []
    argv = ["git", "--literal-pathspecs", GIT_DIFF_ARGS[0], "--cached", *GIT_DIFF_ARGS[1:]]
    try:
        diff = _run_git([*argv, "--no-renames", "--", *followed], cwd)
    except GitError:
        return []
    hunks = parse_hunks(diff.decode("utf-8", "surrogateescape"))
    lines: list[str] = []
    held: set[str] = set()
    holders: set[str] = set()
    for path in followed:
        if path not in hunks:
            continue
        try:
            staged = Content(_run_git(["git", "cat-file", "blob", f":{path}"], cwd))
        except GitError:
            staged = Content(None)  # deleted in the index
        for who, numbers in sorted(ledger.owners_in(path, staged, hunks[path]).items()):
            if who in live:
                held.add(path)
                holders.add(who)
                what = lines_text(numbers) if numbers else "changes"
                lines.append(f"{path}: {what} of the staged copy are {who}'s (not committed)")
    if not lines:
        return []
    mine = [p for p in paths if p not in held]
    only = f"`git commit -- {' '.join(mine[:10])}`" if mine else "`git commit -- <your paths>`"
    return [
        *capped(lines, SHOWN_LINES),
        "commit refused: it stages lines that other live agents of this working tree changed "
        f"and have not committed ({', '.join(sorted(holders)[:5])}). Commit only "
        f"your own: {only}, or stage your own hunks with `git add -p` and commit those "
        f"(`git restore --staged {' '.join(sorted(held)[:10])}` unstages theirs)",
    ]


def coordinate_line(conflicts: list[dict[str, Any]]) -> str:
    """How to reach the holders: ``lanes message send NAME TEXT`` or the MCP tool."""
    names = list(dict.fromkeys(str(c.get("agent_name", "?")) for c in conflicts))
    first = names[0] if names else "NAME"
    return (
        f'coordinate with {", ".join(names[:5])}: `lanes message send {first} "..."` '
        "(or the MCP tool message_send)"
    )


def _unknown_token(answer: Any) -> bool:
    return isinstance(answer, LeanApiError) and answer.code == "SESSION_NOT_FOUND"


def _merge(conflicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Several chunks may each report the same session: show it once per overlap."""
    by_session: dict[str, dict[str, Any]] = {}
    for conflict in conflicts:
        sid = conflict.get("session_id", "")
        if sid in by_session:
            merged = by_session[sid]
            merged["overlapping_files"].extend(conflict.get("overlapping_files") or [])
        else:
            by_session[sid] = {
                **conflict,
                "overlapping_files": list(conflict.get("overlapping_files") or []),
            }
    return list(by_session.values())


def main() -> int:
    return check()


if __name__ == "__main__":
    sys.exit(main())
