"""Codex's hooks (0.171.0; the contract its package's binary carries, cited in
docs/agents.md): the same wire format as Claude Code's, so ``lanes guard --agent codex``
is the Claude Code guard with the agent named ``codex-<session_id>``.

``.codex/hooks.json`` runs it for ``SessionStart`` (check in; who is live as
``additionalContext``), ``UserPromptSubmit`` (the news), ``PreToolUse`` for ``Bash`` and
``apply_patch`` (the files are read out of the patch text in ``tool_input.command``; a
refusal is ``permissionDecision: "deny"`` with its reason, a pass carries warnings and
news as ``additionalContext``, which Codex hands to the model), ``PostToolUse`` (edits
reported, the news), ``Stop`` (what is still waiting is sent; blocks once for an
undelivered message) and ``SessionEnd`` (check out with the files touched).

Codex runs a project's hooks only once the project is trusted and each hook has been
reviewed and trusted (``hooks.state.<key>.trusted_hash`` in the user's config):
``lanes init --agent codex`` says how, ``lanes doctor`` tells whether they will run
(``agentlanes.cli.agent_trust``)."""

from __future__ import annotations

from agentlanes.hooks.adapters import Answer
from agentlanes.hooks.adapters.core import agent_env

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PASS = None


def answer(payload: dict[str, Any], event: str | None) -> Answer:
    from agentlanes.hooks.guard import handle

    env = agent_env("codex", payload.get("session_id"), cwd=payload.get("cwd"))
    if payload.get("hook_event_name") in ("SessionStart", "SessionEnd"):
        payload = {**payload, "agentlanes_tool": "codex"}  # the session's meta.tool
    out = handle(payload, env)
    return Answer(out or None)
