"""The editor guard: a pre-edit hook for coding agents (Claude Code's PreToolUse contract).

Reads the tool call as JSON on stdin (``tool_name``, ``tool_input.file_path`` (or
``notebook_path`` / ``path``), ``cwd``), asks the server whether another live session
claims that file, and answers on stdout:

- a conflict in a ``block`` project: ``permissionDecision: "deny"`` with the reason (the
  agent sees it and can coordinate instead of editing);
- a conflict in ``warn`` mode, no session, a file outside the agent's declared files, or a
  server that cannot be reached: no decision, the warning as ``additionalContext`` (so the
  user's own permission rules still apply); with ``--allow`` the decision is ``"allow"``;
- nothing to say: no output (or ``"allow"`` with ``--allow``).

Unreachable server with ``fail_closed = true``: deny. Like the git hook it imports only
the standard library and the lean client parts.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from agentlanes.client.config import ConfigError, find_repo_root, load_config, read_session
from agentlanes.client.lean import LeanApiError, LeanUnreachable, call
from agentlanes.client.report import capped, conflict_lines

PATH_KEYS = ("file_path", "notebook_path", "path")


class GuardInputError(ValueError):
    """The JSON on stdin is not a tool call we can read."""


def target_path(payload: Any) -> tuple[Path, Path] | None:
    """(the file the tool will change, the directory the agent works in), or None."""
    if not isinstance(payload, dict):
        raise GuardInputError("stdin: expected a JSON object (a PreToolUse tool call)")
    tool_input = payload.get("tool_input")
    if tool_input is None:
        return None
    if not isinstance(tool_input, dict):
        raise GuardInputError("tool_input: expected an object")
    raw = next((tool_input[k] for k in PATH_KEYS if isinstance(tool_input.get(k), str)), None)
    if not raw:
        return None
    cwd = payload.get("cwd")
    base = Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd()
    target = Path(raw) if os.path.isabs(raw) else base / raw
    return Path(os.path.normpath(target)), base


def decide(payload: Any, env: dict[str, str] | None = None, allow: bool = False) -> dict[str, Any]:
    """The hook's answer for one tool call (an empty dict: nothing to say)."""
    env = dict(os.environ) if env is None else env
    found = target_path(payload)
    if found is None:
        return _answer([], allow)
    target, base = found
    # The repository of the file itself (an agent may edit in a sibling worktree).
    start = target.parent if target.parent.exists() else base
    found_root = find_repo_root(start)
    if found_root is None:
        return _answer([], allow)
    root = Path(found_root)
    try:
        rel = target.relative_to(root).as_posix()
    except ValueError:
        return _answer([], allow)
    if rel == ".git" or rel.startswith(".git/"):
        return _answer([], allow)
    try:
        cfg = load_config(root, env)
    except ConfigError as exc:
        return _answer([f"agentlanes: {exc}; edit not checked"], allow)
    if not cfg.api_key:
        return _answer([], allow)

    notes: list[str] = []
    session = read_session(cfg, env)
    token = session["session_token"] if session else None
    if not token:
        notes.append(
            "agentlanes: you are not checked in (run `lanes checkin`); others cannot see you"
        )
    elif session and session.get("declared_files") and not _claimed(session["declared_files"], rel):
        notes.append(
            f"agentlanes: {rel} is outside your declared files; "
            f"widen them with `lanes status --files ...` so others see it"
        )
    try:
        result = call(cfg, "POST", "/api/v1/conflicts/check", {"paths": [rel]}, token)
        conflicts = result.get("conflicts") or []
        mode = call(cfg, "GET", "/api/v1/project").get("conflict_mode") if conflicts else None
    except LeanUnreachable as exc:
        if cfg.fail_closed:
            return _deny(f"agentlanes: server unreachable at {cfg.url} ({exc}); fail_closed is set")
        return _answer([*notes, f"agentlanes: server unreachable ({exc}); edit not checked"], allow)
    except LeanApiError as exc:
        if token and exc.code == "SESSION_NOT_FOUND":
            notes.append("agentlanes: your saved session is unknown to the server (check in again)")
            return _answer(notes, allow)
        return _answer([*notes, f"agentlanes: the server refused the check ({exc})"], allow)
    lines = [f"agentlanes: {line}" for line in capped(conflict_lines(conflicts), 10)]
    if conflicts and mode == "block":
        return _deny(
            "\n".join(
                [
                    *lines,
                    "agentlanes: edit refused (block mode): coordinate with that agent, "
                    "or pick other files",
                ]
            )
        )
    return _answer([*notes, *lines], allow)


def _claimed(patterns: list[str], rel: str) -> bool:
    from agentlanes.domain.patterns import claims

    try:
        return any(claims(p, rel) for p in patterns)
    except ValueError:
        return True  # a pattern this version cannot read: do not nag


def _deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _answer(notes: list[str], allow: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if allow:
        out["permissionDecision"] = "allow"
    if notes:
        out["additionalContext"] = "\n".join(notes)
        if allow:
            out["permissionDecisionReason"] = notes[0]
    return {"hookSpecificOutput": out} if len(out) > 1 else {}


def run(stdin: TextIO | None = None, stdout: TextIO | None = None, allow: bool = False) -> int:
    """Read the tool call, write the decision. 0 always, except 2 for unreadable input."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        payload = json.loads(stdin.read() or "null")
        answer = decide(payload, allow=allow)
    except (ValueError, GuardInputError) as exc:
        message = str(exc) if isinstance(exc, GuardInputError) else f"stdin: not JSON ({exc})"
        print(f"agentlanes guard: {message}", file=sys.stderr)
        return 2
    if answer:
        stdout.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(run(allow="--allow" in sys.argv[1:]))
