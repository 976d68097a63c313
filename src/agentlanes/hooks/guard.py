"""The editor guard: Claude Code's hooks (``lanes guard``), one command for three events.

Claude Code runs the hook command with the event as JSON on stdin
(https://code.claude.com/docs/en/hooks): ``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name`` and the event's own fields. By ``hook_event_name``:

- ``SessionStart``: check in as ``claude-<session_id>`` (``agentlanes.hooks.agent_session``);
- ``PreToolUse``: every file the tool will change (``Edit``, ``Write``, ``MultiEdit``,
  ``NotebookEdit``, and ``Bash`` commands read by ``agentlanes.hooks.shellwrites``) is checked
  against the other live sessions. A certain overlap in a ``block`` project is denied
  (``permissionDecision: "deny"`` with the reason); anything else gets no decision, a
  warning as ``additionalContext`` when there is one. A file outside the session's claims
  then joins them (``POST /api/v1/status``), so others see it live. Reads and tools that
  change no file are never denied: they get no output at all;
- ``PostToolUse``: the files the tool call changed are noted, and their changed lines
  against ``HEAD`` reported as ``edits`` within a second (``agentlanes.hooks.edits``);
  the answer is the agent's news (``agentlanes.hooks.news``);
- ``Stop``: the edits still waiting are sent, then the news's check before a stop;
- ``SessionEnd``: check out with the files git sees changed that the session claims.

The hook never exits 2 (Claude Code reads that as "block this tool call"): unreadable
input, a missing key, an unreachable server or a bug of ours all end with one line on
stderr and exit 0, unless ``fail_closed = true`` turns an unreachable server into a deny.
Like the git hook it imports only the standard library and the lean client parts.
"""

from __future__ import annotations

import json
import os
import sys
import time

from agentlanes.client.config import ConfigError, find_repo_root, load_config, read_session
from agentlanes.client.report import claimed_earlier, conflict_lines, is_certain, ranges_text
from agentlanes.hooks.agent_name import agent_for
from agentlanes.hooks.http import LeanApiError, LeanUnreachable, call, call_many

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from agentlanes.client.config import LocalConfig

FILE_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path"}
NOTEBOOK_TOOLS = {"NotebookEdit": "notebook_path"}
SHOWN_LINES = 10
USAGE = (
    "usage: lanes guard [--allow]  (a Claude Code hook: reads the event as JSON on stdin; "
    "other agents: lanes guard --agent NAME)"
)


class GuardInputError(ValueError):
    """The JSON on stdin is not a hook event we can read."""


def tool_targets(payload: dict[str, Any]) -> tuple[list[tuple[str, bool]], str]:
    """(the files or globs the tool call will change, as absolute paths; the agent's cwd)."""
    tool = payload.get("tool_name")
    tool = tool if isinstance(tool, str) else ""
    tool_input = payload.get("tool_input")
    cwd = payload.get("cwd")
    base = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    if tool_input is not None and not isinstance(tool_input, dict):
        raise GuardInputError("tool_input: expected an object")
    tool_input = tool_input or {}
    key = FILE_TOOLS.get(tool) or NOTEBOOK_TOOLS.get(tool)
    if key:
        raw = tool_input.get(key)
        if not isinstance(raw, str) or not raw:
            return [], base
        return [(os.path.normpath(os.path.join(base, raw)), False)], base
    if tool == "apply_patch":  # Codex (and OpenCode): the files named in the patch text
        from agentlanes.hooks.apply_patch import patch_paths

        files = patch_paths(tool_input.get("command") or tool_input.get("patchText"))
        return [(os.path.normpath(os.path.join(base, f)), False) for f in files], base
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return [], base
        from agentlanes.hooks.shellwrites import written_paths

        return written_paths(command, base), base
    return [], base  # Read, Grep, Glob, and tools we do not know: nothing changes


