"""Two `agentlanes serve` processes on one PostgreSQL and one Redis behave as one service."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from tests.e2e.conftest import create_project
from tests.support import services
from tests.support.redis_server import PrivateRedis
from tests.support.server import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.redis]


def _cluster_env(pg_database: str, redis_url: str) -> dict[str, str]:
    return {
        "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
        "AGENTLANES_LOG_LEVEL": "warning",
        "AGENTLANES_DATABASE_URL": pg_database,
        "AGENTLANES_REDIS_URL": redis_url,
        # Each cluster its own channel, so parallel runs on the shared Redis stay apart.
        "AGENTLANES_REDIS_CHANNEL_PREFIX": f"t-{secrets.token_hex(6)}",
        "AGENTLANES_EXPIRY_CHECK_SECONDS": "0.2",
        "AGENTLANES_ATTACH_REFRESH_SECONDS": "0.3",
    }


@pytest.fixture(scope="module")
def cluster(
    pg_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two server processes on one PostgreSQL and one Redis, shared by the module's tests
    (each test uses its own project). Starting processes is the slow part of these tests."""
    redis_url = services.require_redis()
    env = _cluster_env(pg_database, redis_url)
    workdir = tmp_path_factory.mktemp("cluster")
    servers = [ServerProcess(env, workdir), ServerProcess(env, workdir)]
    try:
        for server in servers:
            server.start()
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


async def _recv(ws: Any, timeout: float = 10) -> dict[str, Any]:
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))  # type: ignore[no-any-return]


async def _collect_until(ws: Any, last: int, timeout: float = 15) -> list[dict[str, Any]]:
    """Frames up to and including offset ``last``, then proof that nothing else follows."""
    frames: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while not frames or frames[-1].get("offset", -1) < last:
        frames.append(await _recv(ws, max(0.1, deadline - time.monotonic())))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(ws.recv(), 0.5)
    return frames


def _last_offset(server: ServerProcess, key: str) -> int:
    r = httpx.get(f"{server.url}/api/v1/events/log?limit=1", headers={"X-API-Key": key})
    return int(r.json()["last_offset"])


