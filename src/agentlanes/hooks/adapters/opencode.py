"""OpenCode's plugin hooks (https://opencode.ai/docs/plugins/). OpenCode loads
``.opencode/plugins/agentlanes.js`` (written by ``lanes init --agent opencode``); the
plugin spawns ``lanes guard --agent opencode`` through ``node:child_process`` (so it runs
under Bun and Node alike) with one JSON object on stdin, of this adapter's own shape:

``{"event": ..., "session_id": ..., "cwd": ..., "tool": ..., "args": {...}}``

- ``session.created``: check in as ``opencode-<session id>``; answers ``{"context"}``;
- ``tool.execute.before`` (``write``, ``edit``: ``args.filePath``; ``bash``:
  ``args.command``; ``apply_patch``/``patch``: ``args.patchText``): answers
  ``{"deny": reason}``, and the plugin throws an ``Error`` with it, which OpenCode
  reports to the model as the tool's failure;
- ``tool.execute.after`` (``input: {tool, sessionID, callID, args}``; the plugin also
  keeps each call's ``args`` from ``tool.execute.before`` by ``callID``, for versions
  whose ``input`` lacks them): the files the tool changed are noted, their edits sent
  within a second (``agentlanes.hooks.edits``); answers ``{}``;
- ``experimental.chat.system.transform``: the agent's news, which the plugin adds to
  the system prompt; answers ``{"context"}``;
- ``session.idle`` (a turn ended; the session stays checked in): the edits still
  waiting are sent;
- ``session.deleted``: the edits still waiting are sent, then check out."""

from __future__ import annotations

from agentlanes.hooks.adapters import Answer, core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS: dict[str, Any] = {}
AGENT = "opencode"
FILE_TOOLS = frozenset({"write", "edit", "multiedit"})
PATCH_TOOLS = frozenset({"apply_patch", "patch"})
SHELL_TOOLS = frozenset({"bash"})


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A tool call that changes files, in Claude Code's terms; None for the others."""
    return core.file_call(
        payload.get("tool"),
        payload.get("args"),
        file_tools=FILE_TOOLS,
        shell_tools=SHELL_TOOLS,
        patch_tools=PATCH_TOOLS,
        path_keys=("filePath", "file_path", "path"),
        patch_keys=("patchText", "patch", "input"),
    )


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    name = event or payload.get("event")
    sid, cwd = payload.get("session_id"), payload.get("cwd")
    if name == "session.created":
        text = core.start(AGENT, sid, cwd)
        return Answer({"context": text} if text else {})
    if name == "session.deleted":
        core.end(AGENT, sid, cwd)
        return Answer({})
    if name == "tool.execute.before":
        call = _call(payload)
        if call is None:
            return Answer({})  # read, grep, glob, list: never refused
        verdict = core.check(AGENT, sid, cwd, *call)
        return Answer({"deny": verdict.deny} if verdict.deny else {})
    if name == "tool.execute.after":
        call = _call(payload)
        if call is not None:
            core.edited(AGENT, sid, cwd, *call)
        return Answer({})
    if name == "session.idle":  # a turn ended: the edits still waiting go now
        core.flush(AGENT, sid, cwd)
        return Answer({})
    if name == "experimental.chat.system.transform":
        text = core.news(AGENT, sid, cwd)
        return Answer({"context": text} if text else {})
    return Answer({})
