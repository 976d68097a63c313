"""GitHub Copilot CLI's hooks (1.0.102; its package's ``cli-main.js`` and
``changelog.json``, cited in docs/agents.md). ``.github/hooks/agentlanes.json``
(``"version": 1``) runs ``lanes guard --agent copilot --event EVENT`` (the camelCase
payloads do not name their event) for:

- ``sessionStart`` (``sessionId``, ``cwd``, ``source``): check in as
  ``copilot-<sessionId>``; who else is live as ``additionalContext`` (read since 1.0.11);
- ``userPromptSubmitted`` (``prompt``): the agent's news as ``additionalContext`` (in the
  model-facing prompt since 1.0.65);
- ``preToolUse`` (``toolName``, ``toolArgs``: an object, a JSON string, or for the custom
  ``apply_patch`` tool the patch text itself): a refusal is ``{"permissionDecision":
  "deny", "permissionDecisionReason"}``, always JSON with exit 0; a pass carries the
  warnings and the news as ``additionalContext`` (honoured since 1.0.24);
- ``postToolUse`` (``toolName``, ``toolArgs``, ``toolResult``): the files an edit, patch
  or shell tool changed are noted, their edits sent within a second
  (``agentlanes.hooks.edits``); the news as ``additionalContext`` (given to the model
  since 1.0.49/1.0.51);
- ``notification`` (an idle agent, a finished shell): the news as ``additionalContext``;
- ``sessionEnd``: the edits still waiting are sent, then check out.

Each item reaches the model once, whichever channel carries it: the news module marks
what it hands out as seen. Copilot CLI loads a repository's hooks only in a folder the
user trusts (``trustedFolders``; ``lanes init --agent copilot`` says how, ``lanes doctor``
checks it). An event without ``sessionId`` acts for the local Copilot session whose
process is an ancestor of the hook, else names the agent after the Copilot process
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


def _args(payload: dict[str, Any], tool: str) -> dict[str, Any]:
    raw = payload.get("toolArgs", payload.get("tool_input"))
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            # A custom (freeform) tool's input is its text: apply_patch's patch.
            return {"input": raw} if tool in PATCH_TOOLS else {}
    return raw if isinstance(raw, dict) else {}


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A tool call that changes files, in Claude Code's terms; None for the others."""
    tool = str(payload.get("toolName") or payload.get("tool_name") or "")
    args = _args(payload, tool)
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


def _context(text: str | None) -> Answer:
    return Answer({"additionalContext": text} if text else {})


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    name = event or payload.get("hookEventName") or payload.get("hook_event_name")
    sid = payload.get("sessionId") or payload.get("session_id")
    cwd = payload.get("cwd")
    if name in ("sessionStart", "SessionStart"):
        return _context(core.start(AGENT, sid, cwd))
    if name in ("sessionEnd", "SessionEnd"):
        core.end(AGENT, sid, cwd)
        return Answer({})
    if name in ("preToolUse", "PreToolUse"):
        call = _call(payload)
        if call is None:  # view, rg, glob: never refused; the news all the same
            return _context(core.news(AGENT, sid, cwd))
        verdict = core.check(AGENT, sid, cwd, *call, with_news=True)
        if verdict.deny:
            return Answer({"permissionDecision": "deny", "permissionDecisionReason": verdict.deny})
        return _context(verdict.context)
    if name in ("postToolUse", "PostToolUse"):
        call = _call(payload)
        if call is not None:
            core.edited(AGENT, sid, cwd, *call)
        return _context(core.news(AGENT, sid, cwd))
    if name in (
        "userPromptSubmitted",
        "UserPromptSubmit",
        "notification",
        "Notification",
    ):
        return _context(core.news(AGENT, sid, cwd))
    return Answer({})
