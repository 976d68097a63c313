"""What the agent changed, reported after each edit (SPEC "Line-level claims").

After a tool call changes files (Claude Code's ``PostToolUse``, each agent's after-edit
event), the hooks report those files' changed lines against ``HEAD`` as ``edits`` in a
status change (``POST /api/v1/status``):
``[{"path", "base", "ranges": [[start, end], ...]}]``, read off
``git diff -U0 HEAD -- FILE...`` (``agentlanes.domain.edits.parse_unified_zero``) with the
base blob ids from one ``git cat-file --batch-check``. A file new since ``HEAD`` is
``base: null, ranges: [[1, 0]]``; a file with no change left is ``ranges: []`` (the
server drops its edits). Only the files the agent touched are reported, and only when
they differ from what was last sent.

Debounce: a burst of edits sends one update. The hook only records the touched files as
pending in ``sessions/<agent>.edits.json`` (beside the agent's session file, under a
lock; not in the session file itself, whose mtime is the last heartbeat and which other
hooks rewrite) and, when no send is already scheduled, starts a detached sender
(``posix_spawn``) that sleeps ``DEBOUNCE_SECONDS``, then runs git once for everything
pending and sends one status. So the hook itself adds no git call and no request, and a
file's edits reach the server about ``DEBOUNCE_SECONDS`` after the edit. ``Stop`` and
``SessionEnd`` send whatever is still pending at once (``flush``), so the last burst is
not lost; where ``os.posix_spawn`` is missing (Windows) the hook sends at once when the
last send is older than ``DEBOUNCE_SECONDS``, else leaves it for the next edit or
``Stop``.

Standard library only: every hook imports this.
"""

from __future__ import annotations

import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from agentlanes.client.config import LocalConfig

# One update per burst: a sender waits this long after the first edit of a burst.
DEBOUNCE_SECONDS = 1.0
# A scheduled sender not done this long after its time is taken for dead.
SENDER_GRACE_SECONDS = 30.0
# The server keeps edits for at most this many files per session (SPEC); more would be
# refused as a whole, so the files past it stay plain claims.
MAX_FILES = 100
GIT_TIMEOUT = 10.0


# -- what git says ---------------------------------------------------------------------------


class GitUnreadable(Exception):
    """git could not say what changed (not a repository, git missing, a timeout)."""


def repo_paths(root: str, files: list[str]) -> list[str]:
    """The repository paths (``/``-separated, relative to ``root``) of absolute ``files``;
    files outside the repository and inside ``.git`` are left out."""
    real_root = os.path.realpath(root)
    prefix = real_root.rstrip(os.sep) + os.sep
    out: list[str] = []
    for full in files:
        if not os.path.isabs(full):
            full = os.path.join(real_root, full)
        path = os.path.normpath(full)
        if not path.startswith(prefix):
            # A symlinked spelling of the repository (macOS /tmp): resolve the folder only,
            # so a symlinked file keeps its own name.
            path = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
            if not path.startswith(prefix):
                continue
        rel = path[len(prefix) :].replace(os.sep, "/")
        if not rel or rel == ".git" or rel.startswith(".git/"):
            continue
        out.append(rel)
    return list(dict.fromkeys(out))


