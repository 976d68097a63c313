"""Claude Code (``@anthropic-ai/claude-code``): ``claude -p PROMPT`` against the scripted
model's Anthropic Messages API (``ANTHROPIC_BASE_URL``,
https://code.claude.com/docs/en/settings#environment-variables).

``--permission-mode bypassPermissions``: the run is headless, so no tool call waits for a
person (as root Claude Code takes it only with ``IS_SANDBOX=1``); the project's hooks in
``.claude/settings.json`` still run and still refuse. ``--resume SESSION`` carries a
conversation on (``session_id`` of ``--output-format json``).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.agent_programs.base import AgentProgram, Run, output_field
from tests.support.scripted_model import Step


class ClaudeCode(AgentProgram):
    agent = "claude"
    tool = "claude-code"
    resumes = True
    FLAGS = ("--permission-mode", "bypassPermissions", "--output-format", "json")

    def environment(self, model_url: str) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "ANTHROPIC_BASE_URL": model_url,
            "ANTHROPIC_API_KEY": "dummy",
            "IS_SANDBOX": "1",  # root may bypass permissions only in a sandbox
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }

    def command(self, repo: Path, prompt: str) -> list[str]:
        return [str(self.binary), "-p", prompt, *self.FLAGS]

    def resume_command(self, repo: Path, prompt: str, session: str) -> list[str]:
        return [str(self.binary), "-p", prompt, "--resume", session, *self.FLAGS]

    def session_of(self, run: Run) -> str | None:
        """The conversation's id, from ``--output-format json``'s result."""
        return output_field(run.stdout, "session_id")

    def write(self, path: Path, content: str) -> Step:
        return Step("Write", {"file_path": os.fspath(path), "content": content})

    def edit(self, path: Path, old: str, new: str) -> Step:
        return Step("Edit", {"file_path": os.fspath(path), "old_string": old, "new_string": new})

    def read(self, path: Path) -> Step:
        return Step("Read", {"file_path": os.fspath(path)})

    def shell(self, command: str) -> Step:
        return Step("Bash", {"command": command, "description": "scripted step"})


PROGRAM = ClaudeCode
