"""`lanes verify` and the pre-push hook for real: git clones of one bare remote, a real
server, two agents. Alice edits src/app.py (her status carries the edits, as git diff -U0
reads them); bob commits with --no-verify, as Aider does, and his check or push is
refused while she is live with those edits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentlanes.domain.edits import parse_unified_zero
from tests.support.agents import (
    git,
    isolated_env,
    lanes,
    lanes_json,
    make_repo,
    new_project,
    no_traceback,
)
from tests.support.server import ServerProcess, free_port

pytestmark = pytest.mark.e2e

APP = "".join(f"line {n}\n" for n in range(1, 31))


class Agent:
    def __init__(self, name: str, repo: Path, env: dict[str, str]) -> None:
        self.name = name
        self.repo = repo
        self.env = env
        self.token: str | None = None

    def git(self, *args: str, check: bool = True) -> Any:
        return git(self.repo, self.env, *args, check=check)

    def lanes(self, *args: str) -> Any:
        return lanes(self.repo, self.env, *args)

    def checkin(self, *files: str) -> None:
        self.token = lanes_json(
            self.repo, self.env, "checkin", "--agent", self.name, "--files", *files
        )["session_token"]

    def edit(self, path: str, lines: dict[int, str]) -> list[dict[str, Any]]:
        """Change some lines of a file (uncommitted) and report it, as the agent side does:
        ``git diff -U0`` against HEAD, the base blob id, in a status change."""
        target = self.repo / path
        text = target.read_text().splitlines(keepends=True)
        for n, new in lines.items():
            text[n - 1] = new + "\n"
        target.write_text("".join(text))
        diff = self.git("diff", "-U0", "--", path).stdout
        base = self.git("rev-parse", f"HEAD:{path}").stdout.strip()
        edits = [
            {"path": p, "base": base, "ranges": [list(r) for r in ranges]}
            for p, ranges in parse_unified_zero(diff).items()
        ]
        r = httpx.post(
            f"{self.env['AGENTLANES_URL']}/api/v1/status",
            json={"edits": edits},
            headers={"X-API-Key": self.env["AGENTLANES_API_KEY"], "X-Session-Token": self.token},
            timeout=10,
        )
        assert r.status_code == 200, r.text
        return edits

    def commit(self, path: str, text: str, message: str) -> str:
        (self.repo / path).parent.mkdir(parents=True, exist_ok=True)
        (self.repo / path).write_text(text)
        self.git("add", path)
        self.git("commit", "-q", "--no-verify", "-m", message)  # the pre-commit hook skipped
        return str(self.git("rev-parse", "HEAD").stdout.strip())


def clones(server: ServerProcess, tmp_path: Path, *names: str) -> tuple[Path, list[Agent]]:
    """A bare remote holding src/app.py, src/other.py and docs/a.md; a clone per agent."""
    key = new_project(server.url, conflict_mode="warn")["api_key"]
    seed_env = isolated_env(tmp_path / "home-seed", server.url, key)
    seed = make_repo(tmp_path / "seed", seed_env)
    for path, text in (("src/app.py", APP), ("src/other.py", "x\n"), ("docs/a.md", "a\n")):
        (seed / path).parent.mkdir(parents=True, exist_ok=True)
        (seed / path).write_text(text)
    git(seed, seed_env, "add", ".")
    git(seed, seed_env, "commit", "-q", "-m", "files")
    remote = tmp_path / "remote.git"
    git(tmp_path, seed_env, "clone", "-q", "--bare", str(seed), str(remote))
    agents = []
    for name in names:
        env = isolated_env(tmp_path / f"home-{name}", server.url, key)
        git(tmp_path, env, "clone", "-q", str(remote), name)
        repo = tmp_path / name
        git(repo, env, "config", "user.name", name)
        git(repo, env, "config", "user.email", f"{name}@example.com")
        agents.append(Agent(name, repo, env))
    return remote, agents


def remote_head(remote: Path, env: dict[str, str], branch: str = "main") -> str:
    done = git(remote, env, "rev-parse", "--verify", "-q", branch, check=False)
    return str(done.stdout.strip())


def test_verify_refuses_a_range_over_another_sessions_edits(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    _, (alice, bob, carol) = clones(agent_server, tmp_path, "alice", "bob", "carol")
    alice.checkin("src/app.py")
    assert alice.edit("src/app.py", {3: "alice 3", 4: "alice 4"})[0]["ranges"] == [[3, 4]]
    bob.checkin("src/**")  # bob's own session is left out of his check

    # Bob edits other lines of her file (his session reports it too), and commits: his
    # check is refused, naming her; his own session's edits are not held against him.
    bob.edit("src/app.py", {20: "bob 20"})
    bob.git("commit", "-q", "--no-verify", "-am", "bob's change")
    done = bob.lanes("verify")
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert (
        "src/app.py: alice is editing lines 3-4 (not committed); your session edits it too, "
        'apart; ask them: lanes message send alice "..."' in out
    )
    assert "refused: 1 of the 1 file(s) of origin/main..HEAD (1 commit(s))" in out
    assert "bob" not in out.replace("bob's", "")  # his own session is not an overlap
    no_traceback(done)
    answer = json.loads(bob.lanes("verify", "--json").stdout)
    assert answer["refused"] is True and answer["exit_code"] == 1
    held = [(e["agent_name"], e["path"], e["ranges"], e["edited_by"]) for e in answer["edits"]]
    assert held == [("alice", "src/app.py", [[3, 4]], "both")]
    # CI knows the branch's author by name: --ignore-agent leaves that agent out.
    assert bob.lanes("verify", "--ignore-agent", "alice").returncode == 0

    # A commit touching only other files: passes, quietly.
    bob.git("reset", "-q", "--hard", "origin/main")
    bob.commit("docs/b.md", "b\n", "docs")
    bob.commit("src/other.py", "y\n", "other")
    done = bob.lanes("verify")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "verify passes: no other live session has edits on the 2 file(s) of "
        "origin/main..HEAD (2 commit(s))"
    ]
    # An explicit range holding her file is refused again.
    assert bob.lanes("verify", "HEAD~2..HEAD").returncode == 0
    assert bob.lanes("verify", "origin/main~1..origin/main").returncode == 1

    # A claim without edits (carol) is a warning: exit 0.
    carol.checkin("docs/**")
    done = bob.lanes("verify")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "warning: docs/b.md is claimed by carol for certain (their pattern docs/**), "
        "with no edits of theirs reported" in done.stdout
    )
    assert "verify passes" in done.stdout and "reports no edits" not in done.stdout

    # Once alice checks out, her file is free.
    alice.lanes("checkout", "--agent", "alice")
    assert bob.lanes("verify", "origin/main~1..origin/main").returncode == 0


def test_the_pre_push_hook_refuses_until_the_other_session_checks_out(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    remote, (alice, bob) = clones(agent_server, tmp_path, "alice", "bob")
    before = remote_head(remote, bob.env)
    init = bob.lanes("init")
    assert init.returncode == 0, init.stderr
    assert "pre-push" in init.stdout
    alice.checkin("src/app.py")
    alice.edit("src/app.py", {10: "alice 10"})

    mine = bob.commit("src/app.py", APP.replace("line 25\n", "bob 25\n"), "bob's change")
    refused = bob.git("push", "-q", "origin", "main", check=False)
    assert refused.returncode != 0
    assert "agentlanes: src/app.py: alice is editing line 10 (not committed)" in refused.stderr
    assert "lanes message send alice" in refused.stderr
    assert "AGENTLANES_SKIP=1 git push" in refused.stderr
    assert remote_head(remote, bob.env) == before
    no_traceback(refused)
    # A new branch (the remote's object name all zeros): the commits the remote lacks.
    refused = bob.git("push", "-q", "origin", "main:refs/heads/feature", check=False)
    assert refused.returncode != 0 and "alice is editing line 10" in refused.stderr
    assert remote_head(remote, bob.env, "feature") == ""

    alice.lanes("checkout", "--agent", "alice")
    done = bob.git("push", "-q", "origin", "main", "main:refs/heads/feature", check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # quiet when all is well
    assert remote_head(remote, bob.env) == mine == remote_head(remote, bob.env, "feature")


def test_a_chained_pre_push_hook_gets_gits_stdin_and_can_refuse(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", f"http://127.0.0.1:{free_port()}", "alk_x")
    seed = make_repo(tmp_path / "seed", env)
    git(tmp_path, env, "clone", "-q", "--bare", str(seed), "remote.git")
    git(tmp_path, env, "clone", "-q", "remote.git", "work")
    work = tmp_path / "work"
    git(work, env, "config", "user.name", "Test Agent")
    git(work, env, "config", "user.email", "agent@example.com")
    hooks = work / ".git" / "hooks"
    theirs = hooks / "pre-push"
    log = tmp_path / "chained.log"
    theirs.write_text(f'#!/bin/sh\necho "args $1" >> {log}\ncat >> {log}\n')
    theirs.chmod(0o755)
    assert lanes(work, env, "hook", "install").returncode == 0
    assert (hooks / "pre-push.agentlanes-chained").exists()
    (work / "a.txt").write_text("a\n")
    git(work, env, "add", "a.txt")
    git(work, env, "commit", "-q", "--no-verify", "-m", "a")
    sha = git(work, env, "rev-parse", "HEAD").stdout.strip()
    pushed = git(work, env, "push", "-q", "origin", "main")
    # Server unreachable, fail_closed off: warned, pushed; the old hook saw git's line.
    assert "server unreachable" in pushed.stderr and "push not checked" in pushed.stderr
    assert log.read_text().splitlines()[:2] == [
        "args origin",
        f"refs/heads/main {sha} "
        f"refs/heads/main {git(seed, env, 'rev-parse', 'HEAD').stdout.strip()}",
    ]
    # fail_closed: refused, with how past it.
    (work / "b.txt").write_text("b\n")
    git(work, env, "add", "b.txt")
    git(work, env, "commit", "-q", "--no-verify", "-m", "b")
    refused = git(
        work, {**env, "AGENTLANES_FAIL_CLOSED": "1"}, "push", "origin", "main", check=False
    )
    assert refused.returncode != 0 and "push refused (fail_closed)" in refused.stderr
    no_traceback(refused)
    # A chained hook that fails stops the push, as it would have without us.
    (hooks / "pre-push.agentlanes-chained").write_text("#!/bin/sh\nexit 7\n")
    assert git(work, env, "push", "-q", "origin", "main", check=False).returncode != 0


def test_verify_without_a_server_or_with_a_bad_range(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", f"http://127.0.0.1:{free_port()}", "alk_x")
    repo = make_repo(tmp_path / "repo", env)
    (repo / "a.txt").write_text("a\n")
    git(repo, env, "add", "a.txt")
    git(repo, env, "commit", "-q", "-m", "a")
    # No upstream: the commits on no remote-tracking branch, and it says so.
    done = lanes(repo, env, "verify")
    assert done.returncode == 0
    assert "HEAD --not --remotes" in done.stdout and "not verified" in done.stdout
    done = lanes(repo, {**env, "AGENTLANES_FAIL_CLOSED": "1"}, "verify")
    assert done.returncode == 1 and "refused (fail_closed)" in done.stdout
    for bad in ("nosuch..HEAD", "--output=x"):
        done = lanes(repo, env, "verify", "--", bad)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("agentlanes: ") and bad in done.stderr
        no_traceback(done)
    outside = tmp_path / "plain"
    outside.mkdir()
    done = lanes(outside, env, "verify")
    if done.returncode == 2:  # tmp_path is not inside some other repository
        assert "not a git repository" in done.stderr
        no_traceback(done)
