"""A real `agentlanes serve` process, spoken to over HTTP and WebSocket as users do."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from tests.e2e.conftest import create_project

pytestmark = pytest.mark.e2e


async def _recv(ws: Any, timeout: float = 5) -> dict[str, Any]:
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))  # type: ignore[no-any-return]


def test_two_agents_conflict_and_a_subscriber_sees_it_all(
    server_factory: Any, database_url: str
) -> None:
    server = server_factory({"AGENTLANES_DATABASE_URL": database_url})
    key = create_project(server.url)["api_key"]
    h = {"X-API-Key": key}

    async def scenario() -> None:
        async with (
            httpx.AsyncClient(base_url=server.url, headers=h, timeout=10) as http,
            websockets.connect(f"{server.ws_url}/api/v1/events", additional_headers=h) as ws,
        ):
            snap = await _recv(ws)
            assert snap["type"] == "presence.snapshot"
            a = (
                await http.post(
                    "/api/v1/checkin",
                    json={"agent_name": "alice", "declared_files": ["src/api/**"]},
                )
            ).json()
            b = await http.post(
                "/api/v1/checkin", json={"agent_name": "bob", "declared_files": ["src/**/*.ts"]}
            )
            assert b.status_code == 201
            [conflict] = b.json()["conflicts"]
            assert conflict["agent_name"] == "alice"
            example = conflict["overlapping_files"][0]["example"]
            assert example.startswith("src/api/") and example.endswith(".ts")
            frames = [await _recv(ws) for _ in range(3)]
            assert [f["type"] for f in frames] == [
                "agent.checkin",
                "agent.checkin",
                "agent.conflict",
            ]
            offsets = [f["offset"] for f in frames]
            assert offsets == sorted(offsets) and offsets[0] > snap["offset"]
            out = await http.post(
                "/api/v1/checkout", headers={"X-Session-Token": a["session_token"]}, json={}
            )
            assert out.json()["status"] == "checked_out"
            frame = await _recv(ws)
            assert frame["type"] == "agent.checkout" and frame["offset"] == offsets[-1] + 1
            presence = (await http.get("/api/v1/presence")).json()
            assert [s["agent_name"] for s in presence["sessions"]] == ["bob"]

    asyncio.run(scenario())


@pytest.mark.parametrize("search_seconds", [None, "0.05"], ids=["default", "tight-budget"])
def test_block_mode_race_admits_exactly_one(
    server_factory: Any, database_url: str, search_seconds: str | None
) -> None:
    """32 agents check in at once; one is admitted, 31 refused (409). With a tight
    conflict_search_seconds too: waiting for the project's lock is not the request's work,
    so a burst is decided, never refused for time (400)."""
    env = {"AGENTLANES_DATABASE_URL": database_url}
    if search_seconds:
        env["AGENTLANES_CONFLICT_SEARCH_SECONDS"] = search_seconds
    server = server_factory(env)
    key = create_project(server.url, conflict_mode="block")["api_key"]

    async def race() -> list[int]:
        async with httpx.AsyncClient(
            base_url=server.url, headers={"X-API-Key": key}, timeout=30
        ) as http:
            replies = await asyncio.gather(
                *(
                    http.post(
                        "/api/v1/checkin",
                        json={"agent_name": f"a{i}", "declared_files": ["src/**"]},
                    )
                    for i in range(32)
                )
            )
        return [r.status_code for r in replies]

    codes = asyncio.run(race())
    assert sorted(codes) == [201] + [409] * 31
    presence = httpx.get(f"{server.url}/api/v1/presence", headers={"X-API-Key": key}).json()
    assert len(presence["sessions"]) == 1


def test_a_killed_server_restarts_with_sessions_and_events_intact(
    server_factory: Any, database_url: str
) -> None:
    server = server_factory({"AGENTLANES_DATABASE_URL": database_url})
    key = create_project(server.url)["api_key"]
    h = {"X-API-Key": key}
    s = httpx.post(f"{server.url}/api/v1/checkin", json={"agent_name": "alice"}, headers=h).json()
    log_before = httpx.get(f"{server.url}/api/v1/events/log", headers=h).json()["events"]
    server.kill()
    server.start()
    r = httpx.post(
        f"{server.url}/api/v1/heartbeat", headers={**h, "X-Session-Token": s["session_token"]}
    )
    assert r.status_code == 200
    assert httpx.get(f"{server.url}/api/v1/events/log", headers=h).json()["events"] == log_before
    httpx.post(f"{server.url}/api/v1/checkin", json={"agent_name": "bob"}, headers=h)
    offsets = [
        e["offset"]
        for e in httpx.get(f"{server.url}/api/v1/events/log", headers=h).json()["events"]
    ]
    assert offsets == list(range(1, len(log_before) + 2))


def test_operations_endpoints(server_factory: Any, sqlite_url: str) -> None:
    server = server_factory({"AGENTLANES_DATABASE_URL": sqlite_url})
    assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{server.url}/readyz").json()
    assert ready["status"] == "ready" and ready["checks"]["database"] == "ok"
    assert "agentlanes" in httpx.get(f"{server.url}/metrics").text
    schema = httpx.get(f"{server.url}/schema/openapi.json").json()
    assert "/api/v1/checkin" in schema["paths"]


def test_project_create_cli_prints_the_key_once(tmp_path: Path, sqlite_url: str) -> None:
    env = {"AGENTLANES_DATABASE_URL": sqlite_url, "PATH": "/usr/bin:/bin"}
    cmd = [
        sys.executable,
        "-m",
        "agentlanes.cli.main",
        "project",
        "create",
        "Demo Repo",
        "--conflict-mode",
        "block",
        "--json",
    ]
    out = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
    body = json.loads(out.stdout)
    assert body["slug"] == "demo-repo" and body["api_key"].startswith("alk_")
    assert body["conflict_mode"] == "block"
    again = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 1
    assert "exists" in again.stderr and "Traceback" not in again.stderr
    bad = subprocess.run(
        [*cmd[:-3], "--heartbeat-interval", "0"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "heartbeat_interval_seconds" in bad.stderr
