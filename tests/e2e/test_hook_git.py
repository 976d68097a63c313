"""The git pre-commit hook for real: `lanes hook install`, real `git commit`, a real server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.agents import (
    git,
    isolated_env,
    lanes,
    lanes_json,
    make_repo,
    new_project,
    no_traceback,
    write_files,
)
from tests.support.server import ServerProcess, free_port

pytestmark = pytest.mark.e2e


def head(repo: Path, env: dict[str, str]) -> str:
    return git(repo, env, "rev-parse", "HEAD").stdout.strip()


def setup_project(
    server: ServerProcess, tmp_path: Path, mode: str
) -> tuple[Path, dict, Path, dict]:
    """Alice claims src/api/** from her clone; bob commits from his, hook installed."""
    key = new_project(server.url, conflict_mode=mode)["api_key"]
    env_a = isolated_env(tmp_path / "home-a", server.url, key)
    env_b = isolated_env(tmp_path / "home-b", server.url, key)
    alice = make_repo(tmp_path / "alice", env_a)
    bob = make_repo(tmp_path / "bob", env_b)
    write_files(bob, "src/api/old.py", "src/api/gone.py", "docs/a.md")
    git(bob, env_b, "add", ".")
    git(bob, env_b, "commit", "-q", "--no-verify", "-m", "files")
    lanes_json(alice, env_a, "checkin", "--agent", "alice", "--files", "src/api/**")
    assert lanes(bob, env_b, "hook", "install").returncode == 0
    return alice, env_a, bob, env_b


def test_install_honours_hooks_path_chains_and_is_idempotent(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", "http://127.0.0.1:1", None)
    repo = make_repo(tmp_path / "repo", env)
    git(repo, env, "config", "core.hooksPath", ".githooks")
    hooks = repo / ".githooks"
    hooks.mkdir()
    mine = hooks / "pre-commit"
    mine.write_text('#!/bin/sh\necho ran >> "$(git rev-parse --show-toplevel)/chained.log"\n')
    mine.chmod(0o755)

    first = lanes_json(repo, env, "hook", "install")
    assert first["hook"] == str(hooks / "pre-commit") and first["changed"] is True
    assert first["chained"] == str(hooks / "pre-commit.agentlanes-chained")
    # The pre-push hook (lanes verify) beside it, in the same directory.
    assert first["hooks"][1] == {
        "name": "pre-push",
        "hook": str(hooks / "pre-push"),
        "changed": True,
        "chained": None,
    }
    installed = mine.read_text()
    second = lanes_json(repo, env, "hook", "install")
    assert second["changed"] is False and mine.read_text() == installed
    assert [h["changed"] for h in second["hooks"]] == [False, False, False]
    assert [h["name"] for h in second["hooks"]] == ["pre-commit", "pre-push", "post-commit"]
    assert (hooks / "pre-commit.agentlanes-chained").read_text().startswith("#!/bin/sh\necho ran")
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()

    write_files(repo, "x.txt")
    git(repo, env, "add", "x.txt")
    done = git(repo, env, "commit", "-q", "-m", "x")
    assert done.returncode == 0
    assert (repo / "chained.log").read_text() == "ran\n"  # the old hook still runs

    # A chained hook that fails stops the commit, as it would have without us.
    (hooks / "pre-commit.agentlanes-chained").write_text("#!/bin/sh\nexit 7\n")
    write_files(repo, "y.txt")
    git(repo, env, "add", "y.txt")
    assert git(repo, env, "commit", "-q", "-m", "y", check=False).returncode != 0

    out = lanes_json(repo, env, "hook", "uninstall")
    push_hook = str(hooks / "pre-push")
    assert out == {
        "hook": str(mine),
        "removed": True,
        "restored_chained": True,
        "hooks": [
            {"name": "pre-commit", "hook": str(mine), "removed": True, "restored_chained": True},
            {"name": "pre-push", "hook": push_hook, "removed": True, "restored_chained": False},
            {
                "name": "post-commit",
                "hook": str(hooks / "post-commit"),
                "removed": True,
                "restored_chained": False,
            },
        ],
    }
    assert mine.read_text() == "#!/bin/sh\nexit 7\n"
    assert not (hooks / "pre-push").exists()
    assert lanes_json(repo, env, "hook", "uninstall")["removed"] is False


def test_warn_mode_reports_each_conflict_and_lets_the_commit_through(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    _, _, bob, env_b = setup_project(agent_server, tmp_path, "warn")
    lanes_json(bob, env_b, "checkin", "--agent", "bob", "--files", "src/**")
    (bob / "lib").mkdir()
    git(bob, env_b, "mv", "src/api/old.py", "lib/new.py")
    git(bob, env_b, "rm", "-q", "src/api/gone.py")
    write_files(bob, "docs/b.md")
    git(bob, env_b, "add", ".")
    before = head(bob, env_b)
    done = git(bob, env_b, "commit", "-m", "move things")
    assert done.returncode == 0, done.stderr
    assert head(bob, env_b) != before
    lines = [line for line in done.stderr.splitlines() if line.startswith("agentlanes:")]
    # Both sides of the rename and the deletion are checked; bob's own claim is left out.
    assert (
        "agentlanes: src/api/old.py is claimed by alice for certain (their pattern src/api/**)"
        in lines
    )
    assert (
        "agentlanes: src/api/gone.py is claimed by alice for certain (their pattern src/api/**)"
        in lines
    )
    assert not any("lib/new.py" in line or "docs/b.md" in line for line in lines)
    assert any("commit allowed (warn mode)" in line for line in lines)
    assert not any("no active session" in line for line in lines)


def test_quiet_when_nothing_collides(agent_server: ServerProcess, tmp_path: Path) -> None:
    _, _, bob, env_b = setup_project(agent_server, tmp_path, "block")
    lanes_json(bob, env_b, "checkin", "--agent", "bob", "--files", "docs/**")
    write_files(bob, "docs/c.md")
    git(bob, env_b, "add", ".")
    done = git(bob, env_b, "commit", "-q", "-m", "docs")
    assert done.returncode == 0 and done.stderr == ""


def test_block_mode_refuses_and_says_how_past(agent_server: ServerProcess, tmp_path: Path) -> None:
    _, _, bob, env_b = setup_project(agent_server, tmp_path, "block")
    write_files(bob, "src/api/new.py")
    git(bob, env_b, "add", ".")
    before = head(bob, env_b)
    refused = git(bob, env_b, "commit", "-q", "-m", "blocked", check=False)
    assert refused.returncode != 0 and head(bob, env_b) == before
    assert (
        "agentlanes: src/api/new.py is claimed by alice for certain (their pattern src/api/**)"
        in refused.stderr
    )
    assert "no active session" in refused.stderr  # bob never checked in
    assert "AGENTLANES_SKIP=1" in refused.stderr and "--no-verify" in refused.stderr
    no_traceback(refused)
    skipped = git(bob, {**env_b, "AGENTLANES_SKIP": "1"}, "commit", "-q", "-m", "skip")
    assert skipped.returncode == 0 and head(bob, env_b) != before


def test_a_hook_written_by_an_earlier_version_still_runs(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    """Hooks installed before the agent-side programs moved to ``agentlanes.hooks`` run
    ``python -S -m agentlanes.githook``; that module is kept as a shim and still refuses."""
    _, _, bob, env_b = setup_project(agent_server, tmp_path, "block")
    hook = bob / ".git" / "hooks" / "pre-commit"
    installed = hook.read_text()
    assert "-m agentlanes.hooks.githook" in installed  # what a new install writes
    hook.write_text(installed.replace("-m agentlanes.hooks.githook", "-m agentlanes.githook"))
    write_files(bob, "src/api/new.py")
    git(bob, env_b, "add", ".")
    before = head(bob, env_b)
    refused = git(bob, env_b, "commit", "-q", "-m", "blocked", check=False)
    assert refused.returncode != 0 and head(bob, env_b) == before
    assert (
        "agentlanes: src/api/new.py is claimed by alice for certain (their pattern src/api/**)"
        in refused.stderr
    )
    no_traceback(refused)


def test_unreachable_server_warns_and_allows_unless_fail_closed(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", f"http://127.0.0.1:{free_port()}", "alk_x")
    repo = make_repo(tmp_path / "repo", env)
    assert lanes(repo, env, "hook", "install").returncode == 0
    write_files(repo, "a.py")
    git(repo, env, "add", ".")
    allowed = git(repo, env, "commit", "-q", "-m", "a")
    assert allowed.returncode == 0
    assert "server unreachable" in allowed.stderr and "commit not checked" in allowed.stderr
    no_traceback(allowed)

    (repo / ".agentlanes.toml").write_text("fail_closed = true\n")
    write_files(repo, "b.py")
    git(repo, env, "add", ".")
    refused = git(repo, env, "commit", "-q", "-m", "b", check=False)
    assert refused.returncode != 0
    assert "commit refused (fail_closed)" in refused.stderr
    no_traceback(refused)


def test_ended_session_is_reported_and_pre_commit_framework_entry(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    _, _, bob, env_b = setup_project(agent_server, tmp_path, "warn")
    session = lanes_json(bob, env_b, "checkin", "--agent", "bob", "--files", "docs/**")
    token = session["session_token"]
    saved = bob / ".git" / "agentlanes" / "sessions" / "bob.json"  # one file per agent
    kept = saved.read_text()
    lanes_json(bob, env_b, "checkout")
    saved.write_text(kept)  # a stale token left behind
    assert json.loads(saved.read_text())["session_token"] == token
    write_files(bob, "src/api/z.py")
    git(bob, env_b, "add", ".")
    # `lanes hook run` is what .pre-commit-hooks.yaml runs.
    ran = lanes(bob, env_b, "hook", "run")
    assert ran.returncode == 0
    assert "saved session is no longer active" in ran.stderr
    assert "src/api/z.py is claimed by alice" in ran.stderr
    config = (Path(__file__).parents[2] / ".pre-commit-hooks.yaml").read_text()
    assert "entry: lanes hook run" in config and "pass_filenames: false" in config


def test_a_literal_above_a_staged_path_blocks_for_certain(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    """A staged file exists, so the directories above it exist: carol's 'docs'
    (no trailing '/', so maybe a file) claims docs/new.md for certain."""
    _, env_a, bob, env_b = setup_project(agent_server, tmp_path, "block")
    carol = make_repo(tmp_path / "carol", env_a)
    lanes_json(carol, env_a, "checkin", "--agent", "carol", "--files", "docs")
    write_files(bob, "docs/new.md")
    git(bob, env_b, "add", ".")
    refused = git(bob, env_b, "commit", "-q", "-m", "docs", check=False)
    assert refused.returncode != 0, refused.stderr
    assert "docs/new.md is claimed by carol for certain (their pattern docs" in refused.stderr
    assert "1 other session(s) hold these paths for certain" in refused.stderr
    no_traceback(refused)
