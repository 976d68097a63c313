"""The event socket under abuse, against a real `agentlanes serve` process.

Garbage, binary, deeply nested and oversized frames, bad ``since``, mixed and foreign
credentials, and hundreds of sockets opened and dropped: every time the client learns
what happened (an error frame, or a close frame with a code and a reason: never a bare
1006), the server stays ready, a normal subscriber keeps getting events, and nothing is
kept for the sockets that are gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from tests.e2e.conftest import create_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e

MAX_BODY = 2_000_000  # the shipped default of max_body_bytes, which also caps a frame


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp("abuse")
    proc = ServerProcess(
        {
            "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
            "AGENTLANES_LOG_LEVEL": "info",
            "AGENTLANES_DATABASE_URL": f"sqlite:///{workdir / 'agentlanes.db'}",
            # The churn below refuses 400 credentials from one address within a minute:
            # what is tested here is what dropped sockets leave behind, not the limit on
            # refused credentials (tests/e2e/test_hostile_input.py tests that).
            "AGENTLANES_SOCKET_BAD_CREDENTIALS_PER_MINUTE": "100000",
        },
        workdir,
    )
    proc.start()
    yield proc
    proc.stop()


async def _recv(ws: ClientConnection, timeout: float = 5) -> dict[str, Any]:
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))  # type: ignore[no-any-return]


async def _closed(ws: ClientConnection, timeout: float = 5) -> list[dict[str, Any]]:
    """Frames until the server closes the socket; the close must carry a code and a reason."""
    frames: list[dict[str, Any]] = []
    with pytest.raises(websockets.ConnectionClosed):
        while True:
            frames.append(await _recv(ws, timeout))
    assert ws.close_code is not None and ws.close_code != 1006
    assert ws.close_reason, f"close {ws.close_code} without a reason"
    return frames


async def _send_until_closed(ws: ClientConnection, frame: str | bytes) -> None:
    """Send a frame the server may refuse (and close on) before it has all arrived."""
    with contextlib.suppress(websockets.ConnectionClosed):
        await ws.send(frame)


async def _still_answers(ws: ClientConnection) -> None:
    await ws.send(json.dumps({"type": "ping"}))
    assert await _recv(ws) == {"type": "pong"}


def _healthy(server: ServerProcess) -> None:
    assert server.proc is not None and server.proc.poll() is None
    assert httpx.get(f"{server.url}/readyz", timeout=5).status_code == 200


def _subscribers(server: ServerProcess) -> int:
    """Open event sockets in the server, as its metrics report them."""
    httpx.get(f"{server.url}/readyz", timeout=5)  # refreshes the gauge
    text = httpx.get(f"{server.url}/metrics", timeout=5).text
    match = re.search(r"^agentlanes_event_subscribers (\S+)$", text, re.MULTILINE)
    assert match, "no agentlanes_event_subscribers in /metrics"
    return int(float(match.group(1)))


def _rss_kib(server: ServerProcess) -> int:
    assert server.proc is not None
    status = Path(f"/proc/{server.proc.pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]


def _checkin(server: ServerProcess, key: str, name: str) -> dict[str, Any]:
    r = httpx.post(
        f"{server.url}/api/v1/checkin", json={"agent_name": name}, headers={"X-API-Key": key}
    )
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def _browser_token(server: ServerProcess, key: str) -> str:
    r = httpx.post(f"{server.url}/api/v1/realtime/token", headers={"X-API-Key": key})
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def test_bad_frames_get_an_error_frame_and_the_socket_keeps_working(
    server: ServerProcess,
) -> None:
    key = create_project(server.url)["api_key"]

    async def scenario() -> None:
        url = f"{server.ws_url}/api/v1/events"
        async with websockets.connect(url, additional_headers={"X-API-Key": key}) as ws:
            assert (await _recv(ws))["type"] == "presence.snapshot"
            cases: list[tuple[str | bytes, str]] = [
                ("this is { not json", "frame is not JSON"),
                ("[" * 1500, "frame is nested too deeply"),
                ('{"a":' * 5000 + "1" + "}" * 5000, "frame is nested too deeply"),
                (b"\xff\xfe\x00\x01 binary garbage", "frame is not JSON"),
                ("", "frame is not JSON"),
                ('"a string"', "type must be ping, attach or news"),
                ('{"type": "subscribe"}', "type must be ping, attach or news"),
                ('{"type": "attach"}', "session_token: required, a string"),
                ('{"type": "attach", "session_token": 12}', "session_token: required, a string"),
                ("x" * (MAX_BODY - 10), "frame is not JSON"),  # under the limit: parsed
            ]
            for frame, message in cases:
                await ws.send(frame)
                reply = await _recv(ws)
                assert reply["type"] == "error", (frame[:20], reply)
                assert reply["error"]["code"] == "VALIDATION_ERROR"
                assert reply["error"]["message"] == message
                await _still_answers(ws)
            # A binary frame holding good JSON is read like text.
            await ws.send(b'{"type": "ping"}')
            assert await _recv(ws) == {"type": "pong"}

    asyncio.run(scenario())
    _healthy(server)
    assert "RecursionError" not in server.log()
    assert "Traceback" not in server.log()


def test_a_frame_over_the_body_limit_closes_with_1009(server: ServerProcess) -> None:
    key = create_project(server.url)["api_key"]

    async def scenario() -> None:
        url = f"{server.ws_url}/api/v1/events"
        async with websockets.connect(
            url, additional_headers={"X-API-Key": key}, max_size=None
        ) as ws:
            await _recv(ws)
            await _send_until_closed(ws, "x" * (MAX_BODY + 1))
            await _closed(ws)
            assert ws.close_code == 1009
            assert str(MAX_BODY) in ws.close_reason
        async with websockets.connect(url, additional_headers={"X-API-Key": key}) as ws:
            await _recv(ws)
            await _send_until_closed(ws, b"\x00" * (16 * 1024 * 1024))
            await _closed(ws)
            assert ws.close_code == 1009

    asyncio.run(scenario())
    _healthy(server)


def test_a_text_frame_that_is_not_utf8_closes_with_1007_and_no_traceback(
    server: ServerProcess,
) -> None:
    key = create_project(server.url)["api_key"]

    async def scenario() -> None:
        url = f"{server.ws_url}/api/v1/events"
        for _ in range(20):  # repeated: none of them may leave a traceback in the log
            async with websockets.connect(url, additional_headers={"X-API-Key": key}) as ws:
                await _recv(ws)
                # Below the client library's str API, which cannot send such a frame.
                ws.protocol.send_text(b'{"type": "ping"\xff\xfe}')
                ws.send_data()
                await _closed(ws)
                assert ws.close_code == 1007
                assert ws.close_reason == "text frame is not valid UTF-8"

    asyncio.run(scenario())
    _healthy(server)
    assert "Traceback" not in server.log()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("since=abc", "since: must be an integer"),
        ("since=-1", "since: must be a non-negative offset"),
        ("since=1.5", "since: must be an integer"),
        ("since=99999999999999999999999999", "since: is out of range"),
        ("since=%00", "since: must be an integer"),
    ],
)
def test_a_bad_since_is_refused_with_4400_naming_it(
    server: ServerProcess, query: str, field: str
) -> None:
    key = create_project(server.url)["api_key"]

    async def scenario() -> None:
        url = f"{server.ws_url}/api/v1/events?{query}"
        async with websockets.connect(url, additional_headers={"X-API-Key": key}) as ws:
            [error] = await _closed(ws)
            assert error["type"] == "error" and error["field"] == "since"
            assert ws.close_code == 4400
            assert ws.close_reason == field

    asyncio.run(scenario())


def test_a_since_beyond_the_log_starts_afresh(server: ServerProcess) -> None:
    key = create_project(server.url)["api_key"]
    _checkin(server, key, "one")

    async def scenario() -> None:
        url = f"{server.ws_url}/api/v1/events?since={2**62}"
        async with websockets.connect(url, additional_headers={"X-API-Key": key}) as ws:
            snapshot = await _recv(ws)
            assert snapshot["type"] == "presence.snapshot" and snapshot["offset"] == 1
            done = await _recv(ws)
            assert done["type"] == "replay.complete" and done["recovered"] is False
            await _still_answers(ws)

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("since=1&epoch=", "epoch: must be 1-32 characters"),
        ("since=1&epoch=" + "e" * 33, "epoch: must be 1-32 characters"),
        ("since=abc&epoch=whatever", "since: must be an integer"),
    ],
)
def test_a_bad_epoch_is_refused_with_4400_naming_it(
    server: ServerProcess, query: str, reason: str
) -> None:
    key = create_project(server.url)["api_key"]

    async def scenario() -> None:
        url = f"{server.ws_url}/api/v1/events?{query}"
        async with websockets.connect(url, additional_headers={"X-API-Key": key}) as ws:
            [error] = await _closed(ws)
            assert error["type"] == "error" and error["field"] == reason.split(":")[0]
            assert ws.close_code == 4400
            assert ws.close_reason == reason

    asyncio.run(scenario())


@pytest.mark.parametrize("epoch", ["0" * 16, "not-the-epoch", "%00%ff", "x" * 32])
def test_another_epoch_starts_afresh_and_never_replays(server: ServerProcess, epoch: str) -> None:
    key = create_project(server.url)["api_key"]
    _checkin(server, key, "one")
    _checkin(server, key, "two")

    async def scenario() -> None:
        url = f"{server.ws_url}/api/v1/events?since=1&epoch={epoch}"
        async with websockets.connect(url, additional_headers={"X-API-Key": key}) as ws:
            snapshot = await _recv(ws)
            assert snapshot["type"] == "presence.snapshot" and snapshot["offset"] == 2
            assert snapshot["epoch"] != epoch
            done = await _recv(ws)
            assert done["type"] == "replay.complete" and done["recovered"] is False
            assert done["epoch"] == snapshot["epoch"]
            await _still_answers(ws)

    asyncio.run(scenario())


def test_mixed_credentials_are_refused_and_get_no_events(server: ServerProcess) -> None:
    key_a = create_project(server.url)["api_key"]
    key_b = create_project(server.url)["api_key"]
    _checkin(server, key_a, "in-a")
    _checkin(server, key_b, "in-b")
    token_a = _browser_token(server, key_a)
    token_b = _browser_token(server, key_b)
    url = f"{server.ws_url}/api/v1/events"

    async def scenario() -> None:
        cases = [
            (key_a, token_b, "belong to different projects"),
            (key_b, token_a, "belong to different projects"),
            ("alk_" + "0" * 64, token_a, "key"),
        ]
        for key, token, why in cases:
            async with websockets.connect(
                f"{url}?token={token}", additional_headers={"X-API-Key": key}
            ) as ws:
                _checkin(server, key_a, "meanwhile-a")
                _checkin(server, key_b, "meanwhile-b")
                frames = await _closed(ws)
                # One error frame, then the close: no snapshot, no event of either project.
                assert [f["type"] for f in frames] == ["error"]
                assert frames[0]["error"]["code"] == "UNAUTHORIZED"
                assert ws.close_code == 4401 and why in ws.close_reason
        # Both credentials of one project: accepted, that project's events only.
        async with websockets.connect(
            f"{url}?token={token_a}", additional_headers={"X-API-Key": key_a}
        ) as ws:
            snapshot = await _recv(ws)
            names = {s["agent_name"] for s in snapshot["data"]["sessions"]}
            assert "in-a" in names and "in-b" not in names

    asyncio.run(scenario())


def test_attach_with_another_projects_session_token_is_refused(server: ServerProcess) -> None:
    key_a = create_project(server.url)["api_key"]
    key_b = create_project(server.url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=2)[
        "api_key"
    ]
    foreign = _checkin(server, key_b, "foreign")

    def expires_at() -> str:
        r = httpx.get(f"{server.url}/api/v1/presence", headers={"X-API-Key": key_b})
        [session] = r.json()["sessions"]
        return str(session["expires_at"])

    before = expires_at()

    async def scenario() -> None:
        url = f"{server.ws_url}/api/v1/events"
        async with websockets.connect(url, additional_headers={"X-API-Key": key_a}) as ws:
            await _recv(ws)
            await ws.send(json.dumps({"type": "attach", "session_token": foreign["session_token"]}))
            reply = await _recv(ws)
            assert reply["type"] == "error"
            assert reply["error"]["code"] in ("SESSION_NOT_FOUND", "UNAUTHORIZED")
            await asyncio.sleep(1.2)
            await _still_answers(ws)
            # Project B's session was neither refreshed nor announced to project A.
            assert expires_at() == before
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(ws.recv(), 0.5)

    asyncio.run(scenario())


@pytest.mark.timeout(300)
def test_hundreds_of_dropped_sockets_leave_nothing_behind(server: ServerProcess) -> None:
    key = create_project(server.url)["api_key"]
    other = create_project(server.url)["api_key"]
    url = f"{server.ws_url}/api/v1/events"
    # Sessions the churn attaches to its sockets (made once: what is measured below is
    # what sockets cost, not what new sessions cost).
    sessions = [_checkin(server, key, f"held{i}")["session_token"] for i in range(10)]
    baseline = _subscribers(server)

    async def churn(rounds: int) -> None:
        for i in range(rounds):
            kind = i % 5
            if kind == 0:  # open and close at once, before reading anything
                ws = await websockets.connect(url, additional_headers={"X-API-Key": key})
                await ws.close()
            elif kind == 1:  # read the snapshot, then vanish without a close frame
                ws = await websockets.connect(url, additional_headers={"X-API-Key": key})
                await _recv(ws)
                ws.transport.abort()
            elif kind == 2:  # attach a session, then drop the TCP connection
                ws = await websockets.connect(url, additional_headers={"X-API-Key": key})
                await _recv(ws)
                await ws.send(json.dumps({"type": "attach", "session_token": sessions[i % 10]}))
                assert (await _recv(ws))["type"] == "attached"
                ws.transport.abort()
            elif kind == 3:  # refused credentials
                async with websockets.connect(f"{url}?token=rt_{'0' * 64}") as ws:
                    await _closed(ws)
                    assert ws.close_code == 4401
            else:  # mixed credentials, then the client goes before reading the refusal
                ws = await websockets.connect(
                    f"{url}?token={_browser_token(server, other)}",
                    additional_headers={"X-API-Key": key},
                )
                ws.transport.abort()

    async def watch_and_churn() -> None:
        # A normal subscriber stays attached through it all and gets every event.
        async with websockets.connect(url, additional_headers={"X-API-Key": key}) as watcher:
            start = (await _recv(watcher))["offset"]
            offsets: list[int] = []

            async def read() -> None:
                while True:
                    offsets.append((await _recv(watcher, timeout=60))["offset"])

            reader = asyncio.create_task(read())
            await churn(200)
            _checkin(server, key, "between")
            # Memory: after a warm-up that brings the heap to its working size (cyclic
            # garbage waits for the widened young generation, see gc_tuning), 400 more
            # dead sockets must not add what 400 kept sockets would (31 KB each, 12 MB).
            await churn(400)
            rss_warm = _rss_kib(server)
            await churn(400)
            rss_after = _rss_kib(server)
            print("RSS KiB after warm-up, after 400 more:", rss_warm, rss_after)
            _checkin(server, key, "after-the-churn")
            last = httpx.get(
                f"{server.url}/api/v1/events/log?limit=1", headers={"X-API-Key": key}
            ).json()["last_offset"]
            for _ in range(50):
                if offsets and offsets[-1] >= last:
                    break
                await asyncio.sleep(0.1)
            reader.cancel()
            assert last >= start + 2
            assert offsets == list(range(start + 1, last + 1))
            # Only the watcher is left subscribed once the dropped sockets are noticed.
            for _ in range(50):
                if _subscribers(server) == baseline + 1:
                    break
                await asyncio.sleep(0.1)
            assert _subscribers(server) == baseline + 1
            assert rss_after - rss_warm < 5 * 1024, (rss_warm, rss_after)

    asyncio.run(watch_and_churn())
    assert _subscribers(server) == baseline
    _healthy(server)
    log = server.log()
    assert "Traceback" not in log, log[-3000:]