def _git(root: str, args: list[str], stdin: bytes | None = None) -> bytes | None:
    """git's stdout in ``root``, or None when it fails (not a repository, no ``HEAD``)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "--literal-pathspecs", "-c", "core.quotepath=false", *args],
            cwd=root,
            input=stdin,
            capture_output=True,
            timeout=GIT_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _bases(root: str, paths: list[str]) -> dict[str, str | None]:
    """Each path's blob id at ``HEAD`` (``git rev-parse HEAD:path``), None when ``HEAD``
    has no such file; one ``git cat-file --batch-check`` for all of them."""
    query = "".join(f"HEAD:{p}\n" for p in paths).encode("utf-8", "surrogateescape")
    out = _git(root, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], query)
    bases: dict[str, str | None] = dict.fromkeys(paths)
    if out is None:
        raise GitUnreadable(f"git cat-file failed in {root}")
    lines = out.decode("utf-8", "replace").splitlines()
    for path, line in zip(paths, lines, strict=False):
        name, _, kind = line.partition(" ")
        # "HEAD:path missing" (not at HEAD); a tree or a submodule is no file of lines.
        bases[path] = name if kind == "blob" else None
    return bases


def file_edits(root: str, paths: list[str]) -> list[dict[str, Any]]:
    """The edits of ``paths`` (repository paths) against ``HEAD``, in the wire shape: a
    changed file's base lines per hunk, ``[[1, 0]]`` for a file new since ``HEAD``,
    ``[]`` for a file with no change left. Files git ignores, binary files (no lines to
    compare) and paths that are directories are left out. Raises ``GitUnreadable`` when
    git cannot say."""
    from agentlanes.domain.edits import GIT_DIFF_ARGS, parse_unified_zero

    paths = [p for p in dict.fromkeys(paths) if p and "\n" not in p]
    if not paths:
        return []
    bases = _bases(root, paths)
    tracked = [p for p in paths if bases[p] is not None]
    ranges: dict[str, list[tuple[int, int]]] = {}
    if tracked:
        # The merge's own diff (histogram, no indent heuristic: domain.edits.GIT_DIFF_ARGS),
        # so the ranges meet where git's merge will find them meeting.
        diff = _git(root, [*GIT_DIFF_ARGS, "--no-renames", "HEAD", "--", *tracked])
        if diff is None:  # report nothing rather than "no change"
            raise GitUnreadable(f"git diff failed in {root}")
        text = diff.decode("utf-8", "surrogateescape")
        ranges = parse_unified_zero(text)  # a binary file: every line (WHOLE_FILE)
    new = [p for p in paths if bases[p] is None and os.path.isfile(os.path.join(root, p))]
    ignored = _ignored(root, new) if new else set()
    out: list[dict[str, Any]] = []
    for path in paths:
        base = bases[path]
        if base is not None:
            found = ranges.get(path, [])
            out.append({"path": path, "base": base, "ranges": [list(r) for r in found]})
        elif path in new:
            if path not in ignored:
                out.append({"path": path, "base": None, "ranges": [[1, 0]]})
        elif not os.path.isdir(os.path.join(root, path)):
            out.append({"path": path, "base": None, "ranges": []})  # made and removed again
    if tracked:  # each range's digest of its new text: identical changes do not meet
        from agentlanes.domain.digests import with_digests

        with_digests(out, text)
    return out


def _ignored(root: str, paths: list[str]) -> set[str]:
    query = "".join(f"{p}\0" for p in paths).encode("utf-8", "surrogateescape")
    import subprocess

    try:
        done = subprocess.run(
            ["git", "check-ignore", "-z", "--stdin"],
            cwd=root,
            input=query,
            capture_output=True,
            timeout=GIT_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    return {p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


def own_edits(cfg: LocalConfig, agent: str, edits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``edits`` (``file_edits``: the files' diff against ``HEAD``) as this agent's own
    (SPEC "Many agents, one working tree"): in a working tree of its own, all of them; in
    one shared with other live agents, only the hunks holding lines its own tool calls
    changed (``agent/ledger.py``), the rest being others' or a person's. A file the
    ledger does not follow (no hook of any agent saw it change) stays as git says."""
    from agentlanes.agent.tree import ledger_of, others

    if cfg.root is None or not edits or not others(cfg, agent):
        return edits
    ledger = ledger_of(cfg)
    changed = [e["path"] for e in edits if e["base"] is not None and e["ranges"]]
    hunks: dict[str, Any] = {}
    if changed:
        from agentlanes.agent.ledger import parse_hunks
        from agentlanes.domain.edits import GIT_DIFF_ARGS

        diff = _git(cfg.root, [*GIT_DIFF_ARGS, "--no-renames", "HEAD", "--", *changed])
        if diff is None:
            raise GitUnreadable(f"git diff failed in {cfg.root}")
        hunks = parse_hunks(diff.decode("utf-8", "surrogateescape"))
    out = []
    for e in edits:
        if not e["ranges"]:
            out.append(e)
            continue
        new_file = e["base"] is None
        mine = ledger.owned_ranges(e["path"], agent, hunks.get(e["path"], []), new_file)
        if mine is None:
            out.append(e)
            continue
        keep = [k for k, r in enumerate(e["ranges"]) if tuple(r) in set(mine)]
        e = {**e, "ranges": [e["ranges"][k] for k in keep]}
        if isinstance(e.get("digests"), list):  # one per range
            e["digests"] = [e["digests"][k] for k in keep if k < len(e["digests"])]
        out.append(e)
    return out


