"""Codex's hooks (https://developers.openai.com/codex/hooks): the same wire format as
Claude Code's. ``.codex/hooks.json`` runs ``lanes guard --agent codex`` for
``SessionStart``, ``PreToolUse`` (``Bash`` and ``apply_patch``: the files are read out of
the patch text in ``tool_input.command``), ``PostToolUse``, ``UserPromptSubmit`` and
``Stop``; the answers are Claude Code's (``hookSpecificOutput`` with
``permissionDecision: "deny"`` and ``permissionDecisionReason``; ``additionalContext``).
Codex has no session-end event (SchemaStore's ``codex-hooks`` lists none): the session
ends with the keepalive, when the Codex process ends. The agent is
``codex-<session_id>``."""

from __future__ import annotations

from agentlanes.hooks.adapters import Answer
from agentlanes.hooks.adapters.core import agent_env

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS = None


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    from agentlanes.hooks.guard import handle

    env = agent_env("codex", payload.get("session_id"))
    if payload.get("hook_event_name") in ("SessionStart", "SessionEnd"):
        payload = {**payload, "agentlanes_tool": "codex"}  # the session's meta.tool
    out = handle(payload, env)
    return Answer(out or None)
