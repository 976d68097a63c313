"""`lanes init` in a real git repository: writes, merges, is idempotent, and dry-runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import agentlanes.hooks
from tests.support.agents import git, isolated_env, lanes, lanes_json, make_repo, no_traceback

pytestmark = pytest.mark.e2e

URL = "http://agentlanes.internal:8787"
# What the hooks run: this installation's `lanes` by absolute path, beside the interpreter
# (Claude Code may start without the venv on its PATH).
LANES = str(Path(sys.executable).parent / "lanes")
FAST = Path(agentlanes.hooks.__file__).resolve().parent / "fast.py"  # the hooks' fast path
GUARD = f"{sys.executable} -S -I {FAST} {LANES} guard"


def snapshot(repo: Path) -> dict[str, str]:
    files = [
        ".agentlanes.toml",
        ".claude/settings.json",
        ".mcp.json",
        ".git/hooks/pre-commit",
        ".git/hooks/pre-push",
        ".git/hooks/post-commit",
    ]
    return {f: (repo / f).read_text() for f in files if (repo / f).exists()}


def test_init_writes_everything_once_and_merges(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", URL, None)
    repo = make_repo(tmp_path / "repo", env)
    # What was there before: other settings, another hook, another MCP server.
    (repo / ".claude").mkdir()
    theirs = {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]
        },
    }
    (repo / ".claude/settings.json").write_text(json.dumps(theirs))
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "db-mcp"}}}))

    dry = lanes(repo, env, "init", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would create .agentlanes.toml" in dry.stdout
    assert "+url = " in dry.stdout and "dry run: nothing written" in dry.stdout
    assert f"run {LANES} by its absolute path" in dry.stdout
    assert not (repo / ".agentlanes.toml").exists()
    assert json.loads((repo / ".claude/settings.json").read_text()) == theirs

    first = lanes_json(repo, env, "init")
    actions = {Path(f["path"]).name: f["action"] for f in first["files"]}
    assert actions == {
        ".agentlanes.toml": "created",
        "settings.json": "updated",
        ".mcp.json": "updated",
        "pre-commit": "created",
        "pre-push": "created",
        "post-commit": "created",
    }
    assert first["program"] == [LANES]
    settings = json.loads((repo / ".claude/settings.json").read_text())
    assert settings["permissions"] == theirs["permissions"]
    pre = settings["hooks"]["PreToolUse"]
    assert pre[0] == theirs["hooks"]["PreToolUse"][0]  # theirs kept, first
    # Every tool, reads included: edits are checked, every call carries the agent's news.
    assert pre[1]["matcher"] == "*"
    assert pre[1]["hooks"] == [{"type": "command", "command": GUARD, "timeout": 10}]
    assert Path(LANES).is_absolute() and Path(LANES).is_file()
    # After the tools that change files (a read's news comes with its PreToolUse).
    post = settings["hooks"]["PostToolUse"][0]["matcher"]
    assert post == "Edit|MultiEdit|Write|NotebookEdit|Bash"
    for name in ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"):
        [group] = settings["hooks"][name]
        assert group["hooks"][0]["command"] == GUARD
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers == {
        "db": {"command": "db-mcp"},
        "agentlanes": {"command": LANES, "args": ["mcp"]},
    }
    assert f'url = "{URL}"' in (repo / ".agentlanes.toml").read_text()
    assert "agentlanes-managed-hook" in (repo / ".git/hooks/pre-commit").read_text()
    push_hook = (repo / ".git/hooks/pre-push").read_text()
    assert "agentlanes-managed-hook" in push_hook and "-m agentlanes.hooks.verify" in push_hook
    post = (repo / ".git/hooks/post-commit").read_text()
    assert "agentlanes-managed-hook" in post and "-m agentlanes.hooks.post_commit" in post

    # Twice: nothing changes, and it says so.
    before = snapshot(repo)
    second = lanes(repo, env, "init")
    assert second.returncode == 0
    assert second.stdout.strip() == (
        "nothing to change: this repository is already set up for agentlanes"
    )
    assert snapshot(repo) == before
    again = lanes_json(repo, env, "init")
    assert again["changed"] is False
    assert {f["action"] for f in again["files"]} == {"unchanged"}
    assert lanes_json(repo, env, "init", "--dry-run")["changed"] is False

    # An older spelling of our hook is updated in place, not added twice.
    settings["hooks"]["PreToolUse"][1]["hooks"][0]["command"] = "agentlanes guard --allow"
    (repo / ".claude/settings.json").write_text(json.dumps(settings))
    lanes_json(repo, env, "init")
    pre = json.loads((repo / ".claude/settings.json").read_text())["hooks"]["PreToolUse"]
    assert len(pre) == 2 and pre[1]["hooks"][0]["command"] == GUARD
    # So is the module's former name, from before the guard moved to agentlanes.hooks.
    pre[1]["hooks"][0]["command"] = "python -m agentlanes.guard"
    (repo / ".claude/settings.json").write_text(
        json.dumps({**settings, "hooks": {**settings["hooks"], "PreToolUse": pre}})
    )
    lanes_json(repo, env, "init")
    pre = json.loads((repo / ".claude/settings.json").read_text())["hooks"]["PreToolUse"]
    assert len(pre) == 2 and pre[1]["hooks"][0]["command"] == GUARD

    # --mcp http points .mcp.json at the server's /mcp with the key from the environment.
    lanes_json(repo, env, "init", "--mcp", "http")
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers["agentlanes"] == {
        "type": "http",
        "url": f"{URL}/mcp",
        "headers": {"X-API-Key": "${AGENTLANES_API_KEY}"},
    }
    # The files it writes are the repository's to commit; the session files never are.
    assert ".agentlanes.toml" in git(repo, env, "status", "--porcelain").stdout


def test_init_refuses_what_it_cannot_merge(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", URL, None)
    repo = make_repo(tmp_path / "repo", env)
    (repo / ".mcp.json").write_text("{broken")
    done = lanes(repo, env, "init")
    assert done.returncode == 2 and ".mcp.json: not valid JSON" in done.stderr
    no_traceback(done)
    assert (repo / ".mcp.json").read_text() == "{broken"
    outside = tmp_path / "plain"
    outside.mkdir()
    done = lanes(outside, env, "init")
    if done.returncode == 2:  # tmp_path is not inside some other repository
        assert "needs a git repository" in done.stderr
