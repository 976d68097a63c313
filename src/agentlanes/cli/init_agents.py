"""``lanes init --agent NAME...``: each coding agent's own hook config (SPEC "Every coding
agent"), merged with what is there (other hooks and settings are kept; an older
agentlanes entry is updated in place), so a second run changes nothing.

Every hook runs ``lanes guard --agent NAME`` by this installation's absolute path
(``lanes_program()``); docs/agents.md says what each agent can and cannot do with it.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from agentlanes.cli.errors import EXIT_USAGE, CommandError
from agentlanes.cli.init_files import GUARD_SPELLINGS, Change, _dump, _is_ours, _json_file, _read

AGENTS = ("claude", "codex", "cursor", "gemini", "copilot", "cline", "opencode", "windsurf",
          "aider")  # fmt: skip
# The project config folder (or file) that says an agent is used here.
MARKERS = {
    "codex": ".codex",
    "cursor": ".cursor",
    "gemini": ".gemini",
    "copilot": ".github/hooks",
    "cline": ".clinerules",
    "opencode": ".opencode",
    "windsurf": ".windsurf",
    "aider": ".aider.conf.yml",
}
MARK = "agentlanes"


def detected(root: Path) -> list[str]:
    """``claude`` plus every agent whose project config folder exists."""
    found = ["claude"]
    for agent, marker in MARKERS.items():
        path = root / marker
        if path.is_dir() or (agent == "aider" and path.is_file()):
            found.append(agent)
    return found


def guard_command(program: list[str], agent: str, event: str | None = None) -> str:
    extra = ["--event", event] if event else []
    return shlex.join([*program, "guard", "--agent", agent, *extra])


def _mine(command: Any) -> bool:
    return isinstance(command, str) and any(s in command for s in GUARD_SPELLINGS)


def _keep_bytes(before: str | None, after: str) -> str:
    if before is not None and before.strip():
        try:
            if json.loads(before) == json.loads(after):
                return before
        except ValueError:
            pass
    return after


def _hooks_of(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise CommandError(f'{path}: "hooks" is not an object', EXIT_USAGE)
    return hooks


def _merge_groups(path: Path, hooks: dict[str, Any], wanted: dict[str, Any]) -> None:
    """Claude Code's grouped shape (Codex, Gemini CLI): ``{event: [{matcher, hooks}]}``."""
    for event, group in wanted.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise CommandError(f"{path}: hooks.{event} is not a list", EXIT_USAGE)
        ours = [i for i, g in enumerate(groups) if _is_ours(g)]
        if ours:
            groups[ours[0]] = group
            for i in reversed(ours[1:]):
                del groups[i]
        else:
            groups.append(group)


def _merge_flat(path: Path, hooks: dict[str, Any], wanted: dict[str, Any], key: str) -> None:
    """The flat shape (Cursor, Copilot CLI, Windsurf): ``{event: [{command: ...}]}``."""
    for event, entry in wanted.items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise CommandError(f"{path}: hooks.{event} is not a list", EXIT_USAGE)
        ours = [i for i, e in enumerate(entries) if isinstance(e, dict) and _mine(e.get(key))]
        if ours:
            entries[ours[0]] = entry
            for i in reversed(ours[1:]):
                del entries[i]
        else:
            entries.append(entry)


def plan_codex(root: Path, program: list[str]) -> list[Change]:
    path = root / ".codex" / "hooks.json"
    before, data = _json_file(path)

    def group(timeout: int, matcher: str | None = None) -> dict[str, Any]:
        hook = {"type": "command", "command": guard_command(program, "codex"), "timeout": timeout}
        return {**({"matcher": matcher} if matcher else {}), "hooks": [hook]}

    wanted = {
        "SessionStart": group(15),
        "UserPromptSubmit": group(10),
        "PreToolUse": group(10, "Bash|apply_patch"),
        "PostToolUse": group(10, "Bash|apply_patch"),
        "Stop": group(10),
        # Codex 0.171 clamps a SessionEnd hook's timeout to 3 s (and warns on every start
        # when it is given more): the check-out fits in it.
        "SessionEnd": group(3),
    }
    _merge_groups(path, _hooks_of(path, data), wanted)
    after = _keep_bytes(before, _dump(data))
    return [Change(path, before, after, "Codex hooks: " + ", ".join(wanted))]