def test_every_subscriber_on_either_process_gets_every_event_once_in_order(
    cluster: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = cluster
    key = create_project(a.url)["api_key"]
    h = {"X-API-Key": key}

    async def scenario() -> None:
        sockets = [
            await websockets.connect(f"{server.ws_url}/api/v1/events", additional_headers=h)
            for server in (a, b, a, b)
        ]
        starts = [(await _recv(ws))["offset"] for ws in sockets]
        assert set(starts) == {0}
        async with (
            httpx.AsyncClient(base_url=a.url, headers=h, timeout=30) as ha,
            httpx.AsyncClient(base_url=b.url, headers=h, timeout=30) as hb,
        ):
            # Concurrent check-ins on both processes; overlapping ones add conflict events.
            replies = await asyncio.gather(
                *(
                    (ha if i % 2 else hb).post(
                        "/api/v1/checkin",
                        json={"agent_name": f"agent{i}", "declared_files": [f"src/m{i % 3}/**"]},
                    )
                    for i in range(24)
                )
            )
        assert all(r.status_code == 201 for r in replies)
        last = _last_offset(a, key)
        assert last > 24  # check-ins plus conflicts
        for ws in sockets:
            frames = await _collect_until(ws, last)
            assert [f["offset"] for f in frames] == list(range(1, last + 1))
            await ws.close()
        log = httpx.get(f"{b.url}/api/v1/events/log?limit=1000", headers=h).json()["events"]
        assert [e["offset"] for e in log] == list(range(1, last + 1))
        assert sum(e["type"] == "agent.checkin" for e in log) == 24

    asyncio.run(scenario())


def test_block_mode_race_across_both_processes_admits_exactly_one(
    cluster: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = cluster
    key = create_project(a.url, conflict_mode="block")["api_key"]

    async def race() -> list[int]:
        async with (
            httpx.AsyncClient(base_url=a.url, headers={"X-API-Key": key}, timeout=30) as ha,
            httpx.AsyncClient(base_url=b.url, headers={"X-API-Key": key}, timeout=30) as hb,
        ):
            replies = await asyncio.gather(
                *(
                    (ha if i % 2 else hb).post(
                        "/api/v1/checkin",
                        json={"agent_name": f"racer{i}", "declared_files": ["src/**/*.py"]},
                    )
                    for i in range(32)
                )
            )
        return [r.status_code for r in replies]

    codes = asyncio.run(race())
    assert sorted(codes) == [201] + [409] * 31
    for server in (a, b):
        presence = httpx.get(f"{server.url}/api/v1/presence", headers={"X-API-Key": key}).json()
        assert len(presence["sessions"]) == 1


def test_each_overdue_session_times_out_once_across_both_processes(
    cluster: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = cluster
    key = create_project(a.url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=1)["api_key"]
    h = {"X-API-Key": key}
    ids = [
        httpx.post(
            f"{(a, b)[i % 2].url}/api/v1/checkin", json={"agent_name": f"s{i}"}, headers=h
        ).json()["session_id"]
        for i in range(12)
    ]

    def timeouts() -> list[str]:
        log = httpx.get(f"{b.url}/api/v1/events/log?limit=1000", headers=h).json()["events"]
        return [e["data"]["session_id"] for e in log if e["type"] == "agent.timeout"]

    deadline = time.monotonic() + 15
    while len(set(timeouts())) < len(ids) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.5)  # both schedulers keep running: still one each
    got = timeouts()
    assert sorted(got) == sorted(ids)


def test_a_socket_attached_on_one_process_keeps_the_session_alive_for_both(
    cluster: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = cluster
    key = create_project(a.url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=2)["api_key"]
    h = {"X-API-Key": key}
    session = httpx.post(f"{b.url}/api/v1/checkin", json={"agent_name": "kept"}, headers=h).json()

    def live_on(server: ServerProcess) -> list[str]:
        body = httpx.get(f"{server.url}/api/v1/presence", headers=h).json()
        return [s["agent_name"] for s in body["sessions"]]

    def timeouts() -> int:
        log = httpx.get(f"{a.url}/api/v1/events/log?limit=1000", headers=h).json()["events"]
        return sum(e["type"] == "agent.timeout" for e in log)

    async def hold() -> None:
        async with websockets.connect(f"{a.ws_url}/api/v1/events", additional_headers=h) as ws:
            await _recv(ws)
            await ws.send(json.dumps({"type": "attach", "session_token": session["session_token"]}))
            assert (await _recv(ws))["type"] == "attached"
            await asyncio.sleep(5)  # 2.5 TTLs
            assert live_on(a) == ["kept"] and live_on(b) == ["kept"]
            assert timeouts() == 0

    asyncio.run(hold())
    deadline = time.monotonic() + 10
    while timeouts() == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)
    assert timeouts() == 1
    assert live_on(b) == []


def test_a_subscriber_reconnecting_after_a_restart_gets_every_missed_event_once(
    cluster: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = cluster
    key = create_project(a.url)["api_key"]
    h = {"X-API-Key": key}

    def checkin(server: ServerProcess, name: str) -> None:
        r = httpx.post(f"{server.url}/api/v1/checkin", json={"agent_name": name}, headers=h)
        assert r.status_code == 201

    async def first_visit() -> int:
        async with websockets.connect(f"{a.ws_url}/api/v1/events", additional_headers=h) as ws:
            await _recv(ws)
            for i in range(3):
                checkin(b, f"before{i}")
            frames = await _collect_until(ws, 3)
            return int(frames[-1]["offset"])

    seen = asyncio.run(first_visit())
    a.kill()
    for i in range(5):
        checkin(b, f"while-down{i}")
    a.start()

    async def second_visit() -> None:
        url = f"{a.ws_url}/api/v1/events?since={seen}"
        async with websockets.connect(url, additional_headers=h) as ws:
            replayed = [await _recv(ws) for _ in range(5)]
            assert [f["offset"] for f in replayed] == list(range(seen + 1, seen + 6))
            done = await _recv(ws)
            assert isinstance(done.pop("epoch"), str)  # replay.complete names the history
            assert done == {"type": "replay.complete", "recovered": True, "offset": seen + 5}
            checkin(b, "after")
            live = await _collect_until(ws, seen + 6)
            assert [f["offset"] for f in live] == [seen + 6]

    asyncio.run(second_visit())


def test_redis_outage_loses_nothing_and_subscribers_catch_up(
    server_factory: Any, pg_database: str, tmp_path: Path
) -> None:
    private = PrivateRedis(tmp_path).start()
    try:
        env = _cluster_env(pg_database, private.url)
        a, b = server_factory(env), server_factory(env)
        key = create_project(a.url)["api_key"]
        h = {"X-API-Key": key}

        async def scenario() -> None:
            async with websockets.connect(f"{b.ws_url}/api/v1/events", additional_headers=h) as ws:
                await _recv(ws)
                private.stop()
                await asyncio.sleep(0.5)
                async with httpx.AsyncClient(base_url=a.url, headers=h, timeout=10) as http:
                    for i in range(6):
                        r = await http.post("/api/v1/checkin", json={"agent_name": f"o{i}"})
                        assert r.status_code == 201  # state is written without Redis
                    ready = await http.get("/readyz")
                    assert ready.status_code == 503
                    assert ready.json()["checks"]["redis"].startswith("unreachable")
                private.start()
                frames = await _collect_until(ws, 6)
                assert [f["offset"] for f in frames] == list(range(1, 7))
            deadline = time.monotonic() + 10
            while httpx.get(f"{a.url}/readyz").status_code != 200:
                assert time.monotonic() < deadline, "readyz did not recover"
                await asyncio.sleep(0.2)

        asyncio.run(scenario())
        for server in (a, b):
            assert server.log().count("redis unavailable") == 1, server.log()
    finally:
        private.stop()
