"""What every agent program's driver provides (``programs/<agent>.py`` defines ``PROGRAM``,
a subclass of :class:`AgentProgram`).

A driver knows how to point its program at the scripted model (its own documented
base-URL setting), what a user does beyond ``lanes init`` before the program runs
project hooks (``prepare``: what ``lanes init`` told them to do), how to run it headless
on one prompt, and its own tool names, so a test's script reads the same for all six:
``[p.write(path, text), p.shell("echo x > f"), p.read(path)]``.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.scripted_model import Step


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    pid: int
    ended: float = 0.0  # time.monotonic() when the program had exited


class AgentProgram:
    """One agent program, installed at ``binary``, with ``home`` as its user's home."""

    agent: str = ""  # the name `lanes init --agent` and `lanes guard --agent` take
    tool: str = ""  # meta.tool of its sessions (set by its adapter)
    resumes: bool = False  # resume_command carries a conversation on, headless
    # What `lanes init --agent NAME` must tell the user about ``prepare``'s step (a
    # fragment of its output), when the program needs one before it runs project hooks.
    init_says: str = ""
    # Seconds its start hook may take after the first model request: a program that runs
    # its start hooks detached (Cline 3) checks in while it asks the model.
    start_grace: float = 0.0

    def __init__(self, binary: Path, home: Path) -> None:
        self.binary = binary
        self.home = home

    # -- set-up ------------------------------------------------------------------------------

    def environment(self, model_url: str) -> dict[str, str]:
        """Variables the program needs (its base URL, a dummy key, no telemetry, no update
        checks), over the test's environment; HOME is ``self.home``."""
        raise NotImplementedError

    def prepare(self, repo: Path, model_url: str) -> None:
        """What the user does besides ``lanes init --agent`` (the model provider's config;
        the step ``lanes init`` prints, such as trusting the project's hooks)."""

    def command(self, repo: Path, prompt: str) -> list[str]:
        """The headless run of one prompt."""
        raise NotImplementedError

    def resume_command(self, repo: Path, prompt: str, session: str) -> list[str] | None:
        """The headless run of one more prompt in the conversation ``session`` (what
        ``session_of`` read off the first run), or None when the program cannot resume one
        headless (the suite then skips its between-runs check)."""
        return None

    def session_of(self, run: Run) -> str | None:
        """The conversation's id, from a finished run's output (for ``resume_command``)."""
        return None

    # -- running -----------------------------------------------------------------------------

    def start(
        self, repo: Path, prompt: str, env: dict[str, str], argv: list[str] | None = None
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            argv or self.command(repo, prompt),
            cwd=repo,
            env={**env, "PWD": str(repo)},  # as a shell sets it (OpenCode works in $PWD)
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def run(
        self,
        repo: Path,
        prompt: str,
        env: dict[str, str],
        timeout: float = 180,
        argv: list[str] | None = None,
    ) -> Run:
        """Run it to its end (``argv``: another command line than ``command``'s, such as
        ``resume_command``'s); killed, with its process group, after ``timeout``."""
        started = time.monotonic()
        proc = self.start(repo, prompt, env, argv)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            err += f"\n[killed after {timeout} s]"
        ended = time.monotonic()
        return Run(proc.returncode, out, err, ended - started, proc.pid, ended)

    # -- its own tools, as the scripted model calls them ---------------------------------------

    def write(self, path: Path, content: str) -> Step:
        """Write a whole file."""
        raise NotImplementedError

    def edit(self, path: Path, old: str, new: str) -> Step:
        """Replace ``old`` by ``new`` in a file (an anchored edit)."""
        raise NotImplementedError

    def read(self, path: Path) -> Step:
        raise NotImplementedError

    def shell(self, command: str) -> Step:
        raise NotImplementedError


def add_file_patch(path: Path, content: str) -> Step:
    """An ``apply_patch`` call (the patch grammar of Codex, Copilot CLI and Cline) that
    adds ``path`` with ``content``."""
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    return Step("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {path}\n{lines}"
                                         "*** End Patch\n"})  # fmt: skip


def update_file_patch(path: Path, old: str, new: str) -> Step:
    """An ``apply_patch`` call that replaces the lines ``old`` of ``path`` by ``new``."""
    gone = "".join(f"-{line}\n" for line in old.splitlines())
    lines = "".join(f"+{line}\n" for line in new.splitlines())
    return Step("apply_patch", {"input": f"*** Begin Patch\n*** Update File: {path}\n@@\n"
                                         f"{gone}{lines}*** End Patch\n"})  # fmt: skip


def output_field(stdout: str, key: str) -> str | None:
    """``key`` of a program's JSON output: one JSON document, or the last JSON line that
    has it (``--output-format json`` / ``stream-json``)."""
    try:
        whole = json.loads(stdout)
    except ValueError:
        whole = None
    docs = [whole] if isinstance(whole, dict) else []
    for line in reversed(stdout.strip().splitlines()):
        try:
            docs.append(json.loads(line))
        except ValueError:
            continue
    for doc in docs:
        if isinstance(doc, dict) and doc.get(key):
            return str(doc[key])
    return None


def all_programs() -> dict[str, type[AgentProgram]]:
    """Every driver under ``programs/``, by agent name."""
    from tests.support.agent_programs import programs

    found: dict[str, type[AgentProgram]] = {}
    for info in pkgutil.iter_modules(programs.__path__):
        module = importlib.import_module(f"{programs.__name__}.{info.name}")
        program = getattr(module, "PROGRAM", None)
        if program is not None:
            found[program.agent] = program
    return found