def head_content(root: str, path: str) -> Any:
    """The file's content at ``HEAD`` as the ledger reads it (``agent/ledger.Content``);
    an empty one when ``HEAD`` has no such file."""
    from agentlanes.agent.ledger import Content

    raw = _git(root, ["cat-file", "blob", f"HEAD:{path}"])
    return Content(raw if raw is not None else None)


def observe_after(cfg: LocalConfig, agent: str, paths: list[str]) -> None:
    """After ``agent``'s tool call: its changes to ``paths`` go into the working tree's
    ledger. A file the ledger did not follow yet (no before-hook saw it) starts, in a tree
    shared with other live agents, from ``HEAD``: whatever differs is taken as this
    call's; in a tree of its own, from the file as it is (git's diff is the agent's
    there), which spares the hook a git call."""
    from agentlanes.agent.tree import ledger_of, others

    ledger = ledger_of(cfg)
    if ledger is None or cfg.root is None:
        return
    shared: bool | None = None
    for path in paths:
        before = None
        if not ledger.has(path):
            shared = bool(others(cfg, agent)) if shared is None else shared
            before = head_content(cfg.root, path) if shared else None
        ledger.observe(path, agent, wrote=True, before=before)


# -- the agent's state -----------------------------------------------------------------------


def state_file(cfg: LocalConfig, agent: str) -> str | None:
    """``sessions/<agent>.edits.json`` beside the agent's session file."""
    session_file = cfg.session_file(agent)
    return None if session_file is None else session_file[: -len(".json")] + ".edits.json"


class _Locked:
    """The state file, read and rewritten in place under an exclusive lock (``flock``;
    none where there is no ``fcntl``: one agent's hooks then seldom overlap anyway)."""

    def __init__(self, path: str, key: str) -> None:
        self.path = path
        self.key = key
        self.state: dict[str, Any] = {}

    def __enter__(self) -> dict[str, Any]:
        from agentlanes.client.private_files import private_open

        fd = private_open(self.path, "r+")
        self.fh = os.fdopen(fd, "r+", encoding="utf-8")
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:
            pass
        try:
            data = json.loads(self.fh.read() or "{}")
        except ValueError:
            data = {}
        if not isinstance(data, dict) or data.get("session") != self.key:
            data = {"session": self.key}  # another session: what was sent is not its own
        for name in ("pending", "sent"):
            if not isinstance(data.get(name), dict):
                data[name] = {}
        self.state = data
        return data

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self.fh.seek(0)
                self.fh.truncate()
                self.fh.write(json.dumps(self.state, separators=(",", ":")))
                self.fh.flush()
        finally:
            self.fh.close()  # releases the lock


def _key(session: dict[str, Any]) -> str:
    return str(session.get("session_id") or str(session.get("session_token", ""))[:16])


def note(
    cfg: LocalConfig,
    agent: str,
    session: dict[str, Any],
    paths: list[str],
    *,
    spawn: bool = True,
    env: dict[str, str] | None = None,
    touched: list[str] | None = None,
) -> str:
    """Record ``paths`` (repository paths) as pending (``touched``: those the agent
    changed, for its check-out's ``files_touched``) and make sure a send follows within
    ``DEBOUNCE_SECONDS``. Returns what happened: ``"scheduled"`` (a sender was started),
    ``"waiting"`` (one is scheduled already), ``"sent"`` (sent at once) or ``"later"``.
    ``env``: the hook's environment, which the sender reads its configuration from."""
    path = state_file(cfg, agent)
    if path is None or not paths:
        return "later"
    now = time.time()
    with _Locked(path, _key(session)) as state:
        for p in paths:
            state["pending"].setdefault(p, now)
        if touched:
            state["touched"] = list(dict.fromkeys([*(state.get("touched") or []), *touched]))
        sender = state.get("sender_at")
        if isinstance(sender, int | float) and now < sender + SENDER_GRACE_SECONDS:
            return "waiting"
        # The first edit of a burst: its send waits for the rest of the burst.
        due = now + DEBOUNCE_SECONDS
        can_spawn = spawn and hasattr(os, "posix_spawn") and cfg.root is not None
        if can_spawn:
            state["sender_at"] = due
        elif now < float(state.get("last_send") or 0) + DEBOUNCE_SECONDS:
            return "later"  # the next edit, Stop or SessionEnd sends it
    if not can_spawn:
        flush(cfg, agent, session)
        return "sent"
    if _spawn_sender(cfg, agent, due, env):
        return "scheduled"
    with _Locked(path, _key(session)) as state:
        state.pop("sender_at", None)
    return "later"