def _scope(targets: list[tuple[str, bool]], root: str) -> tuple[list[str], list[str]]:
    """(concrete paths, patterns) relative to the repository root.

    A directory (``rm -r src/old``) is sent as ``src/old/`` and a glob as itself: both as
    patterns, since they stand for everything below or matching them.
    """
    paths: list[str] = []
    patterns: list[str] = []
    prefix = root.rstrip(os.sep) + os.sep
    for full, is_glob in targets:
        if not full.startswith(prefix):
            continue  # outside this repository
        rel = full[len(prefix) :].replace(os.sep, "/")
        if rel == ".git" or rel.startswith(".git/"):
            continue
        if is_glob:
            patterns.append(rel)
        elif os.path.isdir(full):
            patterns.append(rel + "/")
        else:
            paths.append(rel)
    return list(dict.fromkeys(paths)), list(dict.fromkeys(patterns))


# -- answers ---------------------------------------------------------------------------------


def _context(event: str, notes: list[str], allow: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"hookEventName": event}
    if allow:
        out["permissionDecision"] = "allow"
    if notes:
        out["additionalContext"] = "\n".join(notes)
        if allow:
            out["permissionDecisionReason"] = notes[0]
    return {"hookSpecificOutput": out} if len(out) > 1 else {}


def _deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


# SPEC "Context budget": a refusal reason is at most this long and ends with the next step.
REFUSAL_MAX_CHARS = 600


def refusal(
    why: list[str],
    refusing: list[dict[str, Any]],
    paths: list[str],
    root: str | None,
    me: str | None,
) -> str:
    """An edit's refusal: ``why`` (who holds what), then the three ways on — wait your
    turn, ask the holder, other work — and the next step, in REFUSAL_MAX_CHARS at most
    (``why`` is cut first; the ways on stay whole)."""
    names = list(dict.fromkeys(str(c.get("agent_name", "?")) for c in refusing))
    holder = names[0] if names else "AGENT"
    rel = [os.path.relpath(p, root) if root and os.path.isabs(p) else p for p in paths[:2]]
    from agentlanes.domain.words import shell_word

    shown = " ".join(shell_word(p[:80]) for p in rel) or "PATH"
    who = f" (you are {me})" if me else ""
    ways = (
        f"agentlanes: edit refused (block mode). Ways on: wait your turn (lanes wait "
        f"{shown}), ask {holder} to release it{who} (lanes ask {holder} {shown} --reason "
        f'"..."), or work on other files. Next step: lanes wait {shown}'
    )
    head = "\n".join(why)
    room = REFUSAL_MAX_CHARS - len(ways) - 1
    if len(head) > room:
        head = head[: max(0, room - 1)] + "…"
    text = f"{head}\n{ways}" if head else ways
    return text if len(text) <= REFUSAL_MAX_CHARS else text[-REFUSAL_MAX_CHARS:]


# -- PreToolUse ------------------------------------------------------------------------------


def decide(payload: Any, env: dict[str, str] | None = None, allow: bool = False) -> dict[str, Any]:
    """The answer to one PreToolUse call (an empty dict: nothing to say)."""
    if not isinstance(payload, dict):
        raise GuardInputError("stdin: expected a JSON object (a Claude Code hook event)")
    env = dict(os.environ) if env is None else env
    targets, base = tool_targets(payload)
    _note_read(payload, env, base)
    if not targets:
        return {}
    # The repository the agent works in; else the one of the first file (an agent may
    # edit in a sibling worktree).
    found = find_repo_root(base) if os.path.isdir(base) else None
    paths, patterns = _scope(targets, found) if found else ([], [])
    if not paths and not patterns:
        start = os.path.dirname(targets[0][0])
        while start and not os.path.isdir(start):
            start = os.path.dirname(start)
        other = find_repo_root(start) if start else None
        if other is None:
            return {}
        paths, patterns = _scope(targets, other)
        if not paths and not patterns:
            return {}
        from agentlanes.client.worktree import same_repository

        if found is None or not same_repository(found, other):
            found = other  # another repository: its own configuration and sessions
        # else a sibling worktree of this repository: the same repository paths, checked
        # and claimed by the agent's own session (the worktree it works in keeps it).
    try:
        cfg = load_config(found, env)
    except ConfigError as exc:
        return _context("PreToolUse", [f"agentlanes: {exc}; edit not checked"], allow)
    stale = _stale_write(cfg, payload, env, paths)
    if stale:
        return _deny(stale)  # in every mode: it would erase another agent's lines
    if not cfg.api_key:
        print(
            "agentlanes guard: no API key (AGENTLANES_API_KEY or .agentlanes.toml); "
            "edit not checked",
            file=sys.stderr,
        )
        return _context("PreToolUse", [], allow)
    return _check_edit(cfg, payload, env, paths, patterns, allow)


