"""With Redis, the rate limit is one limit for every process (not N times it), and a
Redis outage lets requests through rather than failing them."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentlanes.api.limits import FailOpenRedisStore, rate_limit_stores
from agentlanes.settings import Settings
from tests.e2e.conftest import create_project
from tests.support.server import free_port

pytestmark = pytest.mark.e2e


def test_two_processes_on_redis_share_one_limit(
    server_factory: Callable[..., Any], redis_url: str, tmp_path: Path
) -> None:
    prefix = f"{os.environ.get('AGENTLANES_REDIS_CHANNEL_PREFIX', 'agentlanes')}-rl-{free_port()}"
    env = {
        "AGENTLANES_DATABASE_URL": f"sqlite:///{tmp_path / 'shared.db'}",
        "AGENTLANES_REDIS_URL": redis_url,
        "AGENTLANES_REDIS_CHANNEL_PREFIX": prefix,
        "AGENTLANES_RATE_LIMIT_PER_MINUTE": "10",
    }
    a = server_factory(env)
    b = server_factory(env)
    key = {"X-API-Key": create_project(a.url)["api_key"]}
    codes = []
    for n in range(10):  # 5 on each process: under the limit of 10
        server = a if n % 2 else b
        codes.append(httpx.get(f"{server.url}/api/v1/presence", headers=key).status_code)
    assert codes == [200] * 10
    # The 11th is over the shared limit on either process (per process it would be 6th).
    for server in (a, b):
        r = httpx.get(f"{server.url}/api/v1/presence", headers=key)
        assert r.status_code == 429, r.text
        assert r.json()["error"]["code"] == "RATE_LIMITED"


def test_a_burst_over_two_processes_gets_exactly_the_limit(
    server_factory: Callable[..., Any], redis_url: str, tmp_path: Path
) -> None:
    """30 simultaneous requests for one key, spread over two processes, limit 10: exactly
    10 pass. Counting is one atomic step in Redis, so no two processes both let the
    10th through."""
    prefix = f"{os.environ.get('AGENTLANES_REDIS_CHANNEL_PREFIX', 'agentlanes')}-rb-{free_port()}"
    env = {
        "AGENTLANES_DATABASE_URL": f"sqlite:///{tmp_path / 'shared.db'}",
        "AGENTLANES_REDIS_URL": redis_url,
        "AGENTLANES_REDIS_CHANNEL_PREFIX": prefix,
        "AGENTLANES_RATE_LIMIT_PER_MINUTE": "10",
    }
    servers = [server_factory(env), server_factory(env)]
    key = {"X-API-Key": create_project(servers[0].url)["api_key"]}

    async def burst() -> list[int]:
        async with httpx.AsyncClient(timeout=30) as client:
            answers = await asyncio.gather(
                *(
                    client.get(f"{servers[n % 2].url}/api/v1/presence", headers=key)
                    for n in range(30)
                )
            )
        return [r.status_code for r in answers]

    codes = asyncio.run(burst())
    assert codes.count(200) == 10, codes
    assert codes.count(429) == 20, codes


async def test_the_redis_store_fails_open_when_redis_is_down() -> None:
    settings = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0", rate_limit_per_minute=5)  # type: ignore[call-arg]
    store = rate_limit_stores(settings)["rate_limit"]
    assert isinstance(store, FailOpenRedisStore)
    await store.set("k", b"v", expires_in=60)
    assert await store.get("k") is None
    assert await store.count_hit("k", 60) is None
