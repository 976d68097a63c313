"""Races decided by the database: 32 concurrent claims or acquires against real servers,
on SQLite and PostgreSQL, and a lease race across two server processes on PostgreSQL."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import create_project

pytestmark = pytest.mark.e2e

RACERS = 32


async def _checkin_many(http: httpx.AsyncClient, count: int) -> list[str]:
    replies = await asyncio.gather(
        *(http.post("/api/v1/checkin", json={"agent_name": f"racer-{i}"}) for i in range(count))
    )
    assert all(r.status_code == 201 for r in replies), [r.text for r in replies]
    return [r.json()["session_token"] for r in replies]


def test_32_concurrent_claims_of_one_task_have_exactly_one_winner(
    server_factory: Any, database_url: str
) -> None:
    server = server_factory({"AGENTLANES_DATABASE_URL": database_url})
    key = create_project(server.url)["api_key"]

    async def race() -> tuple[list[httpx.Response], dict[str, Any]]:
        async with httpx.AsyncClient(
            base_url=server.url, headers={"X-API-Key": key}, timeout=60
        ) as http:
            tokens = await _checkin_many(http, RACERS)
            task = (await http.post("/api/v1/tasks", json={"title": "only one"})).json()
            replies = await asyncio.gather(
                *(
                    http.post(
                        f"/api/v1/tasks/{task['task_id']}/claim",
                        headers={"X-Session-Token": token},
                    )
                    for token in tokens
                )
            )
            final = (await http.get(f"/api/v1/tasks/{task['task_id']}")).json()
            events = (await http.get("/api/v1/events/log?limit=1000")).json()["events"]
        return replies, {"task": final, "events": events}

    replies, seen = asyncio.run(race())
    codes = Counter(r.status_code for r in replies)
    assert codes == {200: 1, 409: RACERS - 1}, codes
    assert {r.json()["error"]["code"] for r in replies if r.status_code == 409} == {
        "TASK_ALREADY_CLAIMED"
    }
    [winner] = [r.json() for r in replies if r.status_code == 200]
    assert seen["task"]["claimed_by"] == winner["claimed_by"]
    assert len([e for e in seen["events"] if e["type"] == "task.claimed"]) == 1


def _lease_race(urls: list[str], key: str) -> tuple[list[httpx.Response], list[dict[str, Any]]]:
    async def race() -> tuple[list[httpx.Response], list[dict[str, Any]]]:
        clients = [
            httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}, timeout=60) for url in urls
        ]
        try:
            tokens = await _checkin_many(clients[0], RACERS)
            replies = await asyncio.gather(
                *(
                    clients[i % len(clients)].post(
                        "/api/v1/leases",
                        json={"resource": "deploy:prod"},
                        headers={"X-Session-Token": token},
                    )
                    for i, token in enumerate(tokens)
                )
            )
            leases = (await clients[-1].get("/api/v1/leases")).json()["leases"]
        finally:
            for client in clients:
                await client.aclose()
        return replies, leases

    return asyncio.run(race())


def _assert_one_holder(replies: list[httpx.Response], leases: list[dict[str, Any]]) -> None:
    codes = Counter(r.status_code for r in replies)
    assert codes == {201: 1, 409: RACERS - 1}, codes
    losers = [r.json() for r in replies if r.status_code == 409]
    assert {b["error"]["code"] for b in losers} == {"LEASE_CONFLICT"}
    [winner] = [r.json() for r in replies if r.status_code == 201]
    assert {b["lease_holder"]["session_id"] for b in losers} == {winner["session_id"]}
    assert [lease["lease_id"] for lease in leases] == [winner["lease_id"]]
    assert winner["fencing_token"] == 1


def test_32_concurrent_lease_acquires_have_exactly_one_holder(
    server_factory: Any, database_url: str
) -> None:
    server = server_factory({"AGENTLANES_DATABASE_URL": database_url})
    key = create_project(server.url)["api_key"]
    _assert_one_holder(*_lease_race([server.url], key))


def test_lease_race_across_two_processes_on_postgres(server_factory: Any, pg_database: str) -> None:
    env = {"AGENTLANES_DATABASE_URL": pg_database}
    first = server_factory(env)
    second = server_factory(env)
    key = create_project(first.url)["api_key"]
    replies, leases = _lease_race([first.url, second.url], key)
    _assert_one_holder(replies, leases)
    # Released on one process, granted on the other: the fencing token still grows.
    [winner] = [r.json() for r in replies if r.status_code == 201]
    h = {"X-API-Key": key}
    released = httpx.post(
        f"{first.url}/api/v1/leases/{winner['lease_id']}/release",
        headers={**h, "X-Session-Token": _token_of(replies, winner)},
        timeout=10,
    )
    assert released.status_code == 200, released.text
    other = httpx.post(f"{second.url}/api/v1/checkin", json={"agent_name": "late"}, headers=h)
    again = httpx.post(
        f"{second.url}/api/v1/leases",
        json={"resource": "deploy:prod"},
        headers={**h, "X-Session-Token": other.json()["session_token"]},
        timeout=10,
    )
    assert again.status_code == 201 and again.json()["fencing_token"] == 2


def _token_of(replies: list[httpx.Response], winner: dict[str, Any]) -> str:
    for r in replies:
        if r.status_code == 201:
            return str(r.request.headers["X-Session-Token"])
    raise AssertionError(f"no winner request for {winner}")
