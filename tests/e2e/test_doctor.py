"""``lanes doctor`` on a real repository set up by ``lanes init --agent`` for every agent,
against a real server, with the real Codex and Copilot CLI programs on PATH (installed
at their pins): each problem is found and named with the command that fixes it, and the
exit code is 0 only once all is well.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_programs.install import last_error, program_bin
from tests.support.agents import isolated_env, lanes, make_repo, new_project
from tests.support.server import ServerProcess
from tests.support.services import unavailable

pytestmark = pytest.mark.e2e

ALL = ["claude", "codex", "cursor", "gemini", "copilot", "cline", "opencode", "windsurf", "aider"]
PROGRAMS = ["claude", "codex", "gemini", "copilot", "opencode", "cline"]


def doctor(
    repo: Path, env: dict[str, str], text: bool = False
) -> tuple[int, dict[str, dict[str, Any]], str]:
    """(exit code, check name -> its JSON, the text output when ``text``)."""
    done = lanes(repo, env, "doctor", "--json", timeout=180)
    assert "Traceback" not in done.stderr, done.stderr
    checks: dict[str, dict[str, Any]] = {}
    for c in json.loads(done.stdout)["checks"]:
        checks.setdefault(c["name"], c)
        if not c["ok"]:
            checks[c["name"]] = c  # a failing one wins (several `program` lines)
    if not text:
        return done.returncode, checks, ""
    shown = lanes(repo, env, "doctor", timeout=180)
    assert shown.returncode == done.returncode, shown.stdout
    return done.returncode, checks, shown.stdout


@pytest.mark.timeout(400)  # the programs' own answers (Codex's app server) on a busy machine
def test_doctor_names_each_problem_and_its_fix(agent_server: ServerProcess, tmp_path: Path) -> None:
    bins = []
    for agent in PROGRAMS:
        binary = program_bin(agent)
        if binary is None:
            unavailable(f"the {agent} program", last_error.get(agent, "not installed"))
        assert binary is not None
        bins.append(str(binary.parent))
    key = new_project(agent_server.url)["api_key"]
    path = os.pathsep.join([*dict.fromkeys(bins), os.environ.get("PATH", "")])
    env = isolated_env(tmp_path / "home", agent_server.url, key, PATH=path)
    repo = make_repo(tmp_path / "repo", env)
    init = lanes(repo, env, "init", "--agent", *ALL, timeout=180)
    assert init.returncode == 0, init.stderr
    # lanes init says what each program's user must still do, and that nothing is checked
    assert "codex: Codex does not load" in init.stdout, init.stdout
    assert '"Trust all and continue"' in init.stdout
    assert "copilot: " in init.stdout and "Yes, and remember this folder" in init.stdout
    assert '"TRUST_FOLDER" to ~/.gemini/trustedFolders.json' in init.stdout

    code, checks, text = doctor(repo, env, text=True)
    assert code == 1
    assert checks["server"]["ok"] and "agentlanes 0.1.0" in checks["server"]["detail"]
    assert checks["key"]["ok"] and checks["identity"]["ok"] and checks["program"]["ok"]
    assert not checks["codex"]["ok"] and "not trusted" in checks["codex"]["detail"]
    assert "lanes init --agent codex --trust-hooks" in checks["codex"]["fix"]
    assert not checks["copilot"]["ok"] and "trusted folders" in checks["copilot"]["detail"]
    assert (
        not checks["gemini"]["ok"]
        and "not a folder Gemini CLI trusts" in checks["gemini"]["detail"]
    )
    others = ["claude", "cursor", "cline", "opencode", "windsurf", "aider"]
    assert all(checks[a]["ok"] for a in others), {a: checks[a] for a in others}
    assert "3 problem(s)" in text

    trusted = lanes(repo, env, "init", "--agent", "codex", "copilot", "gemini", "--trust-hooks",
                    timeout=180)  # fmt: skip
    for agent in ("codex", "copilot", "gemini"):
        assert f"{agent}: its hooks will run here" in trusted.stdout, trusted.stdout
    code, checks, text = doctor(repo, env, text=True)
    assert code == 0, text
    assert "every hook trusted" in checks["codex"]["detail"]
    assert text.rstrip().endswith(f"all is well in {repo}")

    # A hook Codex trusted, then changed, is "modified": Codex skips it again.
    hooks_file = repo / ".codex/hooks.json"
    hooks = json.loads(hooks_file.read_text())
    hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 11
    hooks_file.write_text(json.dumps(hooks))
    # A config naming a lanes that is gone; a key that opens nothing; two agents' sessions.
    gemini_file = repo / ".gemini/settings.json"
    gemini_file.write_text(gemini_file.read_text().replace(init_program(init), "/gone/lanes"))
    sessions = repo / ".git/agentlanes/sessions"
    sessions.mkdir(parents=True)
    for name in ("alice", "bob"):
        (sessions / f"{name}.json").write_text(
            json.dumps({"agent_name": name, "session_token": "x", "session_id": name})
        )
    code, checks, text = doctor(repo, {**env, "AGENTLANES_API_KEY": "alk_wrong"})
    assert code == 1
    assert "stop (modified)" in checks["codex"]["detail"], checks["codex"]
    assert not checks["key"]["ok"] and "AGENTLANES_API_KEY" in checks["key"]["fix"]
    assert not checks["program"]["ok"] and "/gone/lanes" in checks["program"]["detail"]
    assert checks["program"]["fix"].startswith("lanes init --agent gemini")
    assert (
        not checks["identity"]["ok"] and "AGENTLANES_AGENT_NAME=alice" in checks["identity"]["fix"]
    )

    # No server; and Codex's hooks switched off altogether (not a matter of trust).
    with (tmp_path / "home/.codex/config.toml").open("a") as config:
        config.write("\n[features]\nhooks = false\n")
    code, checks, _ = doctor(repo, {**env, "AGENTLANES_URL": "http://127.0.0.1:9"})
    assert code == 1 and not checks["server"]["ok"] and "key" not in checks
    assert "agentlanes serve" in checks["server"]["fix"]
    assert "switched off" in checks["codex"]["detail"] and "hooks = false" in checks["codex"]["fix"]


def init_program(done: Any) -> str:
    """The lanes path ``lanes init`` wrote (it says so)."""
    line = next(line for line in done.stdout.splitlines() if "by its absolute path" in line)
    return line.split(" run ", 1)[1].split(" by its absolute path", 1)[0]
