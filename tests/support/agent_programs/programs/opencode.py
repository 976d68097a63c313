"""OpenCode (``opencode-ai``), headless: ``opencode run PROMPT --format json --auto``.

Pointed at the scripted model by its own provider options in its user config
(``$XDG_CONFIG_HOME/opencode/opencode.json``: the ``anthropic`` provider with
``options.baseURL``, https://opencode.ai/docs/providers/#base-url), the model list from
its built-in snapshot (``OPENCODE_DISABLE_MODELS_FETCH``). ``--auto`` approves what is
not denied (a headless run has no one to ask); the project's plugin still runs and still
refuses. ``--session ID`` carries a conversation on (``sessionID`` of the JSON events).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.agent_programs.base import AgentProgram, Run, output_field
from tests.support.scripted_model import Step

MODEL = "anthropic/claude-sonnet-4-5"


class OpenCode(AgentProgram):
    agent = "opencode"
    tool = "opencode"
    resumes = True

    def environment(self, model_url: str) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "PATH": f"{self.binary.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "NO_COLOR": "1",
        }

    def prepare(self, repo: Path, model_url: str) -> None:
        config = self.home / ".config" / "opencode" / "opencode.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json",
            "model": MODEL,
            "autoupdate": False,
            "share": "disabled",
            "provider": {"anthropic": {"options": {"baseURL": f"{model_url}/v1",
                                                   "apiKey": "scripted"}}},
        }, indent=2))  # fmt: skip

    def command(self, repo: Path, prompt: str) -> list[str]:
        return [str(self.binary), "run", "--format", "json", "--auto", prompt]

    def resume_command(self, repo: Path, prompt: str, session: str) -> list[str] | None:
        return [str(self.binary), "run", "--format", "json", "--auto", "--session", session,
                prompt]  # fmt: skip

    def session_of(self, run: Run) -> str | None:
        return output_field(run.stdout, "sessionID")

    def write(self, path: Path, content: str) -> Step:
        return Step("write", {"filePath": os.fspath(path), "content": content})

    def edit(self, path: Path, old: str, new: str) -> Step:
        return Step("edit", {"filePath": os.fspath(path), "oldString": old, "newString": new})

    def read(self, path: Path) -> Step:
        return Step("read", {"filePath": os.fspath(path)})

    def shell(self, command: str) -> Step:
        return Step("bash", {"command": command, "description": "scripted step"})


PROGRAM = OpenCode
