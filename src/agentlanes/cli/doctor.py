"""``lanes doctor``: is this repository's agentlanes set-up working, and if not, what fixes it
(SPEC "Real agent programs").

Checks, each "ok" or a problem with the command that fixes it:

- ``server``: the server URL answers as agentlanes (``GET /server``: its version);
- ``key``: the API key opens a project (``GET /api/v1/project``);
- ``identity``: which agent this shell acts as (as every ``lanes`` command would tell it);
  several agents' sessions and none of them this shell's is a problem;
- ``program``: each ``lanes`` the hook configs name (by absolute path) exists and runs;
- one line per agent configured here (the configs ``lanes init --agent`` writes): its
  program on PATH, and whether it will run these hooks (Codex's hook trust, Copilot CLI's
  trusted folder: ``agentlanes.cli.agent_trust``).

Exit 0 only when every check is ok, else 1; ``--json`` prints every check.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlanes.cli.errors import EXIT_USAGE, CommandError
from agentlanes.cli.init_files import GUARD_SPELLINGS
from agentlanes.cli.output import add_json, emit_json

# agent -> (its program's command, how to install it); editors (Cursor, Windsurf) have none.
PROGRAMS = {
    "claude": ("claude", "npm install -g @anthropic-ai/claude-code"),
    "codex": ("codex", "npm install -g @openai/codex"),
    "gemini": ("gemini", "npm install -g @google/gemini-cli"),
    "copilot": ("copilot", "npm install -g @github/copilot"),
    "opencode": ("opencode", "npm install -g opencode-ai"),
    "cline": ("cline", "npm install -g cline"),
}
# agent -> the file `lanes init --agent` writes, and how its hook commands are kept.
CONFIGS = {
    "claude": (".claude/settings.json", "groups"),
    "codex": (".codex/hooks.json", "groups"),
    "gemini": (".gemini/settings.json", "groups"),
    "cursor": (".cursor/hooks.json", "command"),
    "copilot": (".github/hooks/agentlanes.json", "bash"),
    "windsurf": (".windsurf/hooks.json", "command"),
    "cline": (".clinerules/hooks", "scripts"),
    "opencode": (".opencode/plugins/agentlanes.js", "plugin"),
    "aider": (".aider.conf.yml", "aider"),
}
RUN_TIMEOUT = 15.0


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "doctor",
        help="check this repository's set-up: server, key, identity, the hooks' program, and "
        "whether each configured agent will run its hooks (exit 1 on any problem)",
    )
    add_json(p)
    p.set_defaults(func=doctor)


# -- the configs -----------------------------------------------------------------------------


def _commands_in(root: Path, agent: str) -> list[str] | None:
    """The agentlanes hook commands of ``agent``'s config here; None when it has none."""
    rel, shape = CONFIGS[agent]
    path = root / rel
    if shape == "scripts":
        found = []
        for script in sorted(path.glob("*")) if path.is_dir() else []:
            try:
                text = script.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            found += [line[5:] for line in text.splitlines() if line.startswith("exec ")]
        return [c for c in found if _ours(c)] or None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if shape == "aider":
        verify = re.search(r"^\s*git-commit-verify:\s*true\b", text, re.M)
        return [] if verify else None
    if shape == "plugin":
        program = re.search(r"^const LANES = (\[.*\]);$", text, re.M)
        if program is None:
            return None
        return [shlex.join([*json.loads(program.group(1)), "guard", "--agent", agent])]
    try:
        data = json.loads(text)
    except ValueError:
        return None
    hooks = data.get("hooks") if isinstance(data, dict) else None
    commands: list[Any] = []
    for entries in hooks.values() if isinstance(hooks, dict) else []:
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            if shape == "groups":
                inner = entry.get("hooks")
                commands += [h.get("command") for h in inner or [] if isinstance(h, dict)]
            else:
                commands.append(entry.get(shape))
    ours = [str(c) for c in commands if _ours(c)]
    return list(dict.fromkeys(ours)) or None


