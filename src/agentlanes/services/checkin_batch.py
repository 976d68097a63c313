"""Group commit for check-ins: the check-ins of one project that wait for its lock are
decided and written together, in one transaction, and answered once it is committed.

A swarm starts in a burst: hundreds of agents check into one project within a second.
Each check-in must be judged against the state that includes every earlier one (block
mode is exact), so they are serialised by the project's lock; one transaction each spends
most of its time on the lock, the catch-up read, the commit and their round trips, not on
deciding. Here the first check-in to arrive starts a *drain* for its project, which takes
every check-in waiting (at most ``MAX_BATCH``), decides them one after the other in
arrival order (``decide``: each against the live sessions and the ones before it in the
batch), commits once, and then answers each; check-ins that arrive meanwhile form the
next batch. The rules hold:

* each check-in is decided against the state that includes every earlier one;
* an answer is sent only after the transaction holding it is committed (durable), and
  a failed commit fails every check-in of the batch (nothing of it was written);
* events keep their order: offsets are handed out in decision order, and the batch's
  events reach the projection and the hub together after the commit.

A lone check-in is a batch of one: one task switch more than deciding it in place.

A check-in whose search is long leaves the batch (SPEC "One agent cannot hurt another":
one agent's expensive request never makes another of its project wait more than 2 s):
its decision marks it ``left``, it is searched alone outside the batch and its
transaction (``aside``: services/checkin_decisions.py says how), then it queues again,
and the batch that takes it next checks only what changed meanwhile. The others of its
batch are answered at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agentlanes.services.project_tx import ProjectTx

# Check-ins decided in one transaction, at most: a bound on how long the first of them
# waits for its answer behind the others (a few ms each at most).
MAX_BATCH = 64

W = TypeVar("W")
A = TypeVar("A")


@dataclass
class Waiting(Generic[W, A]):
    """One check-in in the queue: what was asked, and where its answer goes."""

    wanted: W
    answer: asyncio.Future[A]
    result: A | None = None
    error: BaseException | None = None
    decided: bool = False
    # Taken out of its batch while it is searched alone; what that search found; set
    # once the batch it left is over (it may queue again only then).
    left: bool = False
    alone: Any = None
    batch_over: asyncio.Event | None = None

    def done(self, result: A) -> None:
        self.result, self.decided = result, True

    def failed(self, error: BaseException) -> None:
        self.error, self.decided = error, True

    def leave(self) -> None:
        """Not decided in this batch: it is searched alone (CheckinBatches.aside)."""
        self.left = True
        self.batch_over = asyncio.Event()


@dataclass
class CheckinBatch(Generic[W, A]):
    """The check-ins taken together, and the transaction they are written in."""

    tx: ProjectTx
    items: list[Waiting[W, A]]
    # Whether others wait on this batch now (more than one check-in in it, or more queued
    # behind it): then a long search leaves it. Read from the worker thread that judges.
    crowded: Callable[[], bool] = lambda: False

    def waiting(self) -> Iterator[Waiting[W, A]]:
        """The check-ins to decide, in arrival order (one whose caller went away is
        skipped: nobody would get its token)."""
        for item in self.items:
            if not item.answer.done():
                yield item


Decide = Callable[[CheckinBatch[W, A]], Awaitable[None]]


class CheckinBatches:
    """The queue of check-ins per project, and the drain running for it (one at most)."""

    def __init__(self, open_tx: Callable[[int], AbstractAsyncContextManager[ProjectTx]]) -> None:
        self._open_tx = open_tx  # ServiceContext.project_tx
        self.max_batch = MAX_BATCH
        self._queues: dict[int, list[Waiting[Any, Any]]] = {}
        self._drains: dict[int, asyncio.Task[None]] = {}
        self._decides: dict[int, Decide[Any, Any]] = {}
        self._aside: set[asyncio.Task[None]] = set()  # check-ins searched alone
        # How many batches and check-ins were decided (the benchmark reads the mean size).
        self.batches = 0
        self.checkins = 0

    async def submit(self, project_id: int, wanted: W, decide: Decide[W, A]) -> A:
        """Queue a check-in; its answer once its batch is committed (or its error)."""
        loop = asyncio.get_running_loop()
        item: Waiting[W, A] = Waiting(wanted, loop.create_future())
        self._decides[project_id] = decide
        self._queue(project_id, item)
        return await item.answer

    def _queue(self, project_id: int, item: Waiting[Any, Any]) -> None:
        self._queues.setdefault(project_id, []).append(item)
        if project_id not in self._drains:
            decide = self._decides[project_id]
            loop = asyncio.get_running_loop()
            self._drains[project_id] = loop.create_task(self._drain(project_id, decide))

    def aside(
        self, project_id: int, item: Waiting[Any, Any], work: Coroutine[Any, Any, None]
    ) -> None:
        """Run ``work`` (the search alone of a check-in that left its batch) outside the
        batches; then the check-in queues again, unless ``work`` failed (its error is
        the answer: a search too long for the budget is a 400)."""
        task = asyncio.get_running_loop().create_task(self._aside_run(project_id, item, work))
        self._aside.add(task)
        task.add_done_callback(self._aside.discard)

    async def _aside_run(
        self, project_id: int, item: Waiting[Any, Any], work: Coroutine[Any, Any, None]
    ) -> None:
        try:
            if item.batch_over is not None:
                # Its batch answers the others first: the search alone would take the
                # interpreter from their writes and answers.
                await item.batch_over.wait()
            if item.answer.done():  # its batch failed: so did it
                work.close()
                return
            await work
        except Exception as exc:
            if not item.answer.done():
                item.answer.set_exception(exc)
            return
        except BaseException:
            item.answer.cancel()  # the server stopping
            raise
        if not item.answer.done():
            item.left = False
            self._queue(project_id, item)

    async def _drain(self, project_id: int, decide: Decide[Any, Any]) -> None:
        try:
            while self._queues.get(project_id):
                await self._run(project_id, decide)
        finally:
            # Empty unless the drain itself was cancelled (the server stopping).
            self._drains.pop(project_id, None)
            for item in self._queues.pop(project_id, []):
                item.answer.cancel()

    def _take(self, project_id: int) -> list[Waiting[Any, Any]]:
        queue = self._queues.get(project_id, [])
        items = queue[: self.max_batch]
        del queue[: self.max_batch]
        return items

    async def _run(self, project_id: int, decide: Decide[Any, Any]) -> None:
        """One batch: the check-ins waiting once the project's lock is held."""
        items: list[Waiting[Any, Any]] = []
        try:
            await self._decide(project_id, decide, items)
        finally:
            for item in items:
                if item.batch_over is not None:
                    item.batch_over.set()

    async def _decide(
        self, project_id: int, decide: Decide[Any, Any], items: list[Waiting[Any, Any]]
    ) -> None:
        try:
            async with self._open_tx(project_id) as tx:
                items[:] = self._take(project_id)
                tx.local_offsets = True
                queued = self._queues.setdefault(project_id, [])
                several = len(items) > 1
                await decide(CheckinBatch(tx, items, lambda: several or bool(queued)))
        except BaseException as exc:  # rolled back: nothing of the batch was written
            for item in items or self._take(project_id):
                if item.answer.done():
                    continue
                if isinstance(exc, Exception):
                    item.answer.set_exception(exc)
                else:  # the drain itself is cancelled (the server stopping)
                    item.answer.cancel()
            if not isinstance(exc, Exception):
                raise
            return
        self.batches += 1
        self.checkins += sum(item.decided for item in items)
        for item in items:
            if item.answer.done() or item.left:
                continue  # a check-in that left is answered after its search alone
            if item.error is not None:
                item.answer.set_exception(item.error)
            elif item.decided:
                item.answer.set_result(item.result)
            else:  # its caller went away before it was decided; nothing was written
                item.answer.cancel()