def _note_read(payload: dict[str, Any], env: dict[str, str], base: str) -> None:
    """A read (``Read``, each agent's read tool as its adapter maps it, or a shell command
    that prints files: ``cat``, ``sed -n``) of files the working tree's ledger follows:
    whole-file writes of them after this are not stale. Never fails the read."""
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if tool not in ("Read", "Bash") or not isinstance(tool_input, dict):
        return
    agent = agent_for(payload, env)
    if agent is None:
        return
    try:
        if tool == "Read":
            raw = tool_input.get("file_path")
            files = [os.path.join(base, raw)] if isinstance(raw, str) and raw else []
        else:
            from agentlanes.hooks.shellwrites import read_paths

            command = tool_input.get("command")
            read = read_paths(command, base) if isinstance(command, str) else []
            files = [full for full, is_glob in read if not is_glob]
        root = find_repo_root(os.path.dirname(os.path.normpath(files[0]))) if files else None
        if root is None:
            return
        from agentlanes.agent.ledger import Ledger
        from agentlanes.client.config import LocalConfig
        from agentlanes.hooks.edits import repo_paths

        state = LocalConfig(root).state_dir
        if state is not None:
            book = Ledger(state, root)
            for path in repo_paths(root, files):
                book.read(path, agent)
    except Exception as exc:  # a read is never refused, nor slowed by a failure here
        print(f"agentlanes guard: read not noted ({type(exc).__name__}: {exc})", file=sys.stderr)


def _stale_write(
    cfg: LocalConfig, payload: dict[str, Any], env: dict[str, str], paths: list[str]
) -> str | None:
    """Before a tool call changes ``paths``: each goes into the working tree's ledger as
    it is now (what changed since without a hook is nobody's). Then, for a call that
    replaces whole files (``Write``, a shell ``>`` redirect), the refusal when another
    live agent of this working tree changed one of them after this agent last read or
    wrote it (SPEC "Many agents, one working tree"); None when it may go on."""
    from agentlanes.agent.tree import ledger_of, others

    agent = agent_for(payload, env)
    ledger = ledger_of(cfg)
    if ledger is None or not paths:
        return None
    for path in paths:
        ledger.observe(path, None)
    whole = _whole_file_writes(payload, cfg.root or "", paths)
    live = others(cfg, agent) if whole and agent else set()
    if not live:
        return None
    lines = []
    for path in whole:
        for who, when, which in ledger.stale(path, str(agent), live):
            at = time.strftime("%H:%M:%S UTC", time.gmtime(when))
            lines.append(
                f"agentlanes: {path}: {who} changed it ({which}, at {at}) after you last "
                "read or wrote it"
            )
    if not lines:
        return None
    return "\n".join(
        [
            *lines[:SHOWN_LINES],
            "agentlanes: whole-file write refused: it would erase their lines. Read the file "
            "again, then make your change with an edit of the lines you mean (or write it "
            "whole once you have read it)",
        ]
    )


def _own_hunks(cfg: LocalConfig, agent: str) -> Any:
    """In a working tree shared with other live agents (SPEC "Many agents, one working
    tree"): the ledger's reading of which of git's hunks will be ``agent``'s once its tool
    call is made (``Ledger.owned_after``); None in a tree of its own, where the file's diff
    against ``HEAD`` is the agent's."""
    from agentlanes.agent.tree import ledger_of, others

    ledger = ledger_of(cfg)
    if ledger is None or not others(cfg, agent):
        return None

    def own(path: str, text: str, hunks: list[tuple[int, int, int, int]]) -> Any:
        return ledger.owned_after(path, agent, text, hunks)

    return own


