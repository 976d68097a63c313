"""The worked example in docs/coordination.md, run against a real server so it stays true."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import create_project

pytestmark = pytest.mark.e2e

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "three_agents.py"


def test_three_agents_example_runs_end_to_end(server_factory: Any, sqlite_url: str) -> None:
    server = server_factory({"AGENTLANES_DATABASE_URL": sqlite_url})
    key = create_project(server.url)["api_key"]
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--url", server.url, "--api-key", key],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("OK")
    assert "release approved (2/2)" in done.stdout
    events = httpx.get(
        f"{server.url}/api/v1/events/log?limit=1000", headers={"X-API-Key": key}
    ).json()["events"]
    types = {e["type"] for e in events}
    assert {
        "task.created",
        "task.claimed",
        "task.status",
        "task.note",
        "checkpoint.created",
        "checkpoint.resolved",
        "lease.acquired",
        "lease.released",
        "message.created",
        "message.acked",
        "consensus.created",
        "consensus.vote",
        "consensus.approved",
        "agent.registered",
    } <= types
