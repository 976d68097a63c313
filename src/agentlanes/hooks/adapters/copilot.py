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
- ``postToolUse``: claims follow edits (nothing to answer);
- ``notification``: the agent's news as ``additionalContext``;
- ``sessionEnd``: check out.

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
        tool = str(payload.get("toolName") or payload.get("tool_name") or "")
        args = _args(payload)
        if tool in SHELL_TOOLS and isinstance(args.get("command"), str):
            verdict = core.check(AGENT, sid, cwd, "Bash", {"command": args["command"]})
        elif tool == "apply_patch":
            patch = args.get("input") or args.get("patch") or args.get("command")
            verdict = core.check(AGENT, sid, cwd, "apply_patch", {"command": patch})
        elif tool in FILE_TOOLS and args.get("command") not in READ_COMMANDS:
            path = args.get("path") or args.get("file_path")
            if not isinstance(path, str) or not path:
                return Answer({})
            verdict = core.check(AGENT, sid, cwd, "Write", {"file_path": path})
        else:
            return Answer({})  # view, grep, glob: never refused
        if verdict.deny:
            return Answer({"permissionDecision": "deny", "permissionDecisionReason": verdict.deny})
        return Answer({})
    if name in ("notification", "Notification"):
        text = core.news(AGENT, sid, cwd)
        return Answer({"additionalContext": text} if text else {})
    return Answer({})
