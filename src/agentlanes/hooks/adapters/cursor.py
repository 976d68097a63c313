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

Every event carries ``conversation_id`` and ``workspace_roots``."""

from __future__ import annotations

from agentlanes.hooks.adapters import Answer, core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS: dict[str, Any] = {}
AGENT = "cursor"
EDIT_TOOLS = frozenset({"Write", "Edit", "Delete", "StrReplace", "MultiEdit", "EditNotebook"})
SHELL_TOOLS = frozenset({"Shell", "Bash", "run_terminal_cmd"})


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
    name = event or payload.get("hook_event_name")
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
