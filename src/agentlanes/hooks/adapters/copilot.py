"""GitHub Copilot CLI's hooks
(https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference).
``.github/hooks/agentlanes.json`` (``"version": 1``) runs
``lanes guard --agent copilot --event EVENT`` (the camelCase payloads do not name their
event) for:

- ``sessionStart`` (``sessionId``, ``cwd``, ``source``): check in as
  ``copilot-<sessionId>``;
- ``preToolUse`` (``toolName``, ``toolArgs``: an object, or the arguments as a JSON
  string): a refusal is ``{"permissionDecision": "deny", "permissionDecisionReason"}``.
  Always JSON and always exit 0: a non-zero exit does not block there;
- ``postToolUse`` (``toolName``, ``toolArgs``, ``toolResult``): the files an edit, patch
  or shell tool changed are noted, their edits sent within a second
  (``agentlanes.hooks.edits``); nothing to answer;
- ``notification``: the agent's news as ``additionalContext``;
- ``sessionEnd``: the edits still waiting are sent, then check out.

An event without ``sessionId`` names the agent after the Copilot process
(``copilot-pid<N>``)."""

from __future__ import annotations

import json

from agentlanes.hooks.adapters import Answer, core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS: dict[str, Any] = {}
AGENT = "copilot"
FILE_TOOLS = frozenset({"edit", "create", "write", "str_replace_editor", "str_replace"})
SHELL_TOOLS = frozenset({"bash", "shell", "powershell"})
PATCH_TOOLS = frozenset({"apply_patch"})
# ``str_replace_editor``'s commands that only read: never checked, never claimed.
READ_COMMANDS = frozenset({"view"})


def _args(payload: dict[str, Any]) -> dict[str, Any]:
    raw = payload.get("toolArgs", payload.get("tool_input"))
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return raw if isinstance(raw, dict) else {}


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A tool call that changes files, in Claude Code's terms; None for the others."""
    tool = str(payload.get("toolName") or payload.get("tool_name") or "")
    args = _args(payload)
    if tool in FILE_TOOLS and args.get("command") in READ_COMMANDS:
        return None
    return core.file_call(
        tool,
        args,
        file_tools=FILE_TOOLS,
        shell_tools=SHELL_TOOLS,
        patch_tools=PATCH_TOOLS,
        patch_keys=("input", "patch", "command"),
    )


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    name = event or payload.get("hookEventName") or payload.get("hook_event_name")
    sid = payload.get("sessionId") or payload.get("session_id")
    cwd = payload.get("cwd")
    if name in ("sessionStart", "SessionStart"):
        core.start(AGENT, sid, cwd)
        return Answer({})
    if name in ("sessionEnd", "SessionEnd"):
        core.end(AGENT, sid, cwd)
        return Answer({})
    if name in ("preToolUse", "PreToolUse"):
        call = _call(payload)
        if call is None:
            return Answer({})  # view, grep, glob: never refused
        verdict = core.check(AGENT, sid, cwd, *call)
        if verdict.deny:
            return Answer({"permissionDecision": "deny", "permissionDecisionReason": verdict.deny})
        return Answer({})
    if name in ("postToolUse", "PostToolUse"):
        call = _call(payload)
        if call is not None:
            core.edited(AGENT, sid, cwd, *call)
        return Answer({})
    if name in ("notification", "Notification"):
        text = core.news(AGENT, sid, cwd)
        return Answer({"additionalContext": text} if text else {})
    return Answer({})
