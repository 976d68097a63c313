"""The hub: bounded subscriber queues, pokes, catch-up, and the memory and Redis backends."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from pathlib import Path
from typing import Any

import pytest

from agentlanes.hub import POLL, Frame, Subscriber
from agentlanes.hub.memory import MemoryHub
from agentlanes.hub.redis import RedisHub
from tests.support.redis_server import PrivateRedis


def _event(offset: int) -> dict[str, Any]:
    return {"offset": offset, "type": "agent.checkin", "ts": "2026-01-01T00:00:00Z", "data": {}}


async def _drain(subscriber: Subscriber, n: int, timeout: float = 5) -> list[Frame]:
    return [await asyncio.wait_for(subscriber.get(), timeout) for _ in range(n)]


def test_a_full_queue_cuts_the_subscriber_off_once_and_keeps_nothing() -> None:
    sub = Subscriber(project_id=1, maxsize=3)
    calls: list[int] = []
    sub.on_overflow = lambda: calls.append(1)
    for offset in range(1, 10):
        sub.offer(Frame.of(_event(offset)))
    assert calls == [1]
    assert sub.overflowed and len(sub) == 0


def test_pokes_do_not_pile_up() -> None:
    sub = Subscriber(project_id=1, maxsize=10)
    for _ in range(5):
        sub.poke()
    assert len(sub) == 1
    sub.offer(Frame.of(_event(1)))
    sub.poke()
    assert len(sub) == 3


async def test_get_waits_for_the_next_frame() -> None:
    sub = Subscriber(project_id=1, maxsize=10)
    waiting = asyncio.create_task(sub.get())
    await asyncio.sleep(0.01)
    assert not waiting.done()
    sub.offer(Frame.of(_event(7)))
    assert (await asyncio.wait_for(waiting, 1)).offset == 7


async def test_memory_hub_encodes_once_and_delivers_to_the_project_only() -> None:
    hub = MemoryHub()
    mine, other = hub.subscribe(1, 10), hub.subscribe(2, 10)
    await hub.publish(1, [_event(1), _event(2)])
    frames = await _drain(mine, 2)
    assert [json.loads(f.text) for f in frames] == [_event(1), _event(2)]
    assert len(other) == 0
    hub.unsubscribe(mine)
    hub.unsubscribe(other)
    assert hub.subscriber_count() == 0 and hub.subscribed_projects() == []


def test_catch_up_pokes_only_projects_whose_newest_event_never_arrived() -> None:
    hub = MemoryHub()
    a, b = hub.subscribe(1, 10), hub.subscribe(2, 10)
    hub.mark_seen(1, 5)
    hub.mark_seen(2, 9)
    assert hub.catch_up([(1, 5), (2, 11), (3, 100)]) == 1
    assert len(a) == 0 and len(b) == 1
    assert asyncio.run(b.get()) is POLL
    assert hub.catch_up([(2, 11)]) == 0  # remembered


def _prefix() -> str:
    return f"t-{secrets.token_hex(6)}"


async def _until(predicate: Any, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


@pytest.mark.redis
async def test_redis_hub_carries_events_to_the_other_process_exactly_once(
    redis_url: str,
) -> None:
    prefix = _prefix()
    one, two = RedisHub(redis_url, prefix=prefix), RedisHub(redis_url, prefix=prefix)
    await one.start()
    await two.start()
    try:
        await _until(lambda: one._listening and two._listening)
        here, there = one.subscribe(1, 100), two.subscribe(1, 100)
        await one.publish(1, [_event(1)])
        await one.publish(1, [_event(2), _event(3)])
        got_there = await _drain(there, 3)
        assert [f.offset for f in got_there] == [1, 2, 3]
        assert [f.offset for f in await _drain(here, 3)] == [1, 2, 3]
        await asyncio.sleep(0.3)
        assert len(here) == 0 and len(there) == 0  # nothing twice
        assert await one.ready() == (True, "ok")
    finally:
        await one.stop()
        await two.stop()


@pytest.mark.redis
async def test_redis_outage_is_logged_once_and_subscribers_are_poked_when_it_returns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    private = PrivateRedis(tmp_path).start()
    hub = RedisHub(private.url, prefix=_prefix())
    await hub.start()
    try:
        await _until(lambda: hub._listening)
        sub = hub.subscribe(1, 100)
        caplog.set_level(logging.WARNING, logger="agentlanes.hub")
        private.stop()
        for offset in range(1, 20):
            await hub.publish(1, [_event(offset)])
            await asyncio.sleep(0.02)
        ok, word = await hub.ready()
        assert not ok and word.startswith("unreachable")
        # Local subscribers are not held up by the outage.
        assert [f.offset for f in await _drain(sub, 19)] == list(range(1, 20))
        private.start()
        await _until(lambda: hub._listening)
        assert await hub.ready() == (True, "ok")
        assert (await asyncio.wait_for(sub.get(), 5)) is POLL  # re-read the log
        downs = [r for r in caplog.records if "redis unavailable" in r.getMessage()]
        ups = [r for r in caplog.records if "redis available again" in r.getMessage()]
        assert len(downs) == 1 and len(ups) == 1
    finally:
        await hub.stop()
        private.stop()
