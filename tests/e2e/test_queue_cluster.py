"""Waiting for a lane across processes: two `agentlanes serve` on one PostgreSQL and one
Redis, behind nginx (deploy/nginx.conf as shipped). A wait made on one process is granted
by a release on the other, and the waiter's socket there hears it at once (pushed through
the hub, never polled); a grant racing a new check-in gives the path to exactly one."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import websockets

from tests.e2e.conftest import create_project
from tests.e2e.test_nginx import Deployment, backend_env
from tests.e2e.test_queue_cli import race_rounds
from tests.support import services
from tests.support.nginx import PrivateNginx, nginx_binary
from tests.support.server import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.redis, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def deployment(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    nginx_binary()
    env = backend_env(pg_database, services.require_redis())
    workdir = tmp_path_factory.mktemp("queue-cluster")
    backends = [ServerProcess(env, workdir) for _ in range(2)]
    nginx = PrivateNginx(workdir, [f"127.0.0.1:{b.port}" for b in backends])
    try:
        with ThreadPoolExecutor(len(backends)) as pool:
            list(pool.map(lambda b: b.start(timeout=120), backends))
        nginx.start()
        yield Deployment(backends, nginx)
    finally:
        nginx.stop()
        for backend in backends:
            backend.stop()


async def _frame(ws: Any, wanted: str, timeout: float = 10) -> dict[str, Any]:
    """The next frame of type ``wanted`` (the others are skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
        if frame.get("type") == wanted:
            return frame  # type: ignore[no-any-return]


def test_a_wait_on_one_process_is_granted_by_a_release_on_the_other(
    deployment: Deployment,
) -> None:
    a, b = deployment.backends
    key = create_project(deployment.nginx.url, conflict_mode="block")["api_key"]
    h = {"X-API-Key": key}

    async def scenario() -> None:
        async with (
            httpx.AsyncClient(base_url=a.url, headers=h, timeout=30) as on_a,
            httpx.AsyncClient(base_url=b.url, headers=h, timeout=30) as on_b,
        ):
            holder = (
                await on_b.post(
                    "/api/v1/checkin",
                    json={"agent_name": "claude-aa11", "declared_files": ["src/app.py"]},
                )
            ).json()
            waiter = (await on_a.post("/api/v1/checkin", json={"agent_name": "codex-bb22"})).json()
            me = {"X-Session-Token": waiter["session_token"]}
            queued = await on_a.post("/api/v1/queue", json={"paths": ["src/app.py"]}, headers=me)
            assert queued.status_code == 202, queued.text
            # The waiter's socket is on process A: attached, with its news.
            async with websockets.connect(
                f"{a.ws_url}/api/v1/events?since={queued.json()['offset']}", additional_headers=h
            ) as ws:
                await ws.send(
                    json.dumps({"type": "attach", "session_token": me["X-Session-Token"]})
                )
                await _frame(ws, "attached")
                await ws.send(json.dumps({"type": "news"}))
                await _frame(ws, "news")  # the summary
                started = time.monotonic()
                released = await on_b.post(
                    "/api/v1/status",
                    json={"declared_files": []},
                    headers={"X-Session-Token": holder["session_token"]},
                )
                assert released.status_code == 200
                # The event and the waiter's news item, in either order (the news is
                # computed from the projection, which may be ahead of the socket's pump).
                event: dict[str, Any] | None = None
                item: dict[str, Any] | None = None
                while event is None or item is None:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    if frame.get("type") == "claim.granted":
                        event = frame
                        took = time.monotonic() - started
                    elif frame.get("type") == "news" and frame["item"]["kind"] == "claim.granted":
                        item = frame["item"]
                assert event["data"]["entry"]["queue_id"] == queued.json()["queue_id"]
                assert item["queue_id"] == queued.json()["queue_id"]
                # Pushed, not polled: well within a second even on a loaded machine (the
                # latency figures are bench/queue.py's).
                assert took < 1.0, took
            presence = (await on_a.get("/api/v1/presence")).json()["sessions"]
            claims = {s["agent_name"]: s["declared_files"] for s in presence}
            assert claims == {"claude-aa11": [], "codex-bb22": ["src/app.py"]}

    asyncio.run(scenario())


def test_a_grant_racing_a_checkin_on_the_other_process_gives_the_path_to_exactly_one(
    deployment: Deployment,
) -> None:
    a, b = deployment.backends
    key = create_project(deployment.nginx.url, conflict_mode="block")["api_key"]
    results = race_rounds(a.url, key, 10, other=b.url)
    assert all(waiter for waiter, _ in results)
    assert not any(newcomer for _, newcomer in results)