# Set by a long-lived process that answers hooks (the keepalive: hooks/served.py): a send
# is then run on one of its threads at ``due`` (``later(due, send)``) instead of in a
# process of its own, which costs a Python start per burst beside the agent.
later: Callable[[float, Callable[[], object]], None] | None = None


def _spawn_sender(cfg: LocalConfig, agent: str, due: float, env: dict[str, str] | None) -> bool:
    """A detached sender (``python -m agentlanes.hooks.edits send ROOT AGENT DUE``: its own
    process session, stdio on ``/dev/null``) that sends at ``due``; the hook goes on at
    once. ``posix_spawn``, not ``fork``: a forked copy of the hook would make every page
    the hook then writes (Python's teardown writes most of them) a copy, about 8 ms more
    per hook; a spawn costs a few milliseconds, once per burst. False when it could not
    start."""
    if later is not None and cfg.root is not None:
        root = str(cfg.root)
        later(due, lambda: _send_at(root, agent, due))
        return True
    args = [sys.executable, "-m", "agentlanes.hooks.edits", "send", str(cfg.root), agent, repr(due)]
    null = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    try:
        os.posix_spawn(
            sys.executable, args, dict(os.environ if env is None else env),
            file_actions=null, setsid=True,
        )  # fmt: skip
    except (OSError, ValueError):
        return False
    return True


def _send_at(root: str, agent: str, due: float) -> int:
    """The spawned sender: wait until ``due``, then send what is pending (``flush``)."""
    from agentlanes.client.config import ConfigError, load_config, read_session

    time.sleep(max(0.0, due - time.time()))
    env = dict(os.environ)
    try:
        cfg = load_config(root, env)
        session = read_session(cfg, env, agent=agent)
    except ConfigError:
        return 1
    if session is None:
        forget(cfg, agent)  # the session ended: nothing to send, nothing to keep
        return 0
    flush(cfg, agent, session, sender=True)
    return 0


def flush(
    cfg: LocalConfig, agent: str, session: dict[str, Any], *, sender: bool = False
) -> list[dict[str, Any]]:
    """Send the edits of every pending file that differ from what was last sent, in one
    status change; what was sent. ``sender``: called by the scheduled sender (which then
    hands the schedule back). Never raises for an unreachable server or a refusal: the
    files stay pending (unreachable) or are dropped (refused, session ended)."""
    from agentlanes.hooks.http import LeanApiError, LeanUnreachable, call

    path = state_file(cfg, agent)
    token = session.get("session_token")
    if path is None or cfg.root is None or not token:
        return []
    key = _key(session)
    with _Locked(path, key) as state:
        pending = dict(state["pending"])
        state["pending"] = {}
        if sender:
            state.pop("sender_at", None)
        sent_before = dict(state["sent"])
    if not pending:
        return []
    try:
        edits = own_edits(cfg, agent, file_edits(cfg.root, list(pending)))
        edits = _changes(edits, sent_before)
        if edits:
            call(cfg, "POST", "/api/v1/status", {"edits": edits}, token)
    except (LeanUnreachable, GitUnreadable):
        with _Locked(path, key) as state:  # try again with the next edit or at Stop
            for p in pending:
                state["pending"].setdefault(p, pending[p])
        return []
    except LeanApiError as exc:
        print(f"agentlanes: edits not reported ({exc})", file=sys.stderr)
        return []
    if edits:
        record_sent(cfg, agent, session, edits)
    return edits


def record_sent(
    cfg: LocalConfig, agent: str, session: dict[str, Any], edits: list[dict[str, Any]]
) -> None:
    """Remember what the server now holds for these files (so they are not sent again
    while unchanged)."""
    path = state_file(cfg, agent)
    if path is None:
        return
    with _Locked(path, _key(session)) as state:
        for e in edits:
            if e["ranges"]:
                state["sent"][e["path"]] = _held(e)
            else:
                state["sent"].pop(e["path"], None)
        state["last_send"] = time.time()


