"""What a process keeps between requests belongs to its app: two apps built in one
process (as the tests build them) share none of it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from agentlanes.services.context import ServiceContext
from tests.api.conftest import new_project


def _ctx(client: TestClient[Any]) -> ServiceContext:
    ctx = client.app.state.ctx
    assert isinstance(ctx, ServiceContext)
    return ctx


def test_two_apps_keep_their_own_conflict_pairs(
    app_factory: Callable[..., TestClient[Any]], tmp_path: Path
) -> None:
    one = app_factory(database_url=f"sqlite:///{tmp_path / 'one.db'}")
    two = app_factory(database_url=f"sqlite:///{tmp_path / 'two.db'}")
    api = new_project(one)
    new_project(two)
    api.checkin(agent_name="a", declared_files=["x/**"])
    api.checkin(agent_name="b", declared_files=["x/y.py"])
    r = api.get("/conflicts")
    assert r.status_code == 200, r.text
    assert r.json()["total"] == 1
    # Each app's first project: the same id in both databases.
    (project_id,) = _ctx(one).known_projects.project_ids()
    assert project_id == 1

    assert _ctx(one).conflict_pairs.held(project_id)
    assert not _ctx(two).conflict_pairs.held(project_id)
    assert _ctx(one).conflict_pairs is not _ctx(two).conflict_pairs
