"""Agent-side test helpers: a real server per module, projects, git repos, the CLI."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

ADMIN = {"Authorization": "Bearer admin-secret-for-the-test-suite-2026"}


def new_project(url: str, **body: Any) -> dict[str, Any]:
    body.setdefault("name", f"agents-{secrets.token_hex(4)}")
    r = httpx.post(f"{url}/api/v1/projects", json=body, headers=ADMIN, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def isolated_env(home: Path, url: str, key: str | None, **extra: str) -> dict[str, str]:
    """The environment of one agent: its own HOME (no global git config leaks in), the
    server URL and key, and no session token inherited from the test runner."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENTLANES_", "GIT_")) or k == "AGENTLANES_LOG_LEVEL"
    }
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        AGENTLANES_URL=url,
    )
    if key:
        env["AGENTLANES_API_KEY"] = key
    env.update(extra)
    return env


def make_repo(path: Path, env: dict[str, str]) -> Path:
    """A fresh git repository with a local identity and one commit."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, env, "init", "-q", "-b", "main")
    git(path, env, "config", "user.name", "Test Agent")
    git(path, env, "config", "user.email", "agent@example.com")
    git(path, env, "config", "commit.gpgsign", "false")
    (path / "README").write_text("hello\n")
    git(path, env, "add", "README")
    git(path, env, "commit", "-q", "--no-verify", "-m", "initial")
    return path


def git(
    cwd: Path, env: dict[str, str], *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=check, timeout=60
    )


def lanes(
    cwd: Path, env: dict[str, str], *args: str, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the real command line (``python -m agentlanes``) as an agent would."""
    return subprocess.run(
        [sys.executable, "-m", "agentlanes", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def lanes_json(cwd: Path, env: dict[str, str], *args: str) -> Any:
    done = lanes(cwd, env, *args, "--json")
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def write_files(root: Path, *paths: str) -> None:
    for rel in paths:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"{rel}\n")


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert "Traceback" not in done.stdout, done.stdout
