"""Cursor's agent hooks (https://cursor.com/docs/agent/hooks). ``.cursor/hooks.json``
(``"version": 1``) runs ``lanes guard --agent cursor`` for:

- ``sessionStart``: check in as ``cursor-<conversation_id>``; who else is live goes back
  as ``additional_context``;
- ``preToolUse`` (``Write``, ``Edit``, ``Delete``, ... with ``tool_input.file_path``) and
  ``beforeShellExecution`` (``command``, ``cwd``): a refusal is
  ``{"permission": "deny", "agent_message", "user_message"}``; a pass says nothing
  (``{}``), so Cursor's own approval rules still apply;
- ``postToolUse`` (and ``afterFileEdit``: ``file_path``, ``edits``): the files an edit
  or shell tool changed are noted, their edits sent within a second
  (``agentlanes.hooks.edits``); the agent's news as ``additional_context``;
- ``stop``: the edits still waiting are sent; an undelivered message (or an unseen
  certain overlap) as ``followup_message``, which Cursor sends as the next prompt;
- ``sessionEnd``: check out.

Every event carries ``conversation_id`` and ``workspace_roots``.

A shell command is one tool call that fires both ``preToolUse`` (``tool_name`` ``Shell``)
and ``beforeShellExecution``: the second checks it, the first lets it pass, so it is
checked once.

Cursor also runs Claude Code's hooks from ``.claude/settings.json``
(https://cursor.com/docs/reference/third-party-hooks: its events mapped to Cursor's,
``PreToolUse`` → ``preToolUse``, ``Bash`` → ``Shell``; either answer format taken), so
``lanes guard`` (the Claude Code hook) may get Cursor's events: ``from_claude_config``
answers them. It stands aside when ``.cursor/hooks.json`` runs this adapter too, and
otherwise checks the call itself, so one tool call is checked once whichever configs
are present. A hook runs under Cursor when its event carries Cursor's own fields
(``cursor_version``, ``conversation_id``, ``workspace_roots``), or Cursor's environment
(``CURSOR_VERSION``, https://cursor.com/docs/agent/hooks) without Claude Code's
(``CLAUDECODE=1``, which Claude Code sets for its hooks: a Claude Code started in
Cursor's terminal inherits ``CURSOR_*``)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from agentlanes.hooks.adapters import core
from agentlanes.hooks.adapters.core import Answer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS: dict[str, Any] = {}
AGENT = "cursor"
EDIT_TOOLS = frozenset({"Write", "Edit", "Delete", "StrReplace", "MultiEdit", "EditNotebook"})
SHELL_TOOLS = frozenset({"Shell", "Bash", "run_terminal_cmd"})


# Claude Code's event names as Cursor maps them (third-party hooks, "Hook Step Mapping").
CLAUDE_EVENTS = {
    "PreToolUse": "preToolUse",
    "PostToolUse": "postToolUse",
    "UserPromptSubmit": "beforeSubmitPrompt",
    "Stop": "stop",
    "SubagentStop": "subagentStop",
    "SessionStart": "sessionStart",
    "SessionEnd": "sessionEnd",
    "PreCompact": "preCompact",
}
CURSOR_FIELDS = ("cursor_version", "conversation_id", "workspace_roots")
MINE = "guard --agent cursor"  # in a .cursor/hooks.json command: this adapter runs there


def runs_under_cursor(payload: Any, env: Mapping[str, str]) -> bool:
    """Whether a hook (the Claude Code one, ``lanes guard``) was run by Cursor."""
    if isinstance(payload, dict) and any(k in payload for k in CURSOR_FIELDS):
        return True
    return bool(env.get("CURSOR_VERSION")) and env.get("CLAUDECODE") != "1"


def cursor_config_runs_guard(payload: dict[str, Any], env: Mapping[str, str]) -> bool:
    """Whether Cursor also runs this adapter: the project's (or the user's)
    ``.cursor/hooks.json`` names ``lanes guard --agent cursor``."""
    project = env.get("CURSOR_PROJECT_DIR") or _cwd(payload) or os.getcwd()
    candidates = [os.path.join(str(project), ".cursor", "hooks.json")]
    home = env.get("HOME")
    if home:
        candidates.append(os.path.join(home, ".cursor", "hooks.json"))
    for path in candidates:
        try:
            with open(path, encoding="utf-8") as fh:
                if MINE in fh.read(1_000_000):
                    return True
        except OSError:
            continue
    return False


def from_claude_config(payload: dict[str, Any], env: Mapping[str, str]) -> Answer:
    """Cursor's event, run through Claude Code's config: nothing when the Cursor config
    checks it (one check per tool call), else this adapter's answer (Cursor takes its
    own format from a Claude Code hook), the shell checked at ``preToolUse`` since no
    ``beforeShellExecution`` hook of ours runs."""
    if cursor_config_runs_guard(payload, env):
        return Answer(None)
    name = str(payload.get("hook_event_name") or "")
    return _answer(payload, CLAUDE_EVENTS.get(name, name), shell_at_pre=True)


def _sid(payload: dict[str, Any]) -> Any:
    return payload.get("conversation_id") or payload.get("session_id")


def _cwd(payload: dict[str, Any]) -> Any:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else core.first_root(payload.get("workspace_roots"))


def _deny(reason: str) -> dict[str, Any]:
    return {"permission": "deny", "agent_message": reason, "user_message": reason}


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A tool call that changes files, in Claude Code's terms; None for the others."""
    return core.file_call(
        payload.get("tool_name"),
        payload.get("tool_input"),
        file_tools=EDIT_TOOLS,
        shell_tools=SHELL_TOOLS,
    )


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    return _answer(payload, event or payload.get("hook_event_name"), shell_at_pre=False)


def _answer(payload: dict[str, Any], name: Any, shell_at_pre: bool) -> Answer:
    sid, cwd = _sid(payload), _cwd(payload)
    if name == "sessionStart":
        text = core.start(AGENT, sid, cwd)
        return Answer({"additional_context": text} if text else {})
    if name == "sessionEnd":
        core.end(AGENT, sid, cwd)
        return Answer({})
    if name == "beforeShellExecution":
        command = payload.get("command")
        if not isinstance(command, str):
            return Answer({})
        verdict = core.check(AGENT, sid, cwd, "Bash", {"command": command})
        return Answer(_deny(verdict.deny) if verdict.deny else {})
    if name == "preToolUse":
        call = _call(payload)
        if call is None:
            return Answer({})  # reads, searches, MCP calls: never refused
        if call[0] == "Bash" and not shell_at_pre:
            return Answer({})  # beforeShellExecution checks this call
        verdict = core.check(AGENT, sid, cwd, *call)
        return Answer(_deny(verdict.deny) if verdict.deny else {})
    if name in ("postToolUse", "afterFileEdit"):
        path = payload.get("file_path")
        if name == "afterFileEdit" and isinstance(path, str) and path:
            core.edited(AGENT, sid, cwd, "Write", {"file_path": path})
        elif name == "postToolUse" and (call := _call(payload)) is not None:
            core.edited(AGENT, sid, cwd, *call)
        text = core.news(AGENT, sid, cwd)
        return Answer({"additional_context": text} if text else {})
    if name == "stop":  # a follow-up only for what needs the agent (it runs a new turn)
        core.flush(AGENT, sid, cwd)
        text = core.urgent(AGENT, sid, cwd)
        return Answer({"followup_message": text} if text else {})
    return Answer({})