def plan_gemini(root: Path, program: list[str]) -> list[Change]:
    path = root / ".gemini" / "settings.json"
    before, data = _json_file(path)
    command = guard_command(program, "gemini")

    def group(timeout_ms: int, matcher: str | None = None) -> dict[str, Any]:
        hook = {"name": MARK, "type": "command", "command": command, "timeout": timeout_ms}
        return {**({"matcher": matcher} if matcher else {}), "hooks": [hook]}

    wanted = {
        "SessionStart": group(15000),
        "BeforeAgent": group(10000),
        # read_file too: the guard notes the read (a whole-file write after it is not stale)
        "BeforeTool": group(10000, "write_file|replace|run_shell_command|read_file"),
        "AfterTool": group(10000),
        "SessionEnd": group(15000),
    }
    _merge_groups(path, _hooks_of(path, data), wanted)
    after = _keep_bytes(before, _dump(data))
    return [Change(path, before, after, "Gemini CLI hooks: " + ", ".join(wanted))]


def plan_cursor(root: Path, program: list[str]) -> list[Change]:
    path = root / ".cursor" / "hooks.json"
    before, data = _json_file(path)
    data.setdefault("version", 1)
    command = guard_command(program, "cursor")
    events = ("sessionStart", "preToolUse", "beforeShellExecution", "postToolUse", "stop",
              "sessionEnd")  # fmt: skip
    wanted = {e: {"command": command} for e in events}
    _merge_flat(path, _hooks_of(path, data), wanted, "command")
    after = _keep_bytes(before, _dump(data))
    return [Change(path, before, after, "Cursor hooks: " + ", ".join(events))]


def plan_copilot(root: Path, program: list[str]) -> list[Change]:
    path = root / ".github" / "hooks" / "agentlanes.json"
    before, data = _json_file(path)
    data.setdefault("version", 1)
    # Each event that can carry context to the model has a hook (docs/agents.md, Copilot).
    timeouts = {"sessionStart": 15, "userPromptSubmitted": 10, "preToolUse": 10,
                "postToolUse": 10, "notification": 10, "sessionEnd": 15}  # fmt: skip
    wanted = {
        e: {"type": "command", "bash": guard_command(program, "copilot", e), "timeoutSec": t}
        for e, t in timeouts.items()
    }
    _merge_flat(path, _hooks_of(path, data), wanted, "bash")
    after = _keep_bytes(before, _dump(data))
    return [Change(path, before, after, "Copilot CLI hooks: " + ", ".join(timeouts))]


def plan_windsurf(root: Path, program: list[str]) -> list[Change]:
    path = root / ".windsurf" / "hooks.json"
    before, data = _json_file(path)
    command = guard_command(program, "windsurf")
    events = ("pre_write_code", "pre_run_command", "post_write_code")
    wanted = {e: {"command": command, "show_output": True} for e in events}
    _merge_flat(path, _hooks_of(path, data), wanted, "command")
    after = _keep_bytes(before, _dump(data))
    return [Change(path, before, after, "Windsurf hooks: " + ", ".join(events))]


def plan_cline(root: Path, program: list[str]) -> list[Change]:
    from agentlanes.hooks.adapters.cline import HOOKS

    folder = root / ".clinerules"
    if folder.exists() and not folder.is_dir():
        raise CommandError(
            f"{folder} is a file (Cline's older single rules file); Cline's hooks live in "
            ".clinerules/hooks/: turn it into a folder first",
            EXIT_USAGE,
        )
    script = (
        "#!/bin/sh\n"
        f"# {MARK}: Cline hook, written by `lanes init --agent cline` (docs/agents.md)\n"
        f"exec {guard_command(program, 'cline')}\n"
    )
    changes = []
    for hook in HOOKS:
        path = folder / "hooks" / hook
        before = _read(path)
        if before is not None and MARK not in before:
            raise CommandError(
                f"{path}: a Cline hook of your own is there (Cline runs one file per hook); "
                f"add `{guard_command(program, 'cline')}` to it by hand",
                EXIT_USAGE,
            )
        change = Change(path, before, script, f"Cline hook {hook}")
        change.mode = 0o755  # type: ignore[attr-defined]
        changes.append(change)
    return changes