def _whole_file_writes(payload: dict[str, Any], root: str, paths: list[str]) -> list[str]:
    """Of ``paths``, the ones this tool call replaces whole: a ``Write``'s file, a shell
    command's ``>`` redirect targets (``hooks/shellwrites.py``). Anchored edits
    (``Edit``, ``apply_patch``, Gemini's ``replace``) replace only what they name."""
    tool = payload.get("tool_name")
    if tool == "Write":
        return paths
    if tool != "Bash":
        return []
    command = (payload.get("tool_input") or {}).get("command")
    cwd = payload.get("cwd")
    if not isinstance(command, str):
        return []
    from agentlanes.hooks.edits import repo_paths
    from agentlanes.hooks.shellwrites import overwritten_paths

    base = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    targets = [full for full, is_glob in overwritten_paths(command, base) if not is_glob]
    return [p for p in repo_paths(root, targets) if p in paths]


def _check_edit(
    cfg: LocalConfig,
    payload: dict[str, Any],
    env: dict[str, str],
    paths: list[str],
    patterns: list[str],
    allow: bool,
) -> dict[str, Any]:
    agent = agent_for(payload, env)
    try:
        session = read_session(cfg, env, agent=agent)
    except ConfigError:
        session = None
    notes: list[str] = []
    token = session.get("session_token") if session else None
    mine = session.get("session_id") if session else None
    body: dict[str, Any] = {}
    if paths:
        body["paths"] = paths
    if patterns:
        body["patterns"] = patterns
    if session and session.get("claims"):  # my lines of a file are my claim there (range claims)
        body["claims"] = session["claims"]
    # Usually one request: the check, without the token when we know our session's id, so
    # our own claims come back too and say which files are already ours. A heartbeat goes
    # along once half the heartbeat interval has passed (an agent at work is alive); the
    # project's mode is asked only when someone else holds something.
    requests: list[Any] = [("POST", "/api/v1/conflicts/check", body, None if mine else token)]
    beat = bool(token) and _heartbeat_due(session)
    if beat:
        requests.append(("POST", "/api/v1/heartbeat", {}, token))
    try:
        answers = call_many(cfg, requests)
        check = answers[0]
        if isinstance(check, LeanApiError):
            raise check
        conflicts = check.get("conflicts") or []
        own = [c for c in conflicts if mine and c.get("session_id") == mine]
        others = [c for c in conflicts if not (mine and c.get("session_id") == mine)]
        project = call(cfg, "GET", "/api/v1/project") if others else {}
    except LeanUnreachable as exc:
        if cfg.fail_closed:
            return _deny(f"agentlanes: server unreachable at {cfg.url} ({exc}); fail_closed is set")
        return _context("PreToolUse", [f"agentlanes: server unreachable ({exc}); not checked"])
    except LeanApiError as exc:
        return _context("PreToolUse", [f"agentlanes: the server refused the check ({exc})"], allow)
    ended = beat and isinstance(answers[1], LeanApiError) and answers[1].status in (404, 410)
    if beat and not ended and session:
        _beaten(session)
    # The older claim stands: only an overlap with a claim made before mine refuses.
    refusing = claimed_earlier(others, own) if others else []
    coming: dict[str, Any] = {}
    if refusing and project.get("block_on") == "lines" and cfg.root:
        # SPEC "Line-level claims": only where their edits to a file this call changes
        # meet the lines it is about to change (diffed by git before the edit is made).
        from agentlanes.hooks.coming_edit import meeting

        margin = int(project.get("line_margin") or 0)
        hunks_of = _own_hunks(cfg, str(agent)) if agent else None
        refusing, coming, meets = meeting(payload, cfg.root, paths, refusing, margin, hunks_of)
    else:
        meets = []
    if refusing and project.get("conflict_mode") == "block" and any(map(is_certain, refusing)):
        return _deny(
            refusal(
                [
                    *(f"agentlanes: {line}" for line in meets),
                    *conflict_lines(refusing, "agentlanes: ", SHOWN_LINES),
                ],
                refusing,
                paths,
                cfg.root,
                agent,
            )
        )
    notes.extend(conflict_lines(others, "agentlanes: ", SHOWN_LINES))
    for path, e in coming.items():  # admitted under block_on = lines: say why
        notes.append(
            f"agentlanes: your edit of {path} (lines {ranges_text(e.ranges)}) is apart from the "
            "others' edits there: git merges them (block_on = lines)"
        )
    # Claims follow edits: what this call changes and our claims do not cover yet joins
    # them, now that its check has passed.
    covered = {
        str(f.get("pattern")).rstrip("/") for c in own for f in c.get("overlapping_files") or []
    }
    new = [p for p in [*paths, *patterns] if p.rstrip("/") not in covered]
    if session is None or ended:
        if agent is None:
            if session is None:
                notes.append(
                    "agentlanes: you are not checked in (run `lanes checkin`); "
                    "others cannot see you"
                )
            else:
                notes.append("agentlanes: your saved session has ended (check in again)")
        else:
            notes.extend(_join_again(cfg, agent, session, new))
    elif new:
        notes.extend(_claim(cfg, session, new, coming))
    return _context("PreToolUse", notes, allow)