def _changes(edits: list[dict[str, Any]], sent: dict[str, Any]) -> list[dict[str, Any]]:
    """The edits that differ from what the server holds; within ``MAX_FILES`` files."""
    out = []
    held = {p for p, e in sent.items() if isinstance(e, dict) and e.get("ranges")}
    for e in edits:
        before = sent.get(e["path"])
        if before is None:
            if not e["ranges"]:
                continue  # never reported, nothing to drop
            if len(held) >= MAX_FILES:
                continue  # stays a plain claim
            held.add(e["path"])
        elif before == _held(e):
            continue
        out.append(e)
    return out


def _held(edit: dict[str, Any]) -> dict[str, Any]:
    """What the server holds of a sent edit: its base, ranges and digests (new text on
    the same lines is a change to send: a stale digest could pass a conflict)."""
    held = {"base": edit["base"], "ranges": edit["ranges"]}
    if "digests" in edit:
        held["digests"] = edit["digests"]
    return held


def pending(cfg: LocalConfig, agent: str) -> dict[str, Any]:
    """The state as kept (for tests and ``lanes status``): ``pending``, ``sent``, ...."""
    path = state_file(cfg, agent)
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def last_reported(
    cfg: LocalConfig, agent: str, session: dict[str, Any]
) -> list[dict[str, Any]] | None:
    """The edits the server holds for this session, as last sent from here (the git hook
    grades its check with them); None when none were sent."""
    state = pending(cfg, agent)
    sent = state.get("sent")
    if state.get("session") != _key(session) or not isinstance(sent, dict) or not sent:
        return None
    return [
        {"path": p, "base": e.get("base"), "ranges": e.get("ranges")}
        for p, e in sent.items()
        if isinstance(e, dict)
    ]


def touched(cfg: LocalConfig, agent: str, session: dict[str, Any]) -> list[str] | None:
    """The files this session's tool calls changed (committed or not), as its hooks
    noted them; None when no after-edit hook ever ran for it."""
    state = pending(cfg, agent)
    if state.get("session") != _key(session) or not isinstance(state.get("touched"), list):
        return None
    return [p for p in state["touched"] if isinstance(p, str)]


def forget(cfg: LocalConfig, agent: str) -> None:
    """Remove the state (the session ended)."""
    path = state_file(cfg, agent)
    if path is not None:
        try:  # noqa: SIM105 - contextlib is one more import on every hook
            os.unlink(path)
        except OSError:
            pass


# -- from the hooks --------------------------------------------------------------------------


def _setup(payload: dict[str, Any], env: dict[str, str] | None) -> Any:
    from agentlanes.hooks.news import _setup as setup

    return setup(payload, env)


def after_files(
    payload: dict[str, Any], files: list[str], env: dict[str, str] | None, *, spawn: bool = True
) -> str:
    """After a tool call (Claude Code's ``PostToolUse``, an agent's after-edit event):
    note ``files`` (absolute, or relative to the payload's ``cwd``) as changed by the
    payload's agent; ``"none"`` when there is nothing to note or no session."""
    if not files:
        return "none"
    found = _setup(payload, env)
    if found is None:
        return "none"
    cfg, agent, session = found
    cwd = payload.get("cwd")
    base = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    paths = repo_paths(cfg.root, [os.path.join(base, f) for f in files])
    paths = [p for p in paths if not os.path.isdir(os.path.join(cfg.root, p))]
    observe_after(cfg, agent, paths)
    # The files its own tool calls changed, for its check-out's files_touched.
    return note(cfg, agent, session, paths, spawn=spawn, env=env, touched=paths)


def flush_for(payload: dict[str, Any], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """``Stop`` and ``SessionEnd``: send what is still pending now."""
    found = _setup(payload, env)
    if found is None:
        return []
    cfg, agent, session = found
    path = state_file(cfg, agent)
    if path is None or not os.path.exists(path):
        return []  # no edit noted yet: no lock, no git
    return flush(cfg, agent, session)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "send":
        sys.exit(_send_at(sys.argv[2], sys.argv[3], float(sys.argv[4])))
    print("usage: python -m agentlanes.hooks.edits send ROOT AGENT DUE", file=sys.stderr)
    sys.exit(2)
