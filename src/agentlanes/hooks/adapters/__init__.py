"""``lanes guard --agent NAME``: every coding agent's hooks over one guard core.

Each module here reads one agent's event JSON (from its published hook reference, cited
in docs/agents.md and kept in tests/fixtures/agent_hooks/) and answers in that agent's
own format; ``core`` holds the decisions, the same as the Claude Code guard's.
"""

from __future__ import annotations

import json
import sys

from agentlanes.hooks.adapters.core import Answer as Answer  # each adapter's answer

# agent -> module; Claude Code is the plain `lanes guard` (adapters/claude.py).
ADAPTERS = {
    "codex": "codex",
    "cursor": "cursor",
    "gemini": "gemini",
    "copilot": "copilot",
    "cline": "cline",
    "opencode": "opencode",
    "windsurf": "windsurf",
}
NO_HOOKS = {"aider": "Aider has no hooks: `lanes init --agent aider` makes it run the git hook"}
USAGE = (
    "usage: lanes guard --agent NAME [--event EVENT] [--allow]  (NAME: claude, "
    + ", ".join(ADAPTERS)
    + "; reads the agent's hook event as JSON on stdin; --allow: claude only)"
)


def parse(argv: list[str]) -> tuple[str | None, str | None, str | None]:
    """(agent, event, error) from ``--agent NAME [--event EVENT]``."""
    agent = event = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--agent", "--event") and i + 1 < len(argv):
            if arg == "--agent":
                agent = argv[i + 1]
            else:
                event = argv[i + 1]
            i += 2
            continue
        if arg.startswith("--agent="):
            agent = arg.split("=", 1)[1]
        elif arg.startswith("--event="):
            event = arg.split("=", 1)[1]
        elif arg != "--allow":  # Claude Code's hook only (checked by main)
            return None, None, f"unknown option {arg}"
        i += 1
    return agent, event, None


def main(argv: list[str]) -> int:
    """Run one agent's hook: always exit 0 (or the agent's own refusal code), never a
    traceback: a bug of ours or bad input lets the tool call go on (fail open)."""
    if "-h" in argv or "--help" in argv:
        print(USAGE)
        return 0
    agent, event, error = parse(argv)
    if error:
        print(f"agentlanes guard: {error}; {USAGE}", file=sys.stderr)
        return 1
    if agent in (None, "claude", "claude-code"):
        from agentlanes.hooks.adapters.claude import main as claude

        return claude([a for a in argv if a == "--allow"])
    if "--allow" in argv:
        print(f"agentlanes guard: --allow is for Claude Code's hook only; {USAGE}", file=sys.stderr)
        return 1
    if agent in NO_HOOKS:
        print(f"agentlanes guard: {NO_HOOKS[agent]}", file=sys.stderr)
        return 0
    if agent not in ADAPTERS:
        print(f"agentlanes guard: unknown agent {agent!r}; {USAGE}", file=sys.stderr)
        return 1
    import importlib

    module = importlib.import_module(f"agentlanes.hooks.adapters.{ADAPTERS[agent]}")
    try:
        payload = json.loads(sys.stdin.read() or "null")
        if not isinstance(payload, dict):
            raise ValueError("expected a JSON object")
        answer: Answer = module.answer(payload, event)
    except ValueError as exc:
        print(
            f"agentlanes guard: stdin: not a {agent} hook event ({exc}); not checked",
            file=sys.stderr,
        )
        answer = Answer(module.PASS)
    except Exception as exc:  # a bug of ours must not stop the agent's work
        print(
            f"agentlanes guard: internal error ({type(exc).__name__}: {exc}); not checked",
            file=sys.stderr,
        )
        answer = Answer(module.PASS)
    if answer.out is not None:
        sys.stdout.write(json.dumps(answer.out) + "\n")
    if answer.err:
        print(answer.err, file=sys.stderr)
    return answer.code


def guard(argv: list[str]) -> int:
    """``lanes guard ARGS``: every other agent's hook with ``--agent``, else Claude Code's
    (``cli/main.py`` and the keepalive's served hooks, ``hooks/served.py``, both call it)."""
    if any(a == "--agent" or a.startswith("--agent=") for a in argv):
        return main(argv)
    from agentlanes.hooks.adapters.claude import main as claude_guard

    return claude_guard(argv)
