"""One in-process app per test module and backend, for the coordination tests.

Starting an app costs about a second; these tests keep apart by creating a project each,
so one app per module (on SQLite and on PostgreSQL) is enough. Import ``client`` into a
test module to use it in place of the per-test one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from agentlanes.api.app import create_app
from agentlanes.settings import Settings
from tests.support.app_settings import TEST_APP_SETTINGS


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient[Any]]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'agentlanes.db'}"
    else:
        url = str(request.getfixturevalue("pg_database"))
    settings = Settings(database_url=url, **TEST_APP_SETTINGS)  # type: ignore[call-arg]
    with TestClient(create_app(settings)) as test_client:
        yield test_client
