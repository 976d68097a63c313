"""The hooks' fast path (issue 41, "Hook time"): ``lanes init`` writes each hook as
``python -S -I .../agentlanes/hooks/fast.py LANES guard ...``; a tool event is answered by
the agent's keepalive (``agentlanes.hooks.served``), anything else by ``LANES`` itself.

To tell who answered, a test replaces ``LANES`` in the hook's command by a path that does
not exist: only the keepalive can then answer.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentlanes.hooks.fastpath.client import socket_path, state_dir
from tests.support.agents import git, isolated_env, lanes, lanes_json, make_repo, new_project
from tests.support.server import ServerProcess
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

SID = "fast-7c1e"
MISSING = "/nonexistent/agentlanes/bin/lanes"


def claude_repo(
    url: str, tmp_path: Path, env: dict[str, str], name: str = "repo"
) -> tuple[Path, str]:
    """A repository set up for Claude Code, and its hook command."""
    repo = make_repo(tmp_path / name, env)
    (repo / "src").mkdir()
    (repo / "src/app.py").write_text("x = 1\n")
    git(repo, env, "add", ".")
    git(repo, env, "commit", "-q", "--no-verify", "-m", "app")
    done = lanes(repo, env, "init", "--agent", "claude")
    assert done.returncode == 0, done.stderr
    hooks = json.loads((repo / ".claude/settings.json").read_text())["hooks"]
    command = hooks["PreToolUse"][-1]["hooks"][0]["command"]
    assert " -S -I " in command and "/agentlanes/hooks/fast.py " in command, command
    return repo, command


def hook(repo: Path, env: dict[str, str], command: str, event: str, **fields: Any) -> Any:
    payload = {"session_id": SID, "cwd": str(repo), "hook_event_name": event, **fields}
    done = subprocess.run(
        ["sh", "-c", command], input=json.dumps(payload), cwd=repo, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done


def decision(done: subprocess.CompletedProcess[str]) -> str | None:
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    return (out.get("hookSpecificOutput") or {}).get("permissionDecision")


def broken(command: str) -> str:
    lanes_path = command.split(" ")[4]  # python -S -I fast.py LANES guard
    assert lanes_path.endswith("/lanes"), command
    return command.replace(lanes_path, MISSING)


@pytest.fixture
def stage(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> tuple[Path, dict[str, str], str]:
    """A block-mode project where alice holds ``src/**``, and Claude Code's repository
    with its session started (its keepalive serving the hooks)."""
    project = new_project(agent_server.url, conflict_mode="block")
    env = isolated_env(tmp_path / "home", agent_server.url, project["api_key"],
                       AGENTLANES_AGENT_PID=agent_process())  # fmt: skip
    lanes_json(make_repo(tmp_path / "alice", env), env, "checkin", "--agent", "alice",
               "--files", "src/**")  # fmt: skip
    repo, command = claude_repo(agent_server.url, tmp_path, env)
    assert "checked in" in hook(repo, env, command, "SessionStart", source="startup").stdout
    state = state_dir(str(repo))
    assert state is not None
    served = Path(socket_path(state, f"claude-{SID}"))
    assert wait_for(served.exists, timeout=20), f"no hook socket at {served}"
    return repo, env, command


def test_a_tool_event_is_answered_by_the_keepalive(
    stage: tuple[Path, dict[str, str], str],
) -> None:
    repo, env, command = stage
    write = {"tool_name": "Write", "tool_input": {"file_path": str(repo / "src/app.py"),
                                                 "content": "x = 2\n"}}  # fmt: skip
    read = {"tool_name": "Read", "tool_input": {"file_path": str(repo / "src/app.py")}}
    # The keepalive answers: the guard's refusal, with no `lanes` to run here.
    refused = hook(repo, env, broken(command), "PreToolUse", **write)
    assert decision(refused) == "deny", refused.stdout + refused.stderr
    assert "claimed by alice" in refused.stdout
    assert decision(hook(repo, env, broken(command), "PreToolUse", **read)) is None
    # The same answer as the guard gives when it runs itself.
    itself = hook(repo, env | {"AGENTLANES_FAST_HOOKS": "0"}, command, "PreToolUse", **write)
    assert decision(itself) == "deny" and "claimed by alice" in itself.stdout
    # AGENTLANES_FAST_HOOKS=0 runs `lanes` itself: with none there, nothing answers.
    off = hook(repo, env | {"AGENTLANES_FAST_HOOKS": "0"}, broken(command), "PreToolUse", **read)
    assert off.returncode != 0
    # An edit's lines reach the server from the keepalive (its send on a thread there).
    (repo / "notes.md").write_text("one\ntwo\n")
    post = {"tool_name": "Write", "tool_input": {"file_path": str(repo / "notes.md"),
                                                "content": "one\ntwo\n"}}  # fmt: skip
    assert hook(repo, env, broken(command), "PostToolUse", **post).returncode == 0
    url, key = env["AGENTLANES_URL"], env["AGENTLANES_API_KEY"]

    def edits() -> Any:
        r = httpx.get(f"{url}/api/v1/presence", headers={"X-API-Key": key}, timeout=10)
        mine = [s for s in r.json()["sessions"] if s["agent_name"] == f"claude-{SID}"]
        return mine[0].get("edits") if mine else None

    sent = wait_for(edits, timeout=15)
    assert [e["path"] for e in sent or []] == ["notes.md"], sent
    # A session's end is not a tool event: never served.
    end = hook(repo, env, broken(command), "SessionEnd", reason="exit")
    assert end.returncode != 0


def test_without_its_keepalive_the_hook_runs_the_guard(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    project = new_project(agent_server.url, conflict_mode="block")
    env = isolated_env(tmp_path / "home", agent_server.url, project["api_key"])
    lanes_json(make_repo(tmp_path / "alice", env), env, "checkin", "--agent", "alice",
               "--files", "src/**")  # fmt: skip
    repo, command = claude_repo(agent_server.url, tmp_path, env)
    edit = {"file_path": str(repo / "src/app.py"), "old_string": "x = 1", "new_string": "x = 3"}
    write = {"tool_name": "Edit", "tool_input": edit}
    assert hook(repo, env, broken(command), "PreToolUse", **write).returncode != 0
    done = hook(repo, env, command, "PreToolUse", **write)
    assert decision(done) == "deny" and "claimed by alice" in done.stdout
    garbled = subprocess.run(["sh", "-c", command], input="{not json", cwd=repo, env=env,
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert garbled.returncode == 0 and "Traceback" not in garbled.stderr


def test_a_keepalive_answers_only_for_its_own_repository(
    stage: tuple[Path, dict[str, str], str], agent_server: ServerProcess, tmp_path: Path
) -> None:
    """Socket names are a checksum of the repository's path and the agent's name: one
    that leads to another repository's keepalive is refused there, and the hook runs the
    guard itself."""
    repo, env, _ = stage
    other, command = claude_repo(agent_server.url, tmp_path, env, name="other")
    state, mine = state_dir(str(other)), state_dir(str(repo))
    assert state is not None and mine is not None
    theirs = Path(socket_path(state, f"claude-{SID}"))
    theirs.symlink_to(socket_path(mine, f"claude-{SID}"))
    try:
        read = {"tool_name": "Read", "tool_input": {"file_path": str(other / "src/app.py")}}
        assert hook(other, env, broken(command), "PreToolUse", **read).returncode != 0
        assert decision(hook(other, env, command, "PreToolUse", **read)) is None
    finally:
        theirs.unlink()
