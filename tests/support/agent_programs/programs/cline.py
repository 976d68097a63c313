"""Cline 3 (``cline``, the CLI of ``@cline/core``), headless: ``cline --json PROMPT`` (act
mode, tools approved: its default).

Pointed at the scripted model by its own provider settings: ``cline auth -p openai -b
URL`` (it lets a user set the base URL only for the OpenAI-compatible providers, so the
scripted model speaks Chat Completions). With a GPT model Cline offers ``apply_patch``
(the patch grammar Codex uses) for edits, ``run_commands`` for the shell and
``read_files`` for reads. Its hooks are the files ``lanes init --agent cline`` writes
under ``.clinerules/hooks/``; nothing else needs doing (``init_says`` is empty).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from tests.support.agent_programs.base import AgentProgram, Run, add_file_patch, update_file_patch
from tests.support.scripted_model import Step


class Cline(AgentProgram):
    agent = "cline"
    tool = "cline"
    # agent_start runs detached (its check-in races the first model request): the test
    # gives it this long to be done by the first request.
    start_grace = 5.0

    def environment(self, model_url: str) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": f"{self.binary.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "NO_COLOR": "1",
            "CLINE_TELEMETRY_DISABLED": "1",
        }

    def prepare(self, repo: Path, model_url: str) -> None:
        import subprocess

        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLANES_", "GIT_"))}
        env.update(self.environment(model_url))
        argv = [str(self.binary), "auth", "-p", "openai", "-k", "scripted", "-m",
                "gpt-scripted", "-b", f"{model_url}/v1"]  # fmt: skip
        done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
        assert done.returncode == 0, done.stderr + done.stdout

    def command(self, repo: Path, prompt: str) -> list[str]:
        return [str(self.binary), "--json", prompt]

    def run(
        self,
        repo: Path,
        prompt: str,
        env: dict[str, str],
        timeout: float = 180,
        argv: list[str] | None = None,
    ) -> Run:
        """As any program; then the ``cline --cline-hub-daemon`` a run may leave behind for
        this repository (it outlives the CLI, seen with 3.0.65) is stopped."""
        done = super().run(repo, prompt, env, timeout, argv)
        for pid in hub_daemons(repo):
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        return done

    def write(self, path: Path, content: str) -> Step:
        """A new file is added; an existing one has all its lines replaced (an ``Add
        File`` of an existing file is refused by Cline itself)."""
        if path.exists():
            return update_file_patch(path, path.read_text(), content)
        return add_file_patch(path, content)

    def edit(self, path: Path, old: str, new: str) -> Step:
        return update_file_patch(path, old, new)

    def read(self, path: Path) -> Step:
        return Step("read_files", {"files": [{"path": os.fspath(path)}]})

    def shell(self, command: str) -> Step:
        return Step("run_commands", {"commands": [command]})


def hub_daemons(repo: Path) -> list[int]:
    """The ``cline --cline-hub-daemon`` processes working in ``repo``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "--cline-hub-daemon" in args and "--cwd" in args:
            where = args[args.index("--cwd") + 1] if args.index("--cwd") + 1 < len(args) else ""
            if where == str(repo) or where.startswith(f"{repo}/"):
                found.append(int(entry.name))
    return found


PROGRAM = Cline
