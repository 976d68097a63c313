"""A project's long searches take turns, the smallest first (issue 40: a colleague's
ordinary search must not wait behind a hostile one)."""

from __future__ import annotations

import asyncio

from agentlanes.services.long_work import SmallestFirst


def test_the_smallest_waiting_search_goes_next_and_a_cancelled_one_passes_its_turn() -> None:
    async def run() -> list[str]:
        turns = SmallestFirst()
        order: list[str] = []

        async def search(name: str, size: int) -> None:
            await turns.acquire(size)
            order.append(name)
            await asyncio.sleep(0.01)
            turns.release()

        await turns.acquire(1)  # a long one holds the turn
        tasks = [
            asyncio.create_task(search(name, size))
            for name, size in [("hostile", 256_000), ("ordinary", 9), ("middling", 900)]
        ]
        doomed = asyncio.create_task(search("gone", 1))
        await asyncio.sleep(0)
        doomed.cancel()
        turns.release()
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(run()) == ["ordinary", "middling", "hostile"]
