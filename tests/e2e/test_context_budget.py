"""SPEC "Context budget", against a real server: what ``SessionStart`` puts into the
agent's context is at most 1,500 characters, however many agents are live (the rest
counted, with where to see them)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.agents import isolated_env, lanes, make_repo, new_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e


def test_session_start_fits_in_1500_characters(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    key = new_project(agent_server.url)["api_key"]
    for i in range(30):  # many live agents, each with long patterns
        files = [f"services/team-{i}/module-{k}/{'deep/' * 8}**" for k in range(6)]
        r = httpx.post(f"{agent_server.url}/api/v1/checkin", headers={"X-API-Key": key},
                       json={"agent_name": f"agent-{i:02d}", "declared_files": files},
                       timeout=10)  # fmt: skip
        assert r.status_code == 201, r.text
    env = isolated_env(tmp_path / "home", agent_server.url, key,
                       AGENTLANES_AGENT_PID=agent_process())  # fmt: skip
    repo = make_repo(tmp_path / "repo", env)
    assert lanes(repo, env, "init", "--agent", "claude").returncode == 0
    payload = {"session_id": "budget-1", "cwd": str(repo), "hook_event_name": "SessionStart",
               "source": "startup"}  # fmt: skip
    done = subprocess.run(
        [str(Path(lanes_bin())), "guard"], input=json.dumps(payload), cwd=repo, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= 1500, len(text)
    assert "you are checked in as claude-budget-1" in text
    assert "30 other live session(s)" in text and "agent-00" in text
    shown = text.count("services/team-")
    assert 0 < shown < 30 * 6
    assert " more: lanes presence" in text


def lanes_bin() -> str:
    import sys

    return str(Path(sys.executable).parent / "lanes")
