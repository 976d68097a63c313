"""Gemini CLI (``@google/gemini-cli``): ``gemini -p PROMPT`` against the scripted model's
Gemini API.

How 0.61.0 reads its model's address (``bundle/chunk-JDPZ4CE3.js``, the chunk
``bundle/gemini.js`` loads): ``getAuthTypeFromEnv`` takes ``GOOGLE_GEMINI_BASE_URL`` as
the ``gateway`` auth type, and the content generator sends every request to
``process.env["GOOGLE_GEMINI_BASE_URL"]`` (``validateBaseUrl``: any URL) for every auth
type but Vertex AI. A headless run refuses the ``gateway`` type (``validateAuthMethod``),
so the user's settings select ``gemini-api-key`` (``GEMINI_API_KEY``). Its home is
``GEMINI_CLI_HOME`` (else the user's).

Project hooks run only in a trusted folder (``HookRunner.executeHook``: "Blocked
execution of project hook in untrusted folder"; folder trust is on by default), and
``--approval-mode yolo`` is refused in one: ``prepare`` trusts the repository as the
user does when Gemini CLI asks, which writes ``~/.gemini/trustedFolders.json``
(``{"<path>": "TRUST_FOLDER"}``), the step ``lanes init --agent gemini`` prints.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.agent_programs.base import AgentProgram, Run, output_field
from tests.support.scripted_model import Step


class GeminiCli(AgentProgram):
    agent = "gemini"
    tool = "gemini"
    resumes = True
    init_says = "TRUST_FOLDER"

    def environment(self, model_url: str) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "GEMINI_CLI_HOME": str(self.home),
            "GOOGLE_GEMINI_BASE_URL": model_url,
            "GEMINI_API_KEY": "dummy",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "NO_BROWSER": "true",
        }

    def prepare(self, repo: Path, model_url: str) -> None:
        folder = self.home / ".gemini"
        folder.mkdir(parents=True, exist_ok=True)
        trusted = folder / "trustedFolders.json"
        known = json.loads(trusted.read_text()) if trusted.exists() else {}
        known[os.fspath(repo)] = "TRUST_FOLDER"
        trusted.write_text(json.dumps(known, indent=2))
        # The Gemini API with a key (GOOGLE_GEMINI_BASE_URL alone selects the "gateway"
        # auth type, which a headless run refuses: validateAuthMethod, "Invalid auth
        # method selected."); no telemetry, no update check, no usage statistics.
        settings = folder / "settings.json"
        settings.write_text(
            json.dumps(
                {
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                    "privacy": {"usageStatisticsEnabled": False},
                    "telemetry": {"enabled": False},
                }
            )
        )

    def command(self, repo: Path, prompt: str) -> list[str]:
        return [str(self.binary), "-p", prompt, "--approval-mode", "yolo",
                "--output-format", "json"]  # fmt: skip

    def resume_command(self, repo: Path, prompt: str, session: str) -> list[str]:
        return [*self.command(repo, prompt), "--resume", session]

    def session_of(self, run: Run) -> str | None:
        """The session's id, from ``--output-format json``'s answer."""
        return output_field(run.stdout, "session_id")

    def write(self, path: Path, content: str) -> Step:
        return Step("write_file", {"file_path": os.fspath(path), "content": content})

    def edit(self, path: Path, old: str, new: str) -> Step:
        return Step(
            "replace",
            {"file_path": os.fspath(path), "old_string": old, "new_string": new,
             "instruction": "scripted step"},
        )  # fmt: skip

    def read(self, path: Path) -> Step:
        return Step("read_file", {"file_path": os.fspath(path)})

    def shell(self, command: str) -> Step:
        return Step("run_shell_command", {"command": command, "description": "scripted step"})


PROGRAM = GeminiCli
