"""Cline's hooks (https://docs.cline.bot/features/hooks/hook-reference): one executable
per hook under ``.clinerules/hooks/``, named after it; each runs
``lanes guard --agent cline``. The input carries ``hookName``, ``taskId``,
``workspaceRoots`` and the hook's own object (``preToolUse: {toolName, parameters}``):

- ``TaskStart`` / ``TaskResume``: check in as ``cline-<taskId>``; who else is live goes
  back as ``contextModification``;
- ``PreToolUse`` (``write_to_file``, ``replace_in_file``: ``parameters.path``;
  ``execute_command``: ``parameters.command``): a refusal is
  ``{"cancel": true, "errorMessage"}``; a pass is ``{"cancel": false}`` with any warning
  as ``contextModification``;
- ``PostToolUse`` (``postToolUse: {toolName, parameters, result, success}``): the files a
  write or command changed are noted, their edits sent within a second
  (``agentlanes.hooks.edits``); with ``UserPromptSubmit``, the agent's news as
  ``contextModification``;
- ``TaskComplete`` / ``TaskCancel``: the edits still waiting are sent, then check out."""

from __future__ import annotations

from agentlanes.hooks.adapters import Answer, core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS: dict[str, Any] = {"cancel": False}
AGENT = "cline"
HOOKS = ("TaskStart", "TaskResume", "PreToolUse", "PostToolUse", "UserPromptSubmit",
         "TaskComplete", "TaskCancel")  # fmt: skip
FILE_TOOLS = frozenset({"write_to_file", "replace_in_file", "apply_patch", "new_rule"})
SHELL_TOOLS = frozenset({"execute_command"})


def _go(context: str | None = None) -> dict[str, Any]:
    return {"cancel": False, "contextModification": context} if context else {"cancel": False}


def _call(call: Any) -> tuple[str, dict[str, Any]] | None:
    """A tool call (``{toolName, parameters}``) that changes files, in Claude Code's
    terms; None for the others."""
    call = call if isinstance(call, dict) else {}
    return core.file_call(
        call.get("toolName"),
        call.get("parameters"),
        file_tools=FILE_TOOLS,
        shell_tools=SHELL_TOOLS,
        path_keys=("path", "file_path"),
    )


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    name = event or payload.get("hookName")
    sid, cwd = payload.get("taskId"), core.first_root(payload.get("workspaceRoots"))
    if name in ("TaskStart", "TaskResume"):
        return Answer(_go(core.start(AGENT, sid, cwd)))
    if name in ("TaskComplete", "TaskCancel"):
        core.end(AGENT, sid, cwd)
        return Answer(_go())
    if name == "PreToolUse":
        call = _call(payload.get("preToolUse"))
        if call is None:
            return Answer(_go())  # read_file, search_files, list_files: never refused
        verdict = core.check(AGENT, sid, cwd, *call)
        if verdict.deny:
            return Answer({"cancel": True, "errorMessage": verdict.deny})
        return Answer(_go(verdict.context))
    if name == "PostToolUse" and (call := _call(payload.get("postToolUse"))) is not None:
        core.edited(AGENT, sid, cwd, *call)
    if name in ("PostToolUse", "UserPromptSubmit"):
        return Answer(_go(core.news(AGENT, sid, cwd)))
    return Answer(_go())
