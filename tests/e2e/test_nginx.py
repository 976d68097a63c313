"""Three `agentlanes serve` processes on PostgreSQL + Redis behind nginx, with
deploy/nginx.conf as shipped: one address, and it behaves as one service."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from tests.e2e.conftest import create_project
from tests.support import services
from tests.support.nginx import PrivateNginx, nginx_binary
from tests.support.server import ServerProcess

# Three processes and nginx start in the module fixture: slow on a busy machine.
pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.redis, pytest.mark.timeout(300)]


def backend_env(pg_database: str, redis_url: str) -> dict[str, str]:
    return {
        "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
        "AGENTLANES_LOG_LEVEL": "warning",
        "AGENTLANES_DATABASE_URL": pg_database,
        "AGENTLANES_REDIS_URL": redis_url,
        "AGENTLANES_REDIS_CHANNEL_PREFIX": f"t-{secrets.token_hex(6)}",
        # What docs/operations.md says to set behind a proxy: the names clients use.
        "AGENTLANES_ALLOWED_HOSTS": "127.0.0.1,localhost",
    }


class Deployment:
    def __init__(self, backends: list[ServerProcess], nginx: PrivateNginx) -> None:
        self.backends = backends
        self.nginx = nginx


@pytest.fixture(scope="module")
def deployment(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    nginx_binary()  # skips (or fails under AGENTLANES_REQUIRE_SERVICES=1) without nginx
    redis_url = services.require_redis()
    env = backend_env(pg_database, redis_url)
    workdir = tmp_path_factory.mktemp("nginx")
    backends = [ServerProcess(env, workdir) for _ in range(3)]
    nginx = PrivateNginx(workdir, [f"127.0.0.1:{b.port}" for b in backends])
    try:
        # Side by side: on a busy machine each takes a while to import and migrate.
        with ThreadPoolExecutor(len(backends)) as pool:
            list(pool.map(lambda b: b.start(timeout=120), backends))
        nginx.start()
        yield Deployment(backends, nginx)
    finally:
        nginx.stop()
        for backend in backends:
            backend.stop()


def test_the_block_mode_race_through_nginx_admits_exactly_one(deployment: Deployment) -> None:
    url = deployment.nginx.url
    key = create_project(url, conflict_mode="block")["api_key"]

    async def race() -> list[httpx.Response]:
        # 32 connections, so nginx spreads them over the three processes.
        clients = [
            httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}, timeout=30)
            for _ in range(32)
        ]
        try:
            replies = await asyncio.gather(
                *(
                    client.post(
                        "/api/v1/checkin",
                        json={"agent_name": f"racer{i}", "declared_files": ["src/**/*.py"]},
                    )
                    for i, client in enumerate(clients)
                )
            )
        finally:
            for client in clients:
                await client.aclose()
        return list(replies)

    replies = asyncio.run(race())
    codes = sorted(r.status_code for r in replies)
    assert codes == [201] + [409] * 31, [r.text for r in replies if r.status_code != 409]
    for backend in deployment.backends:
        presence = httpx.get(f"{backend.url}/api/v1/presence", headers={"X-API-Key": key})
        assert len(presence.json()["sessions"]) == 1


class Subscriber:
    """A socket through nginx that reconnects on its own with `since` = the last offset it
    saw, recording every event frame exactly as it arrived (duplicates included)."""

    def __init__(self, url: str, key: str) -> None:
        self.url = url
        self.key = key
        self.offsets: list[int] = []
        self.connects = 0
        self.last = 0

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            url = f"{self.url}/api/v1/events?since={self.last}"
            try:
                async with websockets.connect(
                    url, additional_headers={"X-API-Key": self.key}, open_timeout=5
                ) as ws:
                    self.connects += 1
                    while not stop.is_set():
                        with contextlib.suppress(TimeoutError):
                            frame = json.loads(await asyncio.wait_for(ws.recv(), 0.2))
                            if frame["type"] in ("presence.snapshot", "replay.complete"):
                                continue
                            self.offsets.append(frame["offset"])
                            self.last = frame["offset"]
            except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError):
                await asyncio.sleep(0.2)


def test_kill_9_of_a_backend_sockets_reconnect_through_nginx_without_gap_or_duplicate(
    deployment: Deployment,
) -> None:
    url = deployment.nginx.url
    key = create_project(url)["api_key"]
    h = {"X-API-Key": key}
    victim = deployment.backends[2]

    async def scenario() -> list[Subscriber]:
        stop = asyncio.Event()
        subscribers = [Subscriber(deployment.nginx.ws_url, key) for _ in range(9)]
        tasks = [asyncio.create_task(s.run(stop)) for s in subscribers]
        async with httpx.AsyncClient(base_url=url, headers=h, timeout=30) as http:

            async def checkins(prefix: str, n: int) -> None:
                for i in range(n):
                    # Requests in flight on the victim when it dies may fail (502):
                    # the event log decides what happened.
                    await http.post("/api/v1/checkin", json={"agent_name": f"{prefix}{i}"})

            async def all_seen() -> int:
                last = (await http.get("/api/v1/events/log?limit=1")).json()["last_offset"]
                for _ in range(150):
                    if all(s.last >= last for s in subscribers):
                        return int(last)
                    await asyncio.sleep(0.1)
                raise AssertionError(f"not every socket reached {last}")

            while sum(s.connects for s in subscribers) < len(subscribers):
                await asyncio.sleep(0.05)
            await checkins("before", 10)
            await all_seen()
            victim.kill()
            await checkins("while", 15)  # while the victim's sockets reconnect
            await all_seen()
            await checkins("after", 5)
            last = await all_seen()
            stop.set()
            await asyncio.gather(*tasks)
            log = (await http.get("/api/v1/events/log?limit=1000")).json()["events"]
            assert [e["offset"] for e in log] == list(range(1, last + 1))
        return subscribers

    try:
        subscribers = asyncio.run(scenario())
    finally:
        victim.start(timeout=120)
    for s in subscribers:
        assert s.offsets == list(range(1, s.last + 1)), "a gap or a duplicate"
    # Round robin put some sockets on the killed process: they came back through nginx.
    assert any(s.connects > 1 for s in subscribers)
    assert all(s.last == subscribers[0].last for s in subscribers)


def test_nginx_passes_the_host_and_the_backends_refuse_an_unknown_one(
    deployment: Deployment,
) -> None:
    url = deployment.nginx.url
    assert httpx.get(f"{url}/readyz").status_code == 200
    r = httpx.get(f"{url}/readyz", headers={"Host": "evil.example"})
    assert r.status_code == 421
