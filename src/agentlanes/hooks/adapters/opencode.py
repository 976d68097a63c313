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
- ``experimental.chat.system.transform``: the agent's news, which the plugin adds to
  the system prompt; answers ``{"context"}``;
- ``session.deleted``: check out. (``session.idle`` only means a turn ended: the
  session stays checked in.)"""

from __future__ import annotations

from agentlanes.hooks.adapters import Answer, core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS: dict[str, Any] = {}
AGENT = "opencode"
FILE_TOOLS = frozenset({"write", "edit", "multiedit"})
PATCH_TOOLS = frozenset({"apply_patch", "patch"})


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
        tool = payload.get("tool")
        args = payload.get("args")
        args = args if isinstance(args, dict) else {}
        if tool == "bash" and isinstance(args.get("command"), str):
            verdict = core.check(AGENT, sid, cwd, "Bash", {"command": args["command"]})
        elif tool in PATCH_TOOLS:
            patch = args.get("patchText") or args.get("patch") or args.get("input")
            verdict = core.check(AGENT, sid, cwd, "apply_patch", {"command": patch})
        elif tool in FILE_TOOLS:
            path = args.get("filePath") or args.get("file_path") or args.get("path")
            if not isinstance(path, str) or not path:
                return Answer({})
            verdict = core.check(AGENT, sid, cwd, "Write", {"file_path": path})
        else:
            return Answer({})  # read, grep, glob, list: never refused
        return Answer({"deny": verdict.deny} if verdict.deny else {})
    if name == "experimental.chat.system.transform":
        text = core.news(AGENT, sid, cwd)
        return Answer({"context": text} if text else {})
    return Answer({})