def _heartbeat_due(session: dict[str, Any] | None) -> bool:
    """Half an interval since the last heartbeat (the session file's mtime records it)."""
    source = (session or {}).get("source")
    if not source or source == "AGENTLANES_SESSION_TOKEN":
        return True
    interval = float((session or {}).get("heartbeat_interval_seconds") or 30)
    try:
        return time.time() - os.path.getmtime(source) >= interval / 2
    except OSError:
        return True


def _beaten(session: dict[str, Any]) -> None:
    source = session.get("source")
    if source and source != "AGENTLANES_SESSION_TOKEN":
        try:  # noqa: SIM105 - contextlib is one more import on every edit
            os.utime(source)
        except OSError:
            pass


def _claim(
    cfg: LocalConfig, session: dict[str, Any], new: list[str], coming: dict[str, Any] | None = None
) -> list[str]:
    """Add ``new`` to the session's declared files (a status change others see live), with
    the edits about to be made when they were read (``block_on = lines``: the server then
    grades the new claim by them, as the guard just did)."""
    from agentlanes.client.config import save_session

    declared = list(session.get("declared_files") or [])
    wanted = declared + [p for p in new if p not in declared]
    body: dict[str, Any] = {"declared_files": wanted}
    if coming:
        body["edits"] = [e.wire(p) for p, e in coming.items()]
    try:
        result = call(cfg, "POST", "/api/v1/status", body, session["session_token"])
    except LeanUnreachable as exc:
        return [f"agentlanes: server unreachable ({exc}); your claims were not widened"]
    except LeanApiError as exc:
        if exc.status in (404, 410) and session.get("agent_name"):
            return _join_again(cfg, session["agent_name"], session, new)  # it ended meanwhile
        return [f"agentlanes: could not add {', '.join(new)} to your claims ({exc})"]
    if session.get("source") not in (None, "AGENTLANES_SESSION_TOKEN") and session.get(
        "agent_name"
    ):
        session["declared_files"] = result.get("declared_files", wanted)
        # The claims its edits brought: a commit that leaves none of its lines in one
        # takes it out again (hooks/post_commit.py); claims declared at check-in stay.
        joined = [p for p in session.get("edit_claims") or [] if isinstance(p, str)]
        session["edit_claims"] = list(
            dict.fromkeys([*joined, *(p for p in new if p not in declared)])
        )
        save_session(cfg, session)
    return []


def _join_again(
    cfg: LocalConfig, agent: str, session: dict[str, Any] | None, new: list[str]
) -> list[str]:
    """A Claude Code session with no live agentlanes session (hooks added mid-session, or it
    timed out while idle): check in now, claiming what it had and what it is changing."""
    from agentlanes.hooks.agent_session import _agent_process, _start_keepalive, checkin_for

    declared = list((session or {}).get("declared_files") or [])
    files = declared + [p for p in new if p not in declared]
    process = _agent_process(None)
    try:
        checkin_for(
            cfg, agent, files, meta={"tool": "claude-code", "joined": "PreToolUse"}, extra=process
        )
    except (LeanUnreachable, LeanApiError, ConfigError) as exc:
        return [f"agentlanes: could not check you in as {agent} ({exc})"]
    # From now on the session lives as long as the agent.
    note = _start_keepalive(cfg, agent, process, restart=True)
    return [note] if note else []


# -- the command -----------------------------------------------------------------------------


