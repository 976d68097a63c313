"""Gemini CLI's hooks (https://geminicli.com/docs/hooks/reference). ``.gemini/settings.json``
(``hooks``) runs ``lanes guard --agent gemini`` for:

- ``SessionStart``: check in as ``gemini-<session_id>``; who else is live as
  ``hookSpecificOutput.additionalContext``;
- ``BeforeTool`` (``write_file``, ``replace``: ``tool_input.file_path``;
  ``run_shell_command``: ``tool_input.command``; ``read_file``, noted as read): a refusal
  is ``{"decision": "deny", "reason"}``; a pass is ``{}``, its warning (a warn-mode
  overlap) kept for the next ``AfterTool`` / ``BeforeAgent`` context;
- ``AfterTool`` (``tool_name``, ``tool_input``, ``tool_response``): the files a write or
  shell tool changed are noted, their edits sent within a second
  (``agentlanes.hooks.edits``); with ``BeforeAgent``, the agent's news as
  ``additionalContext``;
- ``SessionEnd``: the edits still waiting are sent, then check out.

Every event carries ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and
``timestamp``."""

from __future__ import annotations

from agentlanes.hooks.adapters import Answer, core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS: dict[str, Any] = {}
AGENT = "gemini"
FILE_TOOLS = frozenset({"write_file", "replace", "edit"})
SHELL_TOOLS = frozenset({"run_shell_command"})


def _context(event: str, text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A tool call that changes files, in Claude Code's terms; None for the others."""
    return core.file_call(
        payload.get("tool_name"),
        payload.get("tool_input"),
        file_tools=FILE_TOOLS,
        shell_tools=SHELL_TOOLS,
    )


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    name = str(event or payload.get("hook_event_name") or "")
    sid, cwd = payload.get("session_id"), payload.get("cwd")
    if name == "SessionStart":
        return Answer(_context(name, core.start(AGENT, sid, cwd)))
    if name == "SessionEnd":
        core.end(AGENT, sid, cwd)
        return Answer({})
    if name == "BeforeTool":
        call = _call(payload)
        if call is None:
            return Answer({})  # glob, search: never refused
        verdict = core.check(AGENT, sid, cwd, *call)
        if verdict.deny:
            return Answer({"decision": "deny", "reason": verdict.deny})
        if verdict.context:  # BeforeTool has no context channel: AfterTool carries it
            core.hold(AGENT, sid, cwd, verdict.context)
        return Answer({})
    if name == "AfterTool" and (call := _call(payload)) is not None:
        core.edited(AGENT, sid, cwd, *call)
    if name in ("AfterTool", "BeforeAgent"):
        return Answer(_context(name, core.news(AGENT, sid, cwd)))
    return Answer({})
