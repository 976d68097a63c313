"""A subscriber that stops reading is cut off with 4008 and a reason; the others are not
slowed, and it resumes from the offset the reason names without losing an event."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from tests.e2e.conftest import create_project

pytestmark = pytest.mark.e2e

CHECKINS = 40


def _subscribers(metrics: str) -> float:
    match = re.search(r"^agentlanes_event_subscribers (\S+)$", metrics, re.M)
    assert match, metrics
    return float(match.group(1))


async def _recv(ws: Any, timeout: float = 10) -> dict[str, Any]:
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))  # type: ignore[no-any-return]


def test_a_client_that_stops_reading_is_closed_with_4008_and_others_keep_up(
    server_factory: Any, sqlite_url: str
) -> None:
    server = server_factory(
        {"AGENTLANES_DATABASE_URL": sqlite_url, "AGENTLANES_SUBSCRIBER_QUEUE_SIZE": "8"}
    )
    key = create_project(server.url)["api_key"]
    h = {"X-API-Key": key}
    # Big events (~260 KB each): 40 of them outgrow any kernel buffer.
    big = {
        "agent_name": "bulky",
        "declared_files": [f"area{i}/" + "x" * 1000 for i in range(256)],
    }

    async def scenario() -> None:
        fast = await websockets.connect(
            f"{server.ws_url}/api/v1/events", additional_headers=h, max_size=None
        )
        # The stalled client: a small receive buffer, and it never calls recv() for now
        # (the library stops reading the socket once a frame is queued).
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect(("127.0.0.1", server.port))
        raw.setblocking(False)
        slow = await websockets.connect(
            f"{server.ws_url}/api/v1/events",
            additional_headers=h,
            sock=raw,
            max_queue=1,
            max_size=None,
        )
        assert (await _recv(fast))["type"] == "presence.snapshot"

        async def stalled_then_drained(http: httpx.AsyncClient) -> tuple[list[int], str]:
            # Wait until the server has let go of the stalled socket (only `fast` is
            # left), then read again: what was sent before the cut-off, then the close.
            deadline = time.monotonic() + 60
            while True:
                await http.get("/readyz")  # refreshes the gauge
                if _subscribers((await http.get("/metrics")).text) == 1:
                    break
                assert time.monotonic() < deadline, "the stalled socket was not cut off"
                await asyncio.sleep(0.05)
            offsets: list[int] = []
            with pytest.raises(ConnectionClosed):
                while True:
                    frame = await _recv(slow)
                    if frame["type"] != "presence.snapshot":
                        offsets.append(frame["offset"])
            assert slow.close_code == 4008, slow.close_code
            return offsets, slow.close_reason or ""

        async def read(ws: Any, count: int) -> list[int]:
            return [(await _recv(ws, 60))["offset"] for _ in range(count)]

        async def publish(http: httpx.AsyncClient) -> int:
            for _ in range(CHECKINS):
                assert (await http.post("/api/v1/checkin", json=big)).status_code == 201
            return int((await http.get("/api/v1/events/log?limit=1")).json()["last_offset"])

        async with httpx.AsyncClient(base_url=server.url, headers=h, timeout=30) as http:
            # The fast subscriber reads all along: a check-in, then a check-in that
            # supersedes the previous one (two events) for each of the others.
            expected = 2 * CHECKINS - 1
            fast_reader = asyncio.create_task(read(fast, expected))
            (offsets, reason), last = await asyncio.gather(
                stalled_then_drained(http), publish(http)
            )
        # The fast subscriber got every event while the other one was stuck.
        assert last == expected
        assert await asyncio.wait_for(fast_reader, 60) == list(range(1, last + 1))
        match = re.fullmatch(r"too slow: resume with since=(\d+)", reason)
        assert match, reason
        resume = int(match.group(1))
        assert offsets == list(range(1, resume + 1))
        assert resume < last

        async with websockets.connect(
            f"{server.ws_url}/api/v1/events?since={resume}", additional_headers=h, max_size=None
        ) as again:
            rest = [(await _recv(again))["offset"] for _ in range(last - resume)]
            assert rest == list(range(resume + 1, last + 1))
            done = await _recv(again)
            assert isinstance(done.pop("epoch"), str)  # replay.complete names the history
            assert done == {
                "type": "replay.complete",
                "recovered": True,
                "offset": last,
            }
        await fast.close()

    asyncio.run(scenario())
