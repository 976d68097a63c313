"""Shared fixtures: storage backends (SQLite file, real PostgreSQL), in-process app,
real server processes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import services
from tests.support.app_settings import TEST_APP_SETTINGS
from tests.support.server import ServerProcess

os.environ.setdefault("AGENTLANES_LOG_LEVEL", "warning")


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """One scratch PostgreSQL database for the run; projects keep tests apart."""
    name = services.create_pg_database()
    yield services.pg_url(name)
    services.drop_pg_database(name)


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Both storage backends: a SQLite temp file and the real PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'agentlanes.db'}"
    return str(request.getfixturevalue("pg_database"))


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'agentlanes.db'}"


@pytest.fixture
def redis_url() -> str:
    return services.require_redis()


@pytest.fixture
def make_settings() -> Callable[..., Any]:
    from agentlanes.settings import Settings

    def make(**overrides: Any) -> Settings:
        return Settings(**{**TEST_APP_SETTINGS, **overrides})

    return make


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """Start real `agentlanes serve` processes; all are stopped after the test."""
    started: list[ServerProcess] = []

    def start(env: dict[str, str] | None = None, port: int | None = None) -> ServerProcess:
        full = {
            "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
            "AGENTLANES_LOG_LEVEL": "warning",
        }
        full.update(env or {})
        server = ServerProcess(full, tmp_path, port=port)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()
