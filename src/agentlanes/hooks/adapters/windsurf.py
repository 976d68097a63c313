"""Windsurf's Cascade hooks (https://docs.windsurf.com/windsurf/cascade/hooks).
``.windsurf/hooks.json`` runs ``lanes guard --agent windsurf`` for ``pre_write_code``
(``tool_info.file_path``), ``pre_run_command`` (``tool_info.command_line``,
``tool_info.cwd``) and ``post_write_code`` (``tool_info.file_path``, ``tool_info.edits``:
the file's edits are noted and sent within a second, ``agentlanes.hooks.edits``). The
input names its event in ``agent_action_name`` and the conversation in
``trajectory_id``. With no turn-end or session-end event, the last edits go with the
scheduled send alone.

A refusal is exit code 2 with the reason on stderr (Cascade shows it); anything else
exits 0 with nothing to say. Windsurf has no session-start event and no channel into
the agent's context: the first edit checks in as ``windsurf-<trajectory_id>`` (as the
Claude Code guard does for a session it does not know), and the session ends when its
keepalive sees the agent's process end, or times out."""

from __future__ import annotations

import os

from agentlanes.hooks.adapters import Answer, core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS = None
AGENT = "windsurf"


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    name = event or payload.get("agent_action_name")
    sid = payload.get("trajectory_id") or payload.get("execution_id")
    info = payload.get("tool_info")
    info = info if isinstance(info, dict) else {}
    cwd = info.get("cwd") or payload.get("cwd") or os.getcwd()
    if name == "pre_write_code":
        path = info.get("file_path")
        if not isinstance(path, str) or not path:
            return Answer()
        verdict = core.check(AGENT, sid, cwd, "Write", {"file_path": path})
    elif name == "pre_run_command":
        command = info.get("command_line") or info.get("command")
        if not isinstance(command, str):
            return Answer()
        verdict = core.check(AGENT, sid, cwd, "Bash", {"command": command})
    elif name == "post_write_code":
        path = info.get("file_path")
        if isinstance(path, str) and path:
            core.edited(AGENT, sid, cwd, "Write", {"file_path": path})
        return Answer()
    else:
        return Answer()  # other post hooks, reads, prompts: nothing to refuse
    if verdict.deny:
        return Answer(code=2, err=verdict.deny)
    return Answer()
