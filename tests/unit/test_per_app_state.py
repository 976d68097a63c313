"""State a middleware or store keeps is its own: two apps in one process share none."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from litestar.plugins.prometheus import PrometheusConfig
from prometheus_client import REGISTRY

from agentlanes.api.errors import _on_unexpected
from agentlanes.api.limits import FailOpenRedisStore, rate_limit_stores
from agentlanes.api.metrics import LeanPrometheusMiddleware
from agentlanes.hub.memory import MemoryHub
from agentlanes.jobs import Job, run_job
from agentlanes.services.context import ServiceContext
from agentlanes.settings import Settings
from agentlanes.store.database import Database
from tests.support.server import free_port


def test_each_rate_limit_store_reports_its_own_outage(caplog: pytest.LogCaptureFixture) -> None:
    # A port nothing listens on: every call fails.
    url = f"redis://127.0.0.1:{free_port()}/0"
    settings = Settings(redis_url=url, rate_limit_per_minute=5)  # type: ignore[call-arg]
    one, two = (rate_limit_stores(settings)["rate_limit"] for _ in range(2))
    assert isinstance(one, FailOpenRedisStore) and isinstance(two, FailOpenRedisStore)

    async def scenario() -> None:
        assert await one.count_hit("k", 60) is None
        assert await two.count_hit("k", 60) is None

    with caplog.at_level(logging.WARNING, logger="agentlanes.limits"):
        asyncio.run(scenario())
    down = [r for r in caplog.records if "rate limit not applied" in r.getMessage()]
    assert len(down) == 2  # one outage per store, each logged once


def test_each_metrics_middleware_labels_with_its_own_app_name() -> None:
    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> Any:
        return {"type": "http.request"}

    async def send(message: Any) -> None:
        return None

    async def scenario() -> None:
        for name in ("one", "two"):
            config = PrometheusConfig(app_name=name, prefix="lean_state_test")
            middleware = LeanPrometheusMiddleware(endpoint, config)
            scope = {"type": "http", "method": "GET", "path_template": "/x"}
            await middleware(scope, receive, send)  # type: ignore[arg-type]

    asyncio.run(scenario())
    for name in ("one", "two"):
        labels = {"method": "GET", "path": "/x", "status_code": "200", "app_name": name}
        assert REGISTRY.get_sample_value("lean_state_test_requests_total", labels) == 1


def test_each_app_notes_its_own_database_outage(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    def request(n: int) -> Any:
        url = f"sqlite:///{tmp_path / f'{n}.db'}"
        settings = Settings(database_url=url)  # type: ignore[call-arg]
        ctx = ServiceContext(settings=settings, db=Database(url), hub=MemoryHub())
        app = SimpleNamespace(state=SimpleNamespace(ctx=ctx))
        return SimpleNamespace(app=app, method="GET", url=SimpleNamespace(path="/api/v1/presence"))

    one, two = request(1), request(2)
    with caplog.at_level(logging.WARNING, logger="agentlanes.api"):
        for _ in range(3):
            for r in (one, two):
                answer = _on_unexpected(r, ConnectionRefusedError("refused"))
                assert answer.status_code == 503
    lines = [r for r in caplog.records if "database unavailable" in r.getMessage()]
    assert len(lines) == 2  # one per app, the repeats kept quiet


def test_each_app_notes_its_own_job_outage(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    async def away(ctx: ServiceContext) -> int:
        raise ConnectionRefusedError("refused")

    job = Job("test outage", away, lambda s: 1.0, None)

    def context(n: int) -> ServiceContext:
        url = f"sqlite:///{tmp_path / f'{n}.db'}"
        settings = Settings(database_url=url)  # type: ignore[call-arg]
        return ServiceContext(settings=settings, db=Database(url), hub=MemoryHub())

    one, two = context(1), context(2)

    async def scenario() -> None:
        for _ in range(3):
            for ctx in (one, two):
                await run_job(job, ctx)

    with caplog.at_level(logging.WARNING, logger="agentlanes.jobs"):
        asyncio.run(scenario())
    lines = [r for r in caplog.records if "test outage job" in r.getMessage()]
    assert len(lines) == 2  # one per app, the repeats kept quiet
