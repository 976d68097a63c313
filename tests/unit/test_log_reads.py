"""The event sockets' reads of the log: identical reads at once run one query."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentlanes.services import log_reads
from agentlanes.services.log_reads import SharedLogReads


class _Db:
    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[None]:
        yield None


def test_identical_reads_at_once_run_one_query(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int, int | None]] = []

    async def events_after(
        db: Any, project_id: int, after: int, limit: int, upto: int | None
    ) -> list[Any]:
        calls.append((project_id, after, upto))
        await asyncio.sleep(0.01)
        return []

    monkeypatch.setattr(log_reads.queries, "events_after", events_after)
    reads = SharedLogReads(_Db())  # type: ignore[arg-type]

    async def scenario() -> None:
        await asyncio.gather(*(reads.read(1, 5, None) for _ in range(10)), reads.read(1, 6, None))
        await reads.read(1, 5, None)  # the first is over: read again

    asyncio.run(scenario())
    assert calls == [(1, 5, None), (1, 6, None), (1, 5, None)]
