"""GitHub Copilot CLI (``@github/copilot``), headless: ``copilot -p``.

Pointed at the scripted model by its BYOK variables (``COPILOT_PROVIDER_BASE_URL``, with
``COPILOT_PROVIDER_WIRE_API=responses``: the OpenAI Responses dialect; no GitHub sign-in
then). Its user's step beyond ``lanes init --agent copilot`` is trusting the folder (it
loads ``.github/hooks/`` only there), which ``lanes init --trust-hooks`` does (adds it to
``trustedFolders``). The single binary unpacks its JavaScript on first start: into the
install's own folder here (``COPILOT_PKG_CACHE_HOME``), once for every test's HOME.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.support.agent_programs.base import AgentProgram, Run, add_file_patch, update_file_patch
from tests.support.agents import lanes
from tests.support.scripted_model import Step


class Copilot(AgentProgram):
    agent = "copilot"
    tool = "copilot"
    resumes = True
    init_says = "Yes, and remember this folder"

    def environment(self, model_url: str) -> dict[str, str]:
        install = self.binary.parent.parent.parent  # <cache>/<package>@<version>/
        return {
            "HOME": str(self.home),
            "COPILOT_HOME": str(self.home / ".copilot"),
            "COPILOT_PKG_CACHE_HOME": str(install / "copilot-cache"),
            "PATH": f"{self.binary.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "COPILOT_PROVIDER_BASE_URL": f"{model_url}/v1",
            "COPILOT_PROVIDER_WIRE_API": "responses",
            "COPILOT_PROVIDER_API_KEY": "scripted",
            "COPILOT_MODEL": "gpt-5.5",
            "COPILOT_AUTO_UPDATE": "false",
            "NO_COLOR": "1",
        }

    def prepare(self, repo: Path, model_url: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLANES_", "GIT_"))}
        env.update(self.environment(model_url))
        done = lanes(repo, env, "init", "--agent", "copilot", "--trust-hooks", timeout=120)
        assert done.returncode == 0, done.stderr + done.stdout
        assert "copilot: its hooks will run here" in done.stdout, done.stdout

    def command(self, repo: Path, prompt: str) -> list[str]:
        return [str(self.binary), "-p", prompt, "--allow-all-tools", "--no-auto-update",
                "--disable-client-telemetry"]  # fmt: skip

    def resume_command(self, repo: Path, prompt: str, session: str) -> list[str] | None:
        return [*self.command(repo, prompt), f"--resume={session}"]

    def session_of(self, run: Run) -> str | None:
        found = re.search(r"--resume=([0-9a-f-]{36})", run.stdout + run.stderr)
        return found.group(1) if found else None

    # Copilot CLI's tools with the Responses API: ``bash``, ``view`` and a freeform
    # ``apply_patch`` (its input is the patch).
    def write(self, path: Path, content: str) -> Step:
        return add_file_patch(path, content)

    def edit(self, path: Path, old: str, new: str) -> Step:
        return update_file_patch(path, old, new)

    def read(self, path: Path) -> Step:
        return Step("view", {"path": str(path)})

    def shell(self, command: str) -> Step:
        return Step("bash", {"command": command, "description": "scripted command"})


PROGRAM = Copilot
