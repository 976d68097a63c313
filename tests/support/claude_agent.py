"""A stand-in for one coding agent's process (Claude Code by default; Codex or Gemini CLI
with a second argument): it stays alive and runs, as its own children, what the agent
would run for its session (https://code.claude.com/docs/en/hooks; Codex and Gemini CLI
run their hooks the same way, from their own config files: ``CONFIGS``):

- the hook commands exactly as ``.claude/settings.json`` names them, through a shell, with
  the event as JSON on stdin, ``CLAUDE_PROJECT_DIR``, and for ``SessionStart`` a
  ``CLAUDE_ENV_FILE`` whose ``export`` lines its later shell commands source;
- its Bash tool's commands (``git commit`` and with it the git hook), through a shell;
- the stdio MCP server that ``.mcp.json`` names, spoken to with newline-delimited JSON-RPC.

Usage: ``python claude_agent.py REPO [claude|codex|gemini]``; then one JSON command per
line on stdin, one JSON answer per line on stdout:

- ``{"hook": EVENT, "payload": {...}}`` → ``{"runs": [{"rc", "stdout", "stderr"}]}``
- ``{"bash": COMMAND, "source_env": true}`` → ``{"rc", "stdout", "stderr"}``
- ``{"mcp_start": true}``; ``{"mcp": TOOL, "arguments": {...}}`` → the ``tools/call`` result
- ``{"pid": true}`` → ``{"pid"}``; ``{"exit": true}``
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(sys.argv[1])
AGENT = sys.argv[2] if len(sys.argv) > 2 else "claude"
ENV_FILE = Path(tempfile.mkstemp(prefix="claude-env-", suffix=".sh")[1])
# Each agent's hook config (as `lanes init --agent` writes it), the unit of its hooks'
# timeouts (seconds to one), and the project directory variable it sets for them.
CONFIGS = {
    "claude": (".claude/settings.json", 1, "CLAUDE_PROJECT_DIR"),
    "codex": (".codex/hooks.json", 1, "CODEX_PROJECT_DIR"),
    "gemini": (".gemini/settings.json", 1000, "GEMINI_PROJECT_DIR"),
}


def hook_env() -> dict[str, str]:
    return {**os.environ, CONFIGS[AGENT][2]: str(REPO)}


def run_hooks(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    config, unit, _ = CONFIGS[AGENT]
    settings = json.loads((REPO / config).read_text())
    runs = []
    for group in settings.get("hooks", {}).get(event, []):
        matcher = group.get("matcher") or ""
        tool = payload.get("tool_name", "")
        if matcher not in ("", "*") and not re.fullmatch(matcher, tool):
            continue
        for hook in group.get("hooks", []):
            env = hook_env()
            if event == "SessionStart" and AGENT == "claude":
                env["CLAUDE_ENV_FILE"] = str(ENV_FILE)
            done = subprocess.run(
                ["/bin/sh", "-c", hook["command"]],
                input=json.dumps(payload),
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=hook.get("timeout", 60 * unit) / unit,
            )
            runs.append({"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr})
    return {"runs": runs}


def run_bash(command: str, source_env: bool) -> dict[str, Any]:
    line = f". {ENV_FILE}; {command}" if source_env else command
    done = subprocess.run(
        ["/bin/sh", "-c", line], cwd=REPO, env=hook_env(), capture_output=True, text=True
    )
    return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


class Mcp:
    def __init__(self) -> None:
        server = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]["agentlanes"]
        self.proc = subprocess.Popen(
            [server["command"], *server.get("args", [])],
            cwd=REPO,
            env={**hook_env(), **server.get("env", {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "claude-agent-stand-in", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the MCP server closed its stdout")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message.get("result", message.get("error"))


def main() -> None:
    mcp: Mcp | None = None
    for line in sys.stdin:
        command = json.loads(line)
        if "hook" in command:
            answer = run_hooks(command["hook"], command["payload"])
        elif "bash" in command:
            answer = run_bash(command["bash"], command.get("source_env", True))
        elif "mcp_start" in command:
            mcp = mcp or Mcp()
            answer = {"pid": mcp.proc.pid}
        elif "mcp" in command:
            mcp = mcp or Mcp()
            answer = mcp.request(
                "tools/call", {"name": command["mcp"], "arguments": command.get("arguments", {})}
            )
        elif "pid" in command:
            answer = {"pid": os.getpid()}
        else:
            break
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    if mcp is not None:
        mcp.proc.terminate()


if __name__ == "__main__":
    main()
