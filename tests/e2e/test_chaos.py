"""Chaos on the real services: two `agentlanes serve` processes on PostgreSQL and Redis.

* PostgreSQL stopped (cleanly, or dead as in a crash) and started again under load (a
  private cluster the test owns, so the machine's shared one is never touched): writes
  in flight get 503 SERVICE_UNAVAILABLE with a Retry-After hint, never a 500; nothing
  acknowledged is lost;
  /readyz reports the outage and recovers; a subscriber's offsets stay gap-free.
* One of the two processes killed (SIGKILL) while subscribers are attached to it: they
  reconnect to the other with ``since`` and get every event once, in order; each session
  whose socket died with it times out once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import websockets

from tests.e2e.conftest import create_project
from tests.support import services
from tests.support.postgres_server import PrivatePostgres
from tests.support.server import ServerProcess

# Each phase waits for what it needs (bounded), so a loaded machine is slower, not red.
pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.redis, pytest.mark.timeout(300)]


def _env(database_url: str, redis_url: str) -> dict[str, str]:
    return {
        "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
        "AGENTLANES_LOG_LEVEL": "warning",
        "AGENTLANES_DATABASE_URL": database_url,
        "AGENTLANES_REDIS_URL": redis_url,
        "AGENTLANES_REDIS_CHANNEL_PREFIX": f"t-{secrets.token_hex(6)}",
        "AGENTLANES_EXPIRY_CHECK_SECONDS": "0.2",
        "AGENTLANES_ATTACH_REFRESH_SECONDS": "0.3",
        "AGENTLANES_HUB_CATCH_UP_SECONDS": "0.5",
    }


@dataclass
class ResumingSubscriber:
    """A client that keeps one event stream across closes and dead servers: it starts
    with a snapshot, and after any close reconnects (to the next server when one is
    gone) with ``since`` = the last offset it received, as the SPEC tells clients to."""

    servers: list[ServerProcess]
    key: str
    events: list[dict[str, Any]] = field(default_factory=list)
    snapshots: list[int] = field(default_factory=list)
    replays: list[dict[str, Any]] = field(default_factory=list)
    closes: list[tuple[int | None, str]] = field(default_factory=list)
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    ws: Any = None

    @property
    def last(self) -> int:
        return int(self.events[-1]["offset"]) if self.events else (self.snapshots or [0])[-1]

    async def run(self, stop: asyncio.Event) -> None:
        turn = 0
        while not stop.is_set():
            server = self.servers[turn % len(self.servers)]
            query = f"?since={self.last}" if self.snapshots else ""
            try:
                async with websockets.connect(
                    f"{server.ws_url}/api/v1/events{query}",
                    additional_headers={"X-API-Key": self.key},
                    open_timeout=3,
                ) as ws:
                    self.ws = ws
                    async for raw in ws:
                        self._take(json.loads(raw))
                    self.closes.append((ws.close_code, ws.close_reason))
            except websockets.ConnectionClosed as exc:
                self.closes.append((exc.rcvd.code if exc.rcvd else None, str(exc)))
            except (OSError, TimeoutError, websockets.InvalidStatus):
                turn += 1  # that server is gone: try the other
            finally:
                self.ws = None
            await asyncio.sleep(0.1)

    def _take(self, frame: dict[str, Any]) -> None:
        if frame["type"] == "presence.snapshot":
            self.snapshots.append(int(frame["offset"]))
            self.connected.set()
        elif frame["type"] == "replay.complete":
            self.replays.append(frame)
            self.connected.set()
        elif frame["type"] == "error":
            raise AssertionError(f"error frame: {frame}")
        elif "offset" in frame:
            self.events.append(frame)
        # else: answers to our own frames (attached, pong)


def _last_offset(server: ServerProcess, key: str) -> int:
    r = httpx.get(f"{server.url}/api/v1/events/log?limit=1", headers={"X-API-Key": key})
    return int(r.json()["last_offset"])


def _event_log(server: ServerProcess, key: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    while True:
        r = httpx.get(
            f"{server.url}/api/v1/events/log",
            params={"since": len(events), "limit": 1000},
            headers={"X-API-Key": key},
            timeout=10,
        )
        page = r.json()["events"]
        if not page:
            return events
        events.extend(page)


async def _eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


def _assert_exact_stream(sub: ResumingSubscriber, last: int) -> None:
    offsets = [e["offset"] for e in sub.events]
    first = sub.snapshots[0] + 1
    # No gap, no duplicate, in order.
    assert offsets == list(range(first, last + 1)), (offsets[:5], offsets[-5:], last)
    # Every reconnection resumed from the log (no fresh snapshot after the first).
    assert len(sub.snapshots) == 1
    assert all(r["recovered"] is True for r in sub.replays)


# -- PostgreSQL restarted under load -------------------------------------------------------


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    pg = PrivatePostgres().init().start()
    try:
        yield pg
    finally:
        pg.destroy()


RETRY_AFTER = "3"  # the setting unavailable_retry_after_seconds, not its default


@dataclass
class Outcomes:
    """What the writers were told: acknowledged writes, clean refusals, anything else."""

    sessions: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    refused: int = 0
    bad: list[str] = field(default_factory=list)

    def take(self, r: httpx.Response, kind: str) -> None:
        if r.status_code == 201:
            body = r.json()
            if kind == "session":
                self.sessions.append(body["session_id"])
            else:
                self.tasks.append(body["task_id"])
        elif r.status_code == 503:
            body = r.json()
            if body.get("error", {}).get("code") != "SERVICE_UNAVAILABLE":
                self.bad.append(f"503 without SERVICE_UNAVAILABLE: {r.text[:200]}")
            elif r.headers.get("retry-after") != RETRY_AFTER:
                self.bad.append(f"503 without Retry-After: {RETRY_AFTER}: {dict(r.headers)}")
            else:
                self.refused += 1
        else:
            self.bad.append(f"{r.status_code}: {r.text[:300]}")
        if "Traceback" in r.text:
            self.bad.append(f"traceback in a response: {r.text[:300]}")


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_postgresql_restart_under_load_loses_nothing_acknowledged(
    server_factory: Callable[..., ServerProcess], private_postgres: PrivatePostgres, mode: str
) -> None:
    """``fast``: PostgreSQL rolls back open transactions and closes every connection (a
    clean restart); ``immediate``: it stops dead and recovers from its WAL at the next
    start (a crash)."""
    redis_url = services.require_redis()
    env = _env(private_postgres.create_database("agentlanes"), redis_url)
    env["AGENTLANES_UNAVAILABLE_RETRY_AFTER_SECONDS"] = RETRY_AFTER
    a, b = server_factory(env), server_factory(env)
    key = create_project(a.url)["api_key"]
    h = {"X-API-Key": key}
    out = Outcomes()
    ready_seen: dict[str, set[int]] = {a.url: set(), b.url: set()}
    ready_words: list[str] = []

    async def writer(n: int, stop: asyncio.Event) -> None:
        i = 0
        async with httpx.AsyncClient(headers=h, timeout=15) as http:
            while not stop.is_set():
                server = (a, b)[(n + i) % 2]
                if i % 3 == 2:
                    r = await http.post(f"{server.url}/api/v1/tasks", json={"title": f"t{n}-{i}"})
                    out.take(r, "task")
                else:
                    r = await http.post(
                        f"{server.url}/api/v1/checkin", json={"agent_name": f"w{n}-{i}"}
                    )
                    out.take(r, "session")
                i += 1
                await asyncio.sleep(0.02)

    async def probe(stop: asyncio.Event) -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            while not stop.is_set():
                for server in (a, b):
                    r = await http.get(f"{server.url}/readyz")
                    ready_seen[server.url].add(r.status_code)
                    if r.status_code == 503:
                        ready_words.append(r.json()["checks"]["database"])
                await asyncio.sleep(0.1)

    async def scenario() -> ResumingSubscriber:
        sub = ResumingSubscriber([a, b], key)
        stop, stop_sub = asyncio.Event(), asyncio.Event()
        sub_task = asyncio.create_task(sub.run(stop_sub))
        await asyncio.wait_for(sub.connected.wait(), 10)
        tasks = [asyncio.create_task(writer(n, stop)) for n in range(6)]
        tasks.append(asyncio.create_task(probe(stop)))
        # Timed by what the writers see, not by the clock: the machine may be slow.
        await _eventually(lambda: len(out.sessions) >= 20, 30, "writes before the outage")
        await asyncio.to_thread(private_postgres.stop, mode)
        await _eventually(lambda: out.refused >= 10, 30, "writes refused during the outage")
        # A socket opened meanwhile to replay from the log is told to come back later,
        # with a close frame that says from where.
        url = f"{a.ws_url}/api/v1/events?since=1"
        async with websockets.connect(url, additional_headers=h) as ws:
            with pytest.raises(websockets.ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            assert ws.close_code == 1013, a.log()[-4000:]
            assert ws.close_reason in (
                "database unavailable: try again with since=1",
                "database unavailable: try again",  # the key could not be checked either
            )
        await _eventually(
            lambda: all(503 in seen for seen in ready_seen.values()),
            10,
            "/readyz to report the outage",
        )
        await asyncio.to_thread(private_postgres.start)
        async with httpx.AsyncClient(timeout=10) as http:
            deadline = time.monotonic() + 30
            for server in (a, b):
                while (await http.get(f"{server.url}/readyz")).status_code != 200:
                    assert time.monotonic() < deadline, "/readyz did not recover"
                    await asyncio.sleep(0.2)
        acked_at_recovery = len(out.sessions)
        await _eventually(
            lambda: len(out.sessions) >= acked_at_recovery + 20, 30, "writes after the restart"
        )
        stop.set()
        await asyncio.gather(*tasks)
        last = _last_offset(b, key)
        await _eventually(lambda: sub.last >= last, 20, "the subscriber to catch up")
        stop_sub.set()
        if sub.ws is not None:
            await sub.ws.close()
        await asyncio.wait_for(sub_task, 10)
        return sub

    sub = asyncio.run(scenario())
    print(
        f"PostgreSQL {mode} restart: {len(out.sessions)} check-ins and {len(out.tasks)} tasks "
        f"acknowledged, {out.refused} calls refused with 503, {len(out.bad)} other answers"
    )
    assert out.bad == []
    assert all(word.startswith("unreachable") for word in ready_words)
    # Nothing acknowledged is lost: every session and task answered 201 is there, and
    # announced in the log, whose offsets have no gap.
    log = _event_log(b, key)
    assert [e["offset"] for e in log] == list(range(1, len(log) + 1))
    logged_sessions = {
        e["data"]["session"]["session_id"] for e in log if e["type"] == "agent.checkin"
    }
    assert set(out.sessions) <= logged_sessions
    presence = httpx.get(f"{a.url}/api/v1/presence", headers=h).json()
    assert set(out.sessions) <= {s["session_id"] for s in presence["sessions"]}
    for task_id in out.tasks:
        assert httpx.get(f"{b.url}/api/v1/tasks/{task_id}", headers=h).status_code == 200
    _assert_exact_stream(sub, len(log))
    for server in (a, b):
        text = server.log()
        # An outage is not a bug: no traceback, from the API or the scheduled jobs.
        assert "Traceback" not in text, text[-3000:]
        assert "database unavailable" in text  # logged once in a while, not per call
        assert text.count("database unavailable") < 50


# -- one of two processes killed under its subscribers ------------------------------------


def test_subscribers_of_a_killed_process_resume_on_the_other_without_gap_or_duplicate(
    server_factory: Callable[..., ServerProcess], pg_database: str
) -> None:
    env = _env(pg_database, services.require_redis())
    a, b = server_factory(env), server_factory(env)
    key = create_project(a.url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=2)["api_key"]
    h = {"X-API-Key": key}
    acked: list[str] = []

    async def writer(n: int, stop: asyncio.Event) -> None:
        i = 0
        async with httpx.AsyncClient(headers=h, timeout=5) as http:
            while not stop.is_set():
                server = (a, b)[(n + i) % 2]
                with contextlib.suppress(httpx.TransportError):  # the killed one
                    r = await http.post(
                        f"{server.url}/api/v1/checkin", json={"agent_name": f"w{n}-{i}"}
                    )
                    assert r.status_code == 201, r.text
                    acked.append(r.json()["session_id"])
                i += 1
                await asyncio.sleep(0.03)

    async def scenario() -> tuple[list[ResumingSubscriber], list[str]]:
        subs = [ResumingSubscriber([a, b], key) for _ in range(4)]
        stop_subs, stop = asyncio.Event(), asyncio.Event()
        runs = [asyncio.create_task(sub.run(stop_subs)) for sub in subs]
        for sub in subs:
            await asyncio.wait_for(sub.connected.wait(), 10)
        # Each subscriber holds a session attached on A: A keeps it alive, until A dies.
        attached: list[str] = []
        async with httpx.AsyncClient(headers=h, timeout=10) as http:
            for i, sub in enumerate(subs):
                r = await http.post(f"{b.url}/api/v1/checkin", json={"agent_name": f"held{i}"})
                session = r.json()
                attached.append(session["session_id"])
                await sub.ws.send(
                    json.dumps({"type": "attach", "session_token": session["session_token"]})
                )
        writers = [asyncio.create_task(writer(n, stop)) for n in range(3)]
        await _eventually(lambda: len(acked) >= 10, 30, "writes before the kill")
        a.kill()
        killed_at = [len(sub.events) for sub in subs]
        at_kill = len(acked)
        await _eventually(lambda: len(acked) >= at_kill + 10, 30, "writes after the kill")
        stop.set()
        await asyncio.gather(*writers)

        def all_timed_out() -> bool:
            # Every session in the log: the acknowledged ones, and any check-in A had
            # committed when it was killed but could no longer answer.
            log = _event_log(b, key)
            checked_in = {
                e["data"]["session"]["session_id"] for e in log if e["type"] == "agent.checkin"
            }
            timed_out = {e["data"]["session_id"] for e in log if e["type"] == "agent.timeout"}
            return checked_in <= timed_out

        await _eventually(all_timed_out, 30, "every session to time out")
        await asyncio.sleep(1.0)  # B's expiry job keeps running: still once each
        last = _last_offset(b, key)
        await _eventually(lambda: all(s.last >= last for s in subs), 20, "subscribers")
        stop_subs.set()
        for sub in subs:
            if sub.ws is not None:
                await sub.ws.close()
        await asyncio.gather(*runs)
        for sub, before in zip(subs, killed_at, strict=True):
            assert len(sub.events) > before  # they kept receiving after the kill
        return subs, attached

    subs, attached = asyncio.run(scenario())
    log = _event_log(b, key)
    assert [e["offset"] for e in log] == list(range(1, len(log) + 1))
    for sub in subs:
        _assert_exact_stream(sub, len(log))
        assert sub.replays, "the subscriber never resumed with since"
        # The socket to the killed process died without a close frame: that is the crash.
        assert any(code in (None, 1006) for code, _ in sub.closes)
    # Each expiry happened once, for every session, attached or not.
    checked_in = {e["data"]["session"]["session_id"] for e in log if e["type"] == "agent.checkin"}
    assert set(acked) | set(attached) <= checked_in  # nothing acknowledged is lost
    timeouts = Counter(e["data"]["session_id"] for e in log if e["type"] == "agent.timeout")
    assert set(timeouts) == checked_in
    assert set(timeouts.values()) == {1}
    assert "Traceback" not in b.log(), b.log()[-3000:]