def _ours(command: Any) -> bool:
    return isinstance(command, str) and any(s in command for s in GUARD_SPELLINGS)


def configured(root: Path) -> dict[str, list[str]]:
    """agent -> its agentlanes hook commands, for every agent configured here."""
    out = {}
    for agent in CONFIGS:
        commands = _commands_in(root, agent)
        if commands is not None:
            out[agent] = commands
    return out


def _program_of(command: str) -> list[str]:
    """The ``lanes`` argv of a hook command (what comes before ``guard``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return words[: words.index("guard")] if "guard" in words else []


# -- the checks ------------------------------------------------------------------------------


def check_server(cfg: Any) -> tuple[Check, bool]:
    """(the check, whether the server answered)."""
    import httpx

    fix = (
        "start it (agentlanes serve), or point this repository at where it runs: "
        "export AGENTLANES_URL=http://HOST:PORT (or url in .agentlanes.toml)"
    )
    try:
        r = httpx.get(f"{cfg.url}/server", timeout=cfg.timeout)
        info = r.json() if r.status_code == 200 else None
    except (httpx.HTTPError, ValueError) as exc:
        return Check("server", False, f"{cfg.url} unreachable ({type(exc).__name__})", fix), False
    if not isinstance(info, dict) or info.get("service") != "agentlanes":
        detail = f"{cfg.url} answers, but not as agentlanes (GET /server: {r.status_code})"
        return Check("server", False, detail, fix), False
    return Check("server", True, f"{cfg.url} answers: agentlanes {info.get('version')}"), True


def check_key(cfg: Any) -> Check:
    from agentlanes.cli.local import make_client
    from agentlanes.client.errors import ApiError, ClientError

    fix = "export AGENTLANES_API_KEY=alk_... (the project's key: agentlanes project create NAME)"
    if not cfg.api_key:
        return Check("key", False, "no API key (AGENTLANES_API_KEY or api_key)", fix)
    try:
        with make_client(cfg) as client:
            project = client.project()
    except ApiError as exc:
        return Check("key", False, f"the key opens no project ({exc.status} {exc.code})", fix)
    except ClientError as exc:
        return Check("key", False, f"not checked ({exc})", fix)
    return Check(
        "key", True, f"opens project {project.slug} ({project.name}, {project.conflict_mode} mode)"
    )


def check_identity(cfg: Any) -> Check:
    from agentlanes.client.config import list_sessions, read_session
    from agentlanes.client.identity import how_to_name

    env = dict(os.environ)
    if env.get("AGENTLANES_SESSION_TOKEN", "").strip():
        return Check("identity", True, "the session of AGENTLANES_SESSION_TOKEN")
    named = cfg.agent_name if cfg.source.get("agent_name") == "AGENTLANES_AGENT_NAME" else None
    session = read_session(cfg, env)
    if session is not None:
        how = "AGENTLANES_AGENT_NAME" if named else "its session here"
        return Check("identity", True, f"{session.get('agent_name')} ({how})")
    if named:
        return Check("identity", True, f"{named} (AGENTLANES_AGENT_NAME; no session here yet)")
    names = [str(s.get("agent_name")) for s in list_sessions(cfg)]
    if names:
        return Check(
            "identity",
            False,
            how_to_name(names, "lanes doctor"),
            f"export AGENTLANES_AGENT_NAME={names[0]}",
        )
    return Check("identity", True, "nobody: no agent's session here (an agent's hooks check it in)")


def check_programs(configs: dict[str, list[str]]) -> list[Check]:
    """Each ``lanes`` the configs name exists and runs."""
    by_program: dict[tuple[str, ...], list[str]] = {}
    for agent, commands in configs.items():
        for command in commands:
            argv = tuple(_program_of(command))
            if argv and agent not in by_program.setdefault(argv, []):
                by_program[argv].append(agent)
    checks = []
    for argv, agents in by_program.items():
        fix = f"lanes init --agent {' '.join(agents)}  (writes this installation's lanes)"
        shown = shlex.join(argv)
        if not os.path.isabs(argv[0]):
            where = shutil.which(argv[0])
            if where is None:
                checks.append(
                    Check("program", False, f"{shown} ({', '.join(agents)}): not found", fix)
                )
                continue
        try:
            done = subprocess.run(
                [*argv, "--version"], capture_output=True, text=True, timeout=RUN_TIMEOUT
            )
        except (OSError, subprocess.SubprocessError) as exc:
            detail = f"{shown} ({', '.join(agents)}): does not run ({exc})"
            checks.append(Check("program", False, detail, fix))
            continue
        version = done.stdout.strip()
        if done.returncode != 0 or "lanes" not in version:
            said = [line for line in done.stderr.splitlines() if line.strip()][-1:]
            detail = f"{shown} ({', '.join(agents)}): exit {done.returncode} {' '.join(said)}"
            checks.append(Check("program", False, detail.strip()[:300], fix))
            continue
        checks.append(Check("program", True, f"{shown} runs ({version}): {', '.join(agents)}"))
    return checks


def check_agent(root: Path, agent: str) -> Check:
    from agentlanes.cli.agent_trust import CHECKS

    rel = CONFIGS[agent][0]
    if agent == "aider":  # no hooks of its own: the git pre-commit hook checks its commits
        from agentlanes.cli.hook import hooks_dir, is_ours

        if not is_ours(hooks_dir() / "pre-commit"):
            detail = f"{rel} git-commit-verify, but the git pre-commit hook is not agentlanes's"
            return Check(agent, False, detail, "lanes hook install")
        return Check(agent, True, f"{rel} git-commit-verify; the git pre-commit hook checks it")
    notes = [f"hooks in {rel}"]
    program = PROGRAMS.get(agent)
    if program is not None:
        where = shutil.which(program[0])
        if where is None:
            detail = f"{'; '.join(notes)}; {program[0]} is not on PATH (this shell cannot run it)"
            return Check(agent, False, detail, f"{program[1]} (or put {program[0]} on PATH)")
        notes.append(f"{program[0]} on PATH")
    if agent in CHECKS:
        trust = CHECKS[agent](root)
        if not trust.runs:
            return Check(agent, False, f"{'; '.join(notes)}; {trust.problem}", trust.fix)
        notes.append("its hooks will run" if agent != "codex" else "every hook trusted")
    return Check(agent, True, "; ".join(notes))


def run_checks(root: Path, cfg: Any) -> list[Check]:
    server, answered = check_server(cfg)
    checks = [server]
    if answered:
        checks.append(check_key(cfg))
    checks.append(check_identity(cfg))
    configs = configured(root)
    checks += check_programs(configs)
    if not configs:
        checks.append(Check("agents", False, "no agent is set up here", "lanes init --agent NAME"))
    checks += [check_agent(root, agent) for agent in configs]
    return checks


def doctor(args: argparse.Namespace) -> int:
    from agentlanes.cli.local import local_config

    cfg = local_config()
    if cfg.root is None:
        raise CommandError("lanes doctor checks a git repository (run it inside one)", EXIT_USAGE)
    root = Path(cfg.root)
    checks = run_checks(root, cfg)
    problems = [c for c in checks if not c.ok]
    if args.json:
        emit_json({"ok": not problems, "root": str(root), "checks": [c.as_json() for c in checks]})
        return 1 if problems else 0
    width = max(len(c.name) for c in checks)
    for c in checks:
        print(f"{c.name.ljust(width)}  {'ok  ' if c.ok else 'FAIL'}  {c.detail}")
        if c.fix:
            print(f"{' ' * width}        fix: {c.fix}")
    if problems:
        print(f"{len(problems)} problem(s) in {root}")
        return 1
    print(f"all is well in {root}")
    return 0
