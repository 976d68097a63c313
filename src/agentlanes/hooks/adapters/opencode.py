"""OpenCode's plugin hooks (https://opencode.ai/docs/plugins/; the hook types in
``@opencode-ai/plugin``'s ``dist/index.d.ts``). OpenCode loads
``.opencode/plugins/agentlanes.js`` (written by ``lanes init --agent opencode``); the
plugin spawns ``lanes guard --agent opencode`` through ``node:child_process`` (so it runs
under Bun and Node alike) with one JSON object on stdin, of this adapter's own shape:

``{"event": ..., "session_id": ..., "cwd": ..., "tool": ..., "args": {...}}``

- ``session.created`` (an event: its answer reaches no model): check in as
  ``opencode-<session id>``, who is live kept for the first tool result;
- ``tool.execute.before`` (``write``, ``edit``: ``args.filePath``; ``bash``:
  ``args.command``; ``apply_patch``/``patch``: ``args.patchText``): answers
  ``{"deny": reason}``, and the plugin throws an ``Error`` with it, which OpenCode
  reports to the model as the tool's failure; a session resumed with ``opencode run
  --session`` (no ``session.created``) checks in here;
- ``tool.execute.after`` (``input: {tool, sessionID, callID, args}``; the plugin also
  keeps each call's ``args`` from ``tool.execute.before`` by ``callID``, for versions
  whose ``input`` lacks them): the files the tool changed are noted, their edits sent
  within a second (``agentlanes.hooks.edits``); answers ``{"context"}``: the agent's news
  (and any warning the call had), which the plugin appends to the tool's result
  (``output.output``), so it stays in the conversation (a system-prompt addition lasts
  one model call);
- ``session.idle`` (a turn ended; the session stays checked in): the edits still
  waiting are sent;
- ``session.deleted`` (``opencode run`` never sends it): the edits still waiting are
  sent, then check out; otherwise the keepalive checks out when OpenCode exits."""

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
    if name == "session.created":  # an event: nothing it answers reaches the model
        core.start_marked(AGENT, sid, cwd)
        return Answer({})
    if name == "session.deleted":
        core.end(AGENT, sid, cwd)
        return Answer({})
    if name == "tool.execute.before":
        joined = core.ensure_started(AGENT, sid, cwd)
        if joined:
            core.hold(AGENT, sid, cwd, joined)
        call = _call(payload)
        if call is None:
            return Answer({})  # read, grep, glob, list: never refused
        verdict = core.check(AGENT, sid, cwd, *call)
        if verdict.deny:
            return Answer({"deny": verdict.deny})
        if verdict.context:  # a warning: with the call's result (tool.execute.after)
            core.hold(AGENT, sid, cwd, verdict.context)
        return Answer({})
    if name == "tool.execute.after":
        joined = core.ensure_started(AGENT, sid, cwd)
        call = _call(payload)
        if call is not None:
            core.edited(AGENT, sid, cwd, *call)
        text = "\n".join(t for t in [joined, core.news(AGENT, sid, cwd)] if t)
        return Answer({"context": text} if text else {})
    if name == "session.idle":  # a turn ended: the edits still waiting go now
        core.flush(AGENT, sid, cwd)
        return Answer({})
    return Answer({})  # experimental.chat.system.transform of an older plugin: nothing
