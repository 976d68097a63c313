"""Line-level claims end to end (SPEC "Line-level claims", issue 27): two Claude Code agents
in two clones of one repository edit one file, through the real hook commands, against a
real server whose project is in block mode with ``block_on = lines``.

- Edits at distant lines are graded ``file`` and admitted: the guard lets the second
  agent's edit through, and the server grades the pair ``file``.
- An edit at nearby lines is graded ``lines`` and refused by the guard, naming who and
  which lines.
- The same edits committed on two branches and merged by git give what was predicted:
  a clean merge for ``file``, a conflict for ``lines``.

Claude Code's hook payloads follow its hooks reference (https://code.claude.com/docs/en/hooks);
the shapes are in tests/fixtures/claude_code_hooks.json.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_claude_hooks import event, hook, presence
from tests.support.agents import ADMIN, git, isolated_env, make_repo, new_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e

LINES = "".join(f"line {n}\n" for n in range(1, 61))


def edit(repo: Path, sid: str, old: str, new: str) -> dict[str, Any]:
    return event(
        repo, sid, "PreToolUse", tool_name="Edit", tool_use_id="toolu_01",
        tool_input={"file_path": str(repo / "app.py"), "old_string": old, "new_string": new},
    )  # fmt: skip


def made(repo: Path, sid: str, old: str, new: str) -> dict[str, Any]:
    """The PostToolUse of an Edit, after making it on disk as Claude Code would."""
    path = repo / "app.py"
    path.write_text(path.read_text().replace(old, new, 1))
    return {
        **edit(repo, sid, old, new),
        "hook_event_name": "PostToolUse",
        "tool_response": {"filePath": str(path), "success": True},
    }


def decision(answer: Any) -> tuple[str | None, str]:
    out = (answer or {}).get("hookSpecificOutput") or {}
    text = out.get("permissionDecisionReason") or out.get("additionalContext") or ""
    return out.get("permissionDecision"), str(text)


def wait_for(probe: Any, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := probe()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def pair_grade(url: str, key: str) -> str | None:
    r = httpx.get(f"{url}/api/v1/conflicts", headers={"X-API-Key": key}, timeout=10)
    pairs = r.json()["pairs"]
    return pairs[0]["grade"] if pairs else None


def merges_cleanly(repo: Path, env: dict[str, str], ours: str, theirs: str) -> bool:
    done = git(repo, env, "merge-tree", "--write-tree", ours, theirs, check=False)
    return done.returncode == 0


def test_two_agents_edit_one_file_graded_by_lines_as_git_merges_it(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    url = agent_server.url
    project = new_project(url, conflict_mode="block", block_on="lines")
    key = project["api_key"]
    assert project["block_on"] == "lines"
    origin_env = isolated_env(tmp_path / "home-origin", url, key)
    origin = make_repo(tmp_path / "origin", origin_env)
    (origin / "app.py").write_text(LINES)
    git(origin, origin_env, "add", "app.py")
    git(origin, origin_env, "commit", "-q", "--no-verify", "-m", "app")

    agents: dict[str, tuple[Path, dict[str, str], str]] = {}
    for name, sid in (
        ("alice", "1a1a1a1a-0000-4000-8000-000000000001"),
        ("bob", "2b2b2b2b-0000-4000-8000-000000000002"),
    ):
        env = isolated_env(
            tmp_path / f"home-{name}", url, key, AGENTLANES_AGENT_PID=agent_process()
        )
        repo = tmp_path / name
        git(tmp_path, env, "clone", "-q", str(origin), str(repo))
        git(repo, env, "config", "user.name", name)
        git(repo, env, "config", "user.email", f"{name}@example.com")
        hook(repo, env, event(repo, sid, "SessionStart", source="startup"))
        agents[name] = (repo, env, sid)
    alice, bob = agents["alice"], agents["bob"]
    alice_name, bob_name = (f"claude-{agents[n][2]}" for n in ("alice", "bob"))

    # Alice changes line 10; her edit reaches the server after PostToolUse.
    repo, env, sid = alice
    assert decision(hook(repo, env, edit(repo, sid, "line 10\n", "ten\n")))[0] != "deny"
    hook(repo, env, made(repo, sid, "line 10\n", "ten\n"))
    assert wait_for(lambda: presence(url, key)[alice_name].get("edits"))
    assert presence(url, key)[alice_name]["edits"][0]["ranges"] == [[10, 10]]

    # Bob, far away (line 40): admitted under block_on = lines, and told it merges.
    repo, env, sid = bob
    allowed, text = decision(hook(repo, env, edit(repo, sid, "line 40\n", "forty\n")))
    assert allowed != "deny", text
    assert "git merges them" in text or "apart" in text or text == "", text
    hook(repo, env, made(repo, sid, "line 40\n", "forty\n"))
    assert wait_for(lambda: presence(url, key)[bob_name].get("edits"))
    assert wait_for(lambda: pair_grade(url, key) == "file")

    # Bob, next to Alice's line (line 11 touches line 10): refused, naming her lines.
    refused, reason = decision(hook(repo, env, edit(repo, sid, "line 11\n", "eleven\n")))
    assert refused == "deny", reason
    assert alice_name in reason and "meet" in reason and "10" in reason, reason

    # What git does with the same edits: commit each side on its own branch and merge.
    arepo, aenv, _ = alice
    git(arepo, aenv, "commit", "-q", "--no-verify", "-am", "alice: line 10")
    git(repo, env, "commit", "-q", "--no-verify", "-am", "bob: line 40")
    git(repo, env, "fetch", "-q", str(arepo), "main:alice")
    assert merges_cleanly(repo, env, "main", "alice")  # graded file: git merges them
    # The refused edit, made anyway on a branch of its own: git conflicts, as predicted.
    git(repo, env, "checkout", "-q", "-b", "near", "main~1")
    (repo / "app.py").write_text(LINES.replace("line 11\n", "eleven\n"))
    git(repo, env, "commit", "-q", "--no-verify", "-am", "bob: line 11")
    assert not merges_cleanly(repo, env, "near", "alice")


def test_block_on_claims_still_refuses_any_certain_overlap(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    """The default (block_on = claims) is today's rule: the far edit is refused too."""
    url = agent_server.url
    key = new_project(url, conflict_mode="block")["api_key"]
    envs = {
        n: isolated_env(tmp_path / f"h-{n}", url, key, AGENTLANES_AGENT_PID=agent_process())
        for n in ("alice", "bob")
    }
    origin = make_repo(tmp_path / "origin", envs["alice"])
    (origin / "app.py").write_text(LINES)
    git(origin, envs["alice"], "add", "app.py")
    git(origin, envs["alice"], "commit", "-q", "--no-verify", "-m", "app")
    repos = {}
    for n, sid in (("alice", "3c3c3c3c-0000-4000-8000-000000000003"),
                   ("bob", "4d4d4d4d-0000-4000-8000-000000000004")):  # fmt: skip
        repos[n] = (tmp_path / n, sid)
        git(tmp_path, envs[n], "clone", "-q", str(origin), str(tmp_path / n))
        hook(tmp_path / n, envs[n], event(tmp_path / n, sid, "SessionStart", source="startup"))
    repo, sid = repos["alice"]
    hook(repo, envs["alice"], edit(repo, sid, "line 10\n", "ten\n"))
    hook(repo, envs["alice"], made(repo, sid, "line 10\n", "ten\n"))
    repo, sid = repos["bob"]
    refused, reason = decision(hook(repo, envs["bob"], edit(repo, sid, "line 40\n", "x\n")))
    assert refused == "deny", reason
    r = httpx.get(f"{url}/api/v1/project", headers={"X-API-Key": key}, timeout=10)
    assert r.json()["block_on"] == "claims"
    assert ADMIN  # the admin API set the project up (new_project)