OPENCODE_PLUGIN = """\
// agentlanes: OpenCode plugin, written by `lanes init --agent opencode` (docs/agents.md).
// Every hook asks `lanes guard --agent opencode` (one JSON object on stdin, one answer on
// stdout); node:child_process runs under Bun and Node alike. A refusal throws in
// tool.execute.before; the agent's news joins a tool's result in tool.execute.after;
// anything going wrong lets the tool call go on (fail open).
import { spawnSync } from "node:child_process";

const LANES = __PROGRAM__;

function ask(event) {
  try {
    const done = spawnSync(LANES[0], [...LANES.slice(1), "guard", "--agent", "opencode"], {
      input: JSON.stringify(event),
      encoding: "utf8",
      timeout: 15000,
    });
    return done.stdout && done.stdout.trim() ? JSON.parse(done.stdout) : {};
  } catch (err) {
    return {};
  }
}

export const AgentLanes = async ({ directory, worktree }) => {
  const cwd = directory || worktree || process.cwd();
  const argsOf = new Map(); // callID -> the tool call's args, for tool.execute.after
  return {
    event: async ({ event }) => {
      if (event.type === "session.created" || event.type === "session.deleted") {
        const info = (event.properties && event.properties.info) || {};
        ask({ event: event.type, session_id: info.id, cwd });
      } else if (event.type === "session.idle") {
        const props = event.properties || {};
        ask({ event: event.type, session_id: props.sessionID, cwd });
      }
    },
    "tool.execute.before": async (input, output) => {
      const args = (output && output.args) || {};
      if (input.callID) argsOf.set(input.callID, args);
      const answer = ask({
        event: "tool.execute.before",
        session_id: input.sessionID,
        cwd,
        tool: input.tool,
        args,
      });
      if (answer.deny) throw new Error(answer.deny);
    },
    "tool.execute.after": async (input, output) => {
      const args = input.args || argsOf.get(input.callID) || {};
      argsOf.delete(input.callID);
      const answer = ask({
        event: "tool.execute.after",
        session_id: input.sessionID,
        cwd,
        tool: input.tool,
        args,
      });
      // The news joins the tool's result: it stays in the conversation.
      if (answer.context && output && typeof output.output === "string") {
        output.output = `${output.output}\n\n${answer.context}`;
      }
    },
  };
};
"""


def plan_opencode(root: Path, program: list[str]) -> list[Change]:
    path = root / ".opencode" / "plugins" / "agentlanes.js"
    before = _read(path)
    after = OPENCODE_PLUGIN.replace("__PROGRAM__", json.dumps(program))
    return [Change(path, before, after, "OpenCode plugin (tool.execute.before/after)")]


def plan_aider(root: Path, program: list[str]) -> list[Change]:
    """Aider has no hooks and commits with ``--no-verify`` unless told otherwise: the
    git pre-commit hook (which ``lanes init`` installs) then checks its commits."""
    path = root / ".aider.conf.yml"
    before = _read(path)
    line = "git-commit-verify: true"
    lines = (before or "").splitlines()
    found = False
    for i, current in enumerate(lines):
        if current.split("#", 1)[0].strip().startswith("git-commit-verify:"):
            lines[i] = line
            found = True
    if not found:
        lines += [f"# {MARK}: run the git hooks on Aider's commits (docs/agents.md)", line]
    after = "\n".join(lines) + "\n"
    return [Change(path, before, after, "Aider: git-commit-verify (the git hook checks commits)")]


PLANNERS = {
    "codex": plan_codex,
    "cursor": plan_cursor,
    "gemini": plan_gemini,
    "copilot": plan_copilot,
    "cline": plan_cline,
    "opencode": plan_opencode,
    "windsurf": plan_windsurf,
    "aider": plan_aider,
}


def plan_agents(root: Path, agents: list[str], program: list[str]) -> list[Change]:
    """The changes for every agent but ``claude`` (``lanes init`` plans that itself)."""
    changes: list[Change] = []
    for agent in agents:
        if agent in PLANNERS:
            changes.extend(PLANNERS[agent](root, program))
    return changes


def wanted_agents(given: list[str] | None, root: Path) -> list[str]:
    if not given:
        return detected(root)
    out: list[str] = []
    for name in given:
        for agent in name.split(","):
            agent = agent.strip().lower()
            if agent == "claude-code":
                agent = "claude"
            if agent not in AGENTS:
                raise CommandError(
                    f"--agent {agent!r}: not an agent lanes knows (one of {', '.join(AGENTS)})",
                    EXIT_USAGE,
                )
            if agent not in out:
                out.append(agent)
    return out


def hooks_trust(root: Path, agents: list[str], trust: bool) -> list[Any]:
    """For each agent that runs a repository's hooks only once its user allows it (Codex's
    hook trust, Copilot CLI's trusted folder): whether it will (``agent_trust.HooksTrust``),
    after allowing it when ``trust`` (``lanes init --trust-hooks``)."""
    from agentlanes.cli import agent_trust

    table = agent_trust.TRUSTERS if trust else agent_trust.CHECKS
    return [table[agent](root) for agent in agents if agent in table]
