"""Issue 24, findings 1 and 2: a pattern whose brace expansion is huge, or empty, is a 400
wherever patterns enter (check-in, status, conflicts/check, task paths), before anything
is expanded; a row stored before the rule (``{,}``) fails no read."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any

import pytest
from litestar.testing import TestClient

from agentlanes.domain.globs.overlap import clear_verdict_caches
from tests.api.conftest import Api, new_project

HUGE = ["{1..1000000000000000000}", "{a,b}" * 40, "src/{" + "{x,y}," * 70 + "z}/**"]
EMPTY = ["{,}", "{}", "{{,},{,}}", "src/{}/a.py"]


def _refused(r: Any, field: str, pattern: str, fragment: str) -> None:
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_ERROR", error
    assert error["message"].startswith(f"{field}: "), error
    assert fragment in error["message"] and pattern[:40] in error["message"], error


def _each_entry(api: Api, token: str, pattern: str) -> list[tuple[Any, str]]:
    return [
        (api.post("/checkin", {"declared_files": ["ok/**", pattern]}), "declared_files"),
        (api.post("/status", {"declared_files": [pattern]}, token=token), "declared_files"),
        (api.post("/conflicts/check", {"patterns": [pattern]}), "patterns"),
        (api.post("/tasks", {"title": "t", "paths": [pattern]}), "paths"),
    ]


@pytest.mark.parametrize("pattern", HUGE)
def test_a_huge_brace_expansion_is_a_400_everywhere_at_once(api: Api, pattern: str) -> None:
    token = api.checkin(agent_name="holder", declared_files=["src/**"])["session_token"]
    started = time.perf_counter()
    for r, field in _each_entry(api, token, pattern):
        _refused(r, field, pattern, "more than 64 alternatives")
    assert time.perf_counter() - started < 2


@pytest.mark.parametrize("pattern", EMPTY)
def test_a_pattern_that_expands_to_nothing_is_a_400_everywhere(api: Api, pattern: str) -> None:
    token = api.checkin(agent_name="holder", declared_files=["src/**"])["session_token"]
    for r, field in _each_entry(api, token, pattern):
        _refused(r, field, pattern, "brace")
    # Nothing was stored: the ready list and the task board still answer.
    assert api.get("/tasks/ready").status_code == 200
    assert api.get("/board/tasks").status_code == 200


def test_the_limit_is_the_setting(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    api = new_project(app_factory(database_url=sqlite_url, max_brace_alternatives=4))
    assert api.post("/conflicts/check", {"patterns": ["{a,b}{c,d}"]}).status_code == 200
    r = api.post("/conflicts/check", {"patterns": ["{a,b,c}{d,e}"]})
    _refused(r, "patterns", "{a,b,c}{d,e}", "more than 4 alternatives")


def test_a_stored_empty_pattern_fails_no_read(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    """A pending task stored with '{,}' (before it was refused) made the ready list and
    the task board 500 for the whole project; now that path claims nothing."""
    api = new_project(app_factory(database_url=sqlite_url))
    holder = api.checkin(agent_name="holder", declared_files=["lib/**"])
    task = api.post("/tasks", {"title": "t", "paths": ["lib/a.py"]}).json()
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        db.execute(
            "UPDATE tasks SET paths = ? WHERE id = ?", (json.dumps(["{,}"]), task["task_id"])
        )
    for r in (
        api.get("/tasks/ready"),
        api.get("/board/tasks"),
        api.get("/tasks/ready", holder["session_token"]),
    ):
        assert r.status_code == 200, r.text
    assert task["task_id"] in [t["task_id"] for t in api.get("/tasks/ready").json()["tasks"]]


LONG = "x" * 1000


def _timed(call: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    r = call()
    return r, time.perf_counter() - started


def test_news_of_long_near_duplicate_patterns_answers_in_time(api: Api) -> None:
    """Review finding: the news compared every pair of two sessions' patterns on the event
    loop, with no bound (256 x 16 one-kilobyte patterns: seconds per event). Each bob
    below was let in while alice claimed one file; alice then claims 256 long patterns,
    and her news of the bobs (a check-in and a checkout each) answers within 2 s: an item
    counts at most PAIRS_MAX pairs, and is shortened when its comparisons run out of time."""
    token = api.checkin(agent_name="alice", declared_files=["README.md"])["session_token"]
    r = api.get("/news", token=token)
    assert r.status_code == 200, r.text
    cursor = r.json()["cursor"]
    for n in range(4):
        patterns = [f"*{LONG}{n}{i:03d}" for i in range(16)]
        bob = api.checkin(agent_name=f"bob{n}", declared_files=patterns)["session_token"]
        assert api.post("/checkout", {}, token=bob).status_code == 200
    mine = [f"{LONG}{i:04d}*" for i in range(256)]
    r = api.post("/status", {"declared_files": mine}, token=token)
    assert r.status_code == 200, r.text
    clear_verdict_caches()  # as a process that has not compared these yet
    r, took = _timed(lambda: api.get(f"/news?after={cursor}", token=token))
    assert r.status_code == 200, r.text
    assert took < 2, took
    items = r.json()["items"]
    assert items and all(i["kind"].startswith("overlap.") for i in items), items
    assert all("or more" in i["text"] or "in time" in i["text"] for i in items), items


def test_the_pair_list_answers_in_time_and_names_what_it_has_not_compared(api: Api) -> None:
    """Review finding: GET /conflicts decided every live session against the others on the
    event loop with no deadline and no file cap (each check-in below stays within its own
    conflict_search_seconds, but their sum did not). Now it decides in a worker thread by
    conflict_search_seconds, and ``pending`` counts the sessions it has not compared yet;
    the next requests go on with them."""
    admitted = 0
    for s in range(10):
        patterns = [f"{LONG}{s}{i:03d}*" if s % 2 else f"*{LONG}{s}{i:03d}" for i in range(12)]
        r = api.post("/checkin", {"agent_name": f"a{s}", "declared_files": patterns})
        assert r.status_code in (201, 400), r.text
        admitted += r.status_code == 201
    assert admitted >= 6
    clear_verdict_caches()  # as a process that has not compared these yet
    r, took = _timed(lambda: api.get("/conflicts"))
    assert r.status_code == 200, r.text
    assert took < 2, took
    answer = r.json()
    assert answer["sessions"] == admitted and 0 <= answer["pending"] <= admitted
    for _ in range(20):  # later requests go on with the pending ones
        if answer["pending"] == 0:
            break
        answer = api.get("/conflicts").json()
    assert answer["pending"] == 0
    assert all(p["files_total"] <= 10 for p in answer["pairs"])
