"""Issue 24, finding 3: an answer that lists conflicts is bounded (answer_max_conflicts,
answer_max_files, conflicts_total, truncated; certain ones first), the rest is paged at
GET /sessions/{id}/conflicts, and a search past conflict_search_seconds is cut off."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import Api, new_project


def _small(app_factory: Callable[..., TestClient[Any]], url: str, **body: Any) -> Api:
    client = app_factory(database_url=url, answer_max_conflicts=3, answer_max_files=2)
    return new_project(client, **body)


def _swarm(api: Api) -> list[str]:
    """Five sessions, oldest first: three overlap 'src/**' only if a literal is a
    directory, two for certain, each through four patterns."""
    ids = []
    for i in range(3):
        ids.append(api.checkin(agent_name=f"maybe{i}", declared_files=["src"])["session_id"])
    for i in range(2):
        files = [f"src/{i}/a{n}.py" for n in range(4)]
        ids.append(api.checkin(agent_name=f"sure{i}", declared_files=files)["session_id"])
    return ids


def test_every_answer_that_lists_conflicts_is_bounded(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    api = _small(app_factory, sqlite_url)
    ids = _swarm(api)
    body = api.checkin(agent_name="me", declared_files=["src/**/*.py"])
    assert body["conflicts_total"] == 5 and body["truncated"] is True
    shown = [(c["agent_name"], c["certain"]) for c in body["conflicts"]]
    # Certain ones first, then oldest first; three of five.
    assert shown == [("sure0", True), ("sure1", True), ("maybe0", False)]
    for c in body["conflicts"][:2]:
        assert len(c["overlapping_files"]) == 2 and c["files_truncated"] is True
    assert "files_truncated" not in body["conflicts"][2]
    check = api.post("/conflicts/check", {"patterns": ["src/**"]}).json()
    assert check["conflicts_total"] == 6 and len(check["conflicts"]) == 3 and check["truncated"]
    small = api.post("/conflicts/check", {"paths": ["src/1/a0.py"]}).json()
    assert small["conflicts_total"] == 5 and small["truncated"] is True
    none = api.post("/conflicts/check", {"patterns": ["docs/**"]}).json()
    assert none == {"conflicts": [], "conflicts_total": 0, "truncated": False}
    status = api.post("/status", {"declared_files": ["src/0/**"]}, token=body["session_token"])
    assert status.status_code == 200
    assert status.json()["conflicts_total"] == 4 and status.json()["truncated"] is True
    assert ids


def test_the_rest_is_paged_by_cursor(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    api = _small(app_factory, sqlite_url)
    _swarm(api)
    me = api.checkin(agent_name="me", declared_files=["src/**/*.py"])
    url = f"/sessions/{me['session_id']}/conflicts"
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        r = api.get(url + (f"?limit=2&cursor={cursor}" if cursor else "?limit=2"))
        assert r.status_code == 200, r.text
        page = r.json()
        assert page["conflicts_total"] == 5 and len(page["conflicts"]) <= 2
        seen += [c["agent_name"] for c in page["conflicts"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == ["sure0", "sure1", "maybe0", "maybe1", "maybe2"]
    # The default page and the cap are answer_max_conflicts (3 here).
    first = api.get(url + "?limit=500").json()
    assert len(first["conflicts"]) == 3 and first["next_cursor"] == "3"
    # '²' is a digit to Python (int() refuses it): a 400, never a 500.
    bad_cursors = ("?cursor=x", "?cursor=-1", "?cursor=%C2%B2", "?cursor=%201")
    for bad in (*bad_cursors, "?limit=0", "?limit=501"):
        r = api.get(url + bad)
        assert r.status_code == 400, (bad, r.text)


def test_the_409_of_block_mode_is_bounded(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    api = _small(app_factory, sqlite_url, conflict_mode="block")
    for i in range(5):
        api.checkin(agent_name=f"a{i}", declared_files=[f"lib/{i}/**"])
    r = api.post("/checkin", {"agent_name": "me", "declared_files": ["lib/**"]})
    assert r.status_code == 409, r.text
    body = r.json()
    assert len(body["conflicts"]) == 3 and body["conflicts_total"] == 5
    assert body["truncated"] is True
    assert "5 live session(s) overlap for certain" in body["error"]["message"]


def test_a_search_past_its_budget_is_cut_off_with_a_400(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    """256 one-kilobyte patterns against 256 similar ones: every pair overlaps, and each
    decision costs milliseconds (the issue's check-in took 16.6 s and answered 268 MB)."""
    client = app_factory(database_url=sqlite_url, conflict_search_seconds=0.3)
    api = new_project(client)
    body = "x" * 1000
    api.checkin(agent_name="holder", declared_files=[f"{body}{i:04d}*" for i in range(256)])
    started = time.monotonic()
    r = api.post("/checkin", {"declared_files": [f"*{body}{i:04d}" for i in range(256)]})
    assert time.monotonic() - started < 2
    assert r.status_code == 400, r.text[:500]
    assert r.json()["field"] == "declared_files"
    assert "conflict_search_seconds" in r.json()["error"]["message"]
