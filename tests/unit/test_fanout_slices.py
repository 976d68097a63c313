"""The hub fans an event out in steps that give the event loop back (issue 40: one event
written to 10,000 sockets held the loop ~0.1 s in one stretch)."""

from __future__ import annotations

import asyncio

from agentlanes.hub.base import FANOUT_SLICE, Frame
from agentlanes.hub.memory import MemoryHub


def test_a_large_fan_out_gives_the_loop_back_between_steps_and_keeps_the_order() -> None:
    async def run() -> None:
        hub = MemoryHub()
        got: list[list[int]] = []
        subscribers = []
        for _ in range(4 * FANOUT_SLICE + 1):
            subscriber = hub.subscribe(7, 100)
            seen: list[int] = []
            got.append(seen)
            subscriber.direct = lambda frame, seen=seen: seen.append(frame.offset) is None
            subscribers.append(subscriber)
        reached_when_loop_ran: list[int] = []
        hub.deliver_local(7, [Frame(1, "{}")])
        hub.deliver_local(7, [Frame(2, "{}"), Frame(3, "{}")])  # while the first goes out
        # Another callback, due after the fan-out's first step.
        asyncio.get_running_loop().call_soon(
            lambda: reached_when_loop_ran.append(sum(1 for s in got if s))
        )
        for _ in range(100):
            if all(len(s) == 3 for s in got):
                break
            await asyncio.sleep(0)
        assert all(s == [1, 2, 3] for s in got), {tuple(s) for s in got}
        # It ran after the first step, long before the last socket.
        assert reached_when_loop_ran and 0 < reached_when_loop_ran[0] <= FANOUT_SLICE

    asyncio.run(run())


def test_a_small_fan_out_is_done_at_once() -> None:
    async def run() -> None:
        hub = MemoryHub()
        subscriber = hub.subscribe(7, 100)
        hub.deliver_local(7, [Frame(1, "{}")])
        assert len(subscriber) == 1

    asyncio.run(run())
