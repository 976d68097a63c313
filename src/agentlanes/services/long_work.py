"""Long work, one piece at a time in the process, the smallest first (SPEC "One agent
cannot hurt another").

A request's long work (checking 256 one-kilobyte patterns, a conflict search that left
its project's turn) runs in a worker thread so the event loop goes on; but a thread holds
the interpreter while it runs, and six such threads at once leave the event loop a
seventh of it. So long work takes turns, one thread at a time in the process, and of the
pieces waiting the smallest goes next: a colleague's ordinary search that merely met a
cold cache does not wait behind six hostile ones. Waiting costs nothing; short work stays
where it is.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread

T = TypeVar("T")


class SmallestFirst:
    """One holder at a time; of those waiting, the smallest goes next."""

    def __init__(self) -> None:
        self._busy = False
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    async def acquire(self, size: int) -> None:
        if not self._busy:
            self._busy = True
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (size, next(self._arrivals), turn)
        heapq.heappush(self._waiting, entry)
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled():
                self.release()  # given the turn, then cancelled: the next one's
            else:
                self._waiting.remove(entry)
                heapq.heapify(self._waiting)
            raise

    def release(self) -> None:
        while self._waiting:
            _, _, turn = heapq.heappop(self._waiting)
            if not turn.done():
                turn.set_result(None)
                return
        self._busy = False


_TURNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SmallestFirst] = (
    weakref.WeakKeyDictionary()
)


def _turns() -> SmallestFirst:
    """The process's (the running loop's) turns of long work."""
    loop = asyncio.get_running_loop()
    turns = _TURNS.get(loop)
    if turns is None:
        turns = _TURNS[loop] = SmallestFirst()
    return turns


async def run_long(work: Callable[[], T], size: int) -> T:
    """``work`` in a worker thread, once its turn comes (``size``: how much it reads,
    roughly; the smallest waiting goes first)."""
    turns = _turns()
    await turns.acquire(size)
    try:
        return await anyio.to_thread.run_sync(work)
    finally:
        turns.release()
