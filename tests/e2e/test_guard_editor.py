"""`lanes guard`: Claude Code's PreToolUse contract, against a real server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents import (
    isolated_env,
    lanes,
    lanes_json,
    make_repo,
    new_project,
    no_traceback,
)
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e


def tool_call(repo: Path, file_path: str, tool: str = "Edit") -> str:
    return json.dumps(
        {
            "session_id": "claude-session",
            "hook_event_name": "PreToolUse",
            "cwd": str(repo),
            "tool_name": tool,
            "tool_input": {"file_path": file_path, "old_string": "a", "new_string": "b"},
        }
    )


def guard(repo: Path, env: dict[str, str], stdin: str, *args: str) -> tuple[int, Any]:
    done = lanes(repo, env, "guard", *args, stdin=stdin)
    no_traceback(done)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None


def test_guard_denies_in_block_mode_and_informs_in_warn_mode(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    for mode in ("block", "warn"):
        key = new_project(agent_server.url, conflict_mode=mode)["api_key"]
        env_a = isolated_env(tmp_path / mode / "home-a", agent_server.url, key)
        # An agent started with AGENTLANES_AGENT_NAME acts as that agent in its hooks.
        env_b = isolated_env(
            tmp_path / mode / "home-b", agent_server.url, key, AGENTLANES_AGENT_NAME="bob"
        )
        alice = make_repo(tmp_path / mode / "alice", env_a)
        bob = make_repo(tmp_path / mode / "bob", env_b)
        lanes_json(alice, env_a, "checkin", "--agent", "alice", "--files", "src/api/**")
        lanes_json(bob, env_b, "checkin", "--agent", "bob", "--files", "docs/**")

        code, out = guard(bob, env_b, tool_call(bob, str(bob / "src/api/app.py")))
        assert code == 0
        hook = out["hookSpecificOutput"]
        assert hook["hookEventName"] == "PreToolUse"
        if mode == "block":
            assert hook["permissionDecision"] == "deny"
            reason = hook["permissionDecisionReason"]
            assert (
                "src/api/app.py is claimed by alice for certain (their pattern src/api/**)"
                in reason
            )
        else:
            assert "permissionDecision" not in hook  # the user's own rules still decide
            assert "claimed by alice" in hook["additionalContext"]
            # Claims follow edits: the file joined bob's claims after its check.
            bob_now = lanes_json(bob, env_b, "status")
            assert bob_now["declared_files"] == ["docs/**", "src/api/app.py"]

        # A file nobody else holds, inside bob's scope: nothing to say.
        code, out = guard(bob, env_b, tool_call(bob, "docs/guide.md"))
        assert (code, out) == (0, None)
        # --allow makes the quiet case an explicit allow.
        code, out = guard(bob, env_b, tool_call(bob, "docs/guide.md"), "--allow")
        assert out["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_guard_input_edge_cases(agent_server: ServerProcess, tmp_path: Path) -> None:
    key = new_project(agent_server.url)["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    # A tool without a file (Bash) and a file outside the repository: nothing to say.
    bash = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": str(repo)})
    assert guard(repo, env, bash) == (0, None)
    assert guard(repo, env, tool_call(repo, "/etc/hosts")) == (0, None)
    # No agent identity at all (no session id, no name): told so, not refused.
    anonymous = json.loads(tool_call(repo, "src/x.py"))
    del anonymous["session_id"]
    code, out = guard(repo, env, json.dumps(anonymous))
    assert code == 0 and "not checked in" in out["hookSpecificOutput"]["additionalContext"]
    # Unreadable input never exits 2 (that would block the tool call): one line, exit 0.
    for bad in ("{not json", "[1, 2]", '{"tool_name": "Edit", "tool_input": "x"}', ""):
        done = lanes(repo, env, "guard", stdin=bad)
        assert done.returncode == 0 and done.stdout == "", bad
        assert done.stderr.startswith("agentlanes guard:") and len(done.stderr.splitlines()) == 1
        assert "not checked" in done.stderr
        no_traceback(done)


def test_the_former_module_name_still_guards(agent_server: ServerProcess, tmp_path: Path) -> None:
    """Hooks written by hand as ``python -m agentlanes.guard`` (the module before it moved to
    ``agentlanes.hooks``) keep working through a shim."""
    key = new_project(agent_server.url, conflict_mode="block")["api_key"]
    env_a = isolated_env(tmp_path / "home-a", agent_server.url, key)
    env_b = isolated_env(tmp_path / "home-b", agent_server.url, key, AGENTLANES_AGENT_NAME="bob")
    alice = make_repo(tmp_path / "alice", env_a)
    bob = make_repo(tmp_path / "bob", env_b)
    lanes_json(alice, env_a, "checkin", "--agent", "alice", "--files", "src/api/**")
    lanes_json(bob, env_b, "checkin", "--agent", "bob", "--files", "docs/**")
    done = subprocess.run(
        [sys.executable, "-m", "agentlanes.guard"],
        input=tool_call(bob, str(bob / "src/api/app.py")),
        capture_output=True,
        text=True,
        cwd=bob,
        env=env_b,
        timeout=60,
    )
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    hook = json.loads(done.stdout)["hookSpecificOutput"]
    assert hook["permissionDecision"] == "deny"
    assert "claimed by alice" in hook["permissionDecisionReason"]