def handle(payload: Any, env: dict[str, str] | None = None, allow: bool = False) -> dict[str, Any]:
    """The answer to one hook event, whichever it is."""
    if not isinstance(payload, dict):
        raise GuardInputError("stdin: expected a JSON object (a Claude Code hook event)")
    event = payload.get("hook_event_name")
    if event == "SessionStart":
        from agentlanes.hooks.agent_session import session_start

        return session_start(payload, env)
    if event == "SessionEnd":
        from agentlanes.hooks.agent_session import session_end

        return session_end(payload, env)
    if event in ("UserPromptSubmit", "PostToolUse", "Stop"):
        from agentlanes.hooks import news

        if event == "PostToolUse":
            note_edits(payload, env)
        elif event == "Stop":
            flush_edits(payload, env)
        return news.stop(payload, env) if event == "Stop" else news.context(event, payload, env)
    if event not in (None, "PreToolUse"):
        return {}  # an event this hook was not set up for: nothing to say
    answer = decide(payload, env, allow)
    if event == "PreToolUse" and news_wanted(answer):
        # Every tool, reads included: the agent's news as additionalContext only.
        from agentlanes.hooks.news import add_to

        try:
            answer = add_to(answer, payload, env)
        except Exception as exc:  # the news never costs the guard its answer
            print(f"agentlanes guard: news skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
    return answer


def note_edits(payload: dict[str, Any], env: dict[str, str] | None, spawn: bool = True) -> None:
    """After a tool call: the files it changed (as ``PreToolUse`` reads them off the same
    tool call) are noted, and their edits sent within a second (``hooks/edits.py``). Never
    costs the hook its answer."""
    try:
        targets, _ = tool_targets(payload)
        files = [full for full, is_glob in targets if not is_glob]
        if files:
            from agentlanes.hooks.edits import after_files

            after_files(payload, files, env, spawn=spawn)
    except Exception as exc:
        print(f"agentlanes guard: edits not noted ({type(exc).__name__}: {exc})", file=sys.stderr)


def flush_edits(payload: dict[str, Any], env: dict[str, str] | None) -> None:
    """At ``Stop`` (and ``SessionEnd``): the edits still waiting for their send go now."""
    try:
        from agentlanes.hooks.edits import flush_for

        flush_for(payload, env)
    except Exception as exc:
        print(f"agentlanes guard: edits not sent ({type(exc).__name__}: {exc})", file=sys.stderr)


def news_wanted(answer: dict[str, Any]) -> bool:
    """Whether the news may follow the guard's answer: not after a refusal, and not when
    the server did not answer the check (a second wait could outlast the hook's timeout,
    and the deny of ``fail_closed`` would never be printed)."""
    out = answer.get("hookSpecificOutput") or {}
    if out.get("permissionDecision") == "deny":
        return False
    return "agentlanes: server unreachable" not in str(out.get("additionalContext") or "")


def run(stdin: TextIO | None = None, stdout: TextIO | None = None, allow: bool = False) -> int:
    """Read the event, write the answer. Always 0: exit 2 would block the tool call."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        payload = json.loads(stdin.read() or "null")
        answer = handle(payload, allow=allow)
    except (ValueError, GuardInputError) as exc:
        message = str(exc) if isinstance(exc, GuardInputError) else f"stdin: not JSON ({exc})"
        print(f"agentlanes guard: {message}; tool call not checked", file=sys.stderr)
        return 0
    except Exception as exc:  # a bug of ours must not stop the agent's work
        print(
            f"agentlanes guard: internal error ({type(exc).__name__}: {exc}); not checked",
            file=sys.stderr,
        )
        return 0
    if answer:
        stdout.write(json.dumps(answer) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "-h" in argv or "--help" in argv:
        print(USAGE)
        return 0
    unknown = [a for a in argv if a != "--allow"]
    if unknown:
        # Exit 1: Claude Code shows it as a non-blocking error; the tool call goes on.
        print(f"agentlanes guard: unknown option {unknown[0]}; {USAGE}", file=sys.stderr)
        return 1
    return run(allow="--allow" in argv)


if __name__ == "__main__":
    sys.exit(main())
