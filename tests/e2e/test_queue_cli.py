"""Waiting for a lane from a shell, against a real server (SQLite): ``lanes wait`` blocks on
the socket, prints its place in line as it changes, exits 0 once granted and 1 at the
timeout; ``lanes ask`` reaches the holder; and a grant racing a new check-in in block
mode gives the path to exactly one of them."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.agents import isolated_env, lanes, lanes_json, make_repo, new_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e


def _start_wait(repo: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentlanes", "wait", *args],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _line(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    """The next line the process prints (fails after ``timeout`` seconds)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            return line.strip()
        if proc.poll() is not None:
            raise AssertionError(f"exited {proc.returncode}: {proc.stderr and proc.stderr.read()}")
    raise AssertionError("no line in time")


def test_lanes_wait_follows_its_place_until_the_grant(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    key = new_project(agent_server.url, conflict_mode="block")["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    lanes_json(repo, env, "checkin", "--agent", "claude-aa11", "--files", "src/app.py")
    lanes_json(repo, env, "checkin", "--agent", "codex-bb22")
    lanes_json(repo, env, "checkin", "--agent", "gemini-cc33")

    first = _start_wait(repo, env, "src/app.py", "--agent", "codex-bb22")
    assert _line(first).startswith("queued q_")
    second = _start_wait(repo, env, "src/app.py", "--agent", "gemini-cc33")
    queued = _line(second)
    assert queued.startswith("queued q_") and "position 2" in queued
    assert "held by claude-1 (src/app.py)" in queued

    listed = lanes(repo, env, "queue")
    assert listed.returncode == 0 and "codex-1" in listed.stdout and "gemini-1" in listed.stdout

    asked = lanes(
        repo,
        env,
        "ask",
        "claude-1",
        "src/app.py",
        "--reason",
        "the router",
        "--agent",
        "codex-bb22",
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("asked claude-1 to release src/app.py")

    # The holder lets go (as `lanes release src/app.py` does: a status with fewer claims).
    lanes_json(repo, env, "status", "--agent", "claude-aa11", "--files", "docs/**")
    assert _line(first).startswith("granted: src/app.py after ")
    assert first.wait(30) == 0
    # The second moved up: first in line now, held by the first waiter.
    moved = _line(second)
    assert moved.startswith("position 1") and "codex-1" in moved, moved
    lanes_json(repo, env, "checkout", "--agent", "codex-bb22")
    assert _line(second).startswith("granted: src/app.py")
    assert second.wait(30) == 0
    presence = httpx.get(f"{agent_server.url}/api/v1/presence", headers={"X-API-Key": key})
    claims = {s["agent_name"]: s["declared_files"] for s in presence.json()["sessions"]}
    assert claims["gemini-cc33"] == ["src/app.py"]


def test_lanes_wait_gives_up_at_its_timeout(agent_server: ServerProcess, tmp_path: Path) -> None:
    key = new_project(agent_server.url, conflict_mode="block")["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    lanes_json(repo, env, "checkin", "--agent", "holder", "--files", "hot.py")
    lanes_json(repo, env, "checkin", "--agent", "waiter")
    done = lanes(repo, env, "wait", "hot.py", "--timeout", "1", "--agent", "waiter")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "timed_out" in done.stdout or "timed out" in done.stdout


async def _round(url: str, key: str, n: int, other: str) -> tuple[bool, bool]:
    """One race: the holder releases (at ``url``) while a newcomer checks in on the same
    path (at ``other``: another process) and a waiter waits for it. Who has the path?"""
    h = {"X-API-Key": key}
    path = f"hot/{n}.py"
    async with (
        httpx.AsyncClient(base_url=url, headers=h, timeout=30) as http,
        httpx.AsyncClient(base_url=other, headers=h, timeout=30) as elsewhere,
    ):
        holder = (
            await http.post(
                "/api/v1/checkin", json={"agent_name": f"h{n}", "declared_files": [path]}
            )
        ).json()
        waiter = (await http.post("/api/v1/checkin", json={"agent_name": f"w{n}"})).json()
        queued = await http.post(
            "/api/v1/queue",
            json={"paths": [path]},
            headers={"X-Session-Token": waiter["session_token"]},
        )
        assert queued.status_code == 202, queued.text
        release, newcomer = await asyncio.gather(
            http.post(
                "/api/v1/status",
                json={"declared_files": []},
                headers={"X-Session-Token": holder["session_token"]},
            ),
            elsewhere.post(
                "/api/v1/checkin", json={"agent_name": f"c{n}", "declared_files": [path]}
            ),
        )
        assert release.status_code == 200, release.text
        presence = (await http.get("/api/v1/presence")).json()["sessions"]
    owners = [s["agent_name"] for s in presence if path in s["declared_files"]]
    assert len(owners) == 1, owners
    return owners == [f"w{n}"], newcomer.status_code == 201


def race_rounds(
    url: str, key: str, rounds: int, other: str | None = None
) -> list[tuple[bool, bool]]:
    async def all_rounds() -> list[tuple[bool, bool]]:
        return [await _round(url, key, n, other or url) for n in range(rounds)]

    return asyncio.run(all_rounds())


def test_a_grant_racing_a_new_checkin_gives_the_path_to_exactly_one(
    agent_server: ServerProcess,
) -> None:
    key = new_project(agent_server.url, conflict_mode="block")["api_key"]
    results: list[Any] = race_rounds(agent_server.url, key, 10)
    # Exactly one owner each round (asserted inside); the wait, first in line, got it.
    assert all(waiter for waiter, _ in results)
    assert not any(newcomer for _, newcomer in results)
