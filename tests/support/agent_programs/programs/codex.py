"""Codex (``@openai/codex``), headless: ``codex exec``.

Pointed at the scripted model by a model provider of its own in ``$CODEX_HOME/config.toml``
(``base_url``, ``wire_api = "responses"``: the OpenAI Responses dialect), with a model its
catalog knows (``gpt-5.5``: shell ``exec_command``, freeform ``apply_patch``). Its user's
step beyond ``lanes init --agent codex`` is trusting the project and its hooks, which
``lanes init --trust-hooks`` does through Codex's own app server (what ``lanes init``
tells the user); Codex reads files through its shell, so a read is ``cat``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.support.agent_programs.base import AgentProgram, Run, add_file_patch, update_file_patch
from tests.support.agents import lanes
from tests.support.scripted_model import Step

MODEL = "gpt-5.5"


class Codex(AgentProgram):
    agent = "codex"
    tool = "codex"
    resumes = True
    init_says = "Trust all and continue"

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def environment(self, model_url: str) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "PATH": f"{self.binary.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "SCRIPTED_MODEL_KEY": "scripted",
            "NO_COLOR": "1",
            "RUST_LOG": "error",
        }

    def prepare(self, repo: Path, model_url: str) -> None:
        self.codex_home.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(
            f'model = "{MODEL}"\n'
            'model_provider = "scripted"\n'
            "check_for_update_on_startup = false\n"
            "[model_providers.scripted]\n"
            'name = "scripted"\n'
            f'base_url = "{model_url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "SCRIPTED_MODEL_KEY"\n'
            "[analytics]\n"
            "enabled = false\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLANES_", "GIT_"))}
        env.update(self.environment(model_url))
        done = lanes(repo, env, "init", "--agent", "codex", "--trust-hooks", timeout=120)
        assert done.returncode == 0, done.stderr + done.stdout
        assert "codex: its hooks will run here" in done.stdout, done.stdout

    def command(self, repo: Path, prompt: str) -> list[str]:
        return [str(self.binary), "exec", "--dangerously-bypass-approvals-and-sandbox", prompt]

    def resume_command(self, repo: Path, prompt: str, session: str) -> list[str] | None:
        return [str(self.binary), "exec", "--dangerously-bypass-approvals-and-sandbox",
                "resume", session, prompt]  # fmt: skip

    def session_of(self, run: Run) -> str | None:
        found = re.search(r"session id: ([0-9a-f-]{36})", run.stdout + run.stderr)
        return found.group(1) if found else None

    # Codex's tools: its shell (``exec_command``) and ``apply_patch`` (a freeform tool whose
    # input is the patch; paths as given, here absolute).
    def write(self, path: Path, content: str) -> Step:
        return add_file_patch(path, content)

    def edit(self, path: Path, old: str, new: str) -> Step:
        return update_file_patch(path, old, new)

    def read(self, path: Path) -> Step:
        return self.shell(f"cat {path}")

    def shell(self, command: str) -> Step:
        return Step("exec_command", {"cmd": command})


PROGRAM = Codex
