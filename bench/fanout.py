"""Fan-out benchmark: agentlanes' event socket against raw broadcast baselines, same run.

    .venv/bin/python bench/fanout.py [--sizes 1000,5000] [--quick]
    .venv/bin/python bench/fanout.py --sizes 10000 --servers agentlanes-node   # 10k sockets

For each server and each subscriber count N it measures, on 127.0.0.1 only:
  * memory per idle connection: the server's RSS growth over N idle sockets, divided by N;
  * one event to all: single events, each published alone once the last one reached every
    socket; publish-to-receive p99 and the slowest socket over all deliveries (#30 asks
    p99 <= 250 ms at 10,000 idle sockets on one process);
  * publish-to-receive latency p50/p99 at a steady 20 events/s (every delivery counted);
  * delivery rate: a burst of events fanned out to all N; deliveries per second from the
    first publish to the last receipt.

Servers (each its own process, uvicorn websockets-sansio, no permessage-deflate):
  * agentlanes: `agentlanes serve` (SQLite, in-memory hub); events are real check-ins,
    latency is measured from the event's `ts` (stamped in the transaction) to receipt;
  * litestar-channels: bare Litestar + ChannelsPlugin (memory backend), one channel,
    published by an HTTP POST per event: the same stack without our protocol;
  * websockets-broadcast: the `websockets` library's server and `broadcast()`.
Baseline events are stamped by the publisher just before it sends them.

The subscribers are a minimal asyncio WebSocket client (no per-frame JSON on the hot
path), in this process, so the client is not the bottleneck. Bounded: every phase has a
timeout, and the whole run takes a few minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import resource
import secrets
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.server import bench_server

HOST = "127.0.0.1"
LATENCY_RATE = 5  # events per second in the latency phase
LATENCY_EVENTS = 20
SINGLE_EVENTS = 5  # one-event-to-all rounds
BENCH_ADMIN = "bench-admin-token-for-the-fanout-run-2026"  # 32+ characters, as serve asks
CONNECT_CONCURRENCY = 100
PHASE_TIMEOUT = 45.0


# -- baseline servers (run as `fanout.py --serve NAME --port P`) ---------------------------
def serve_litestar_channels(port: int) -> None:
    import uvicorn
    from litestar import Litestar, WebSocket, post, websocket
    from litestar.channels import ChannelsPlugin
    from litestar.channels.backends.memory import MemoryChannelsBackend

    channels = ChannelsPlugin(
        backend=MemoryChannelsBackend(),
        channels=["events"],
        subscriber_max_backlog=1000,
        subscriber_backlog_strategy="dropleft",
    )

    @websocket("/ws")
    async def ws(socket: WebSocket[Any, Any, Any], channels: ChannelsPlugin) -> None:
        await socket.accept()
        await socket.send({"type": "websocket.send", "text": '{"type":"hello"}'})

        async def on_event(data: bytes) -> None:
            await socket.send({"type": "websocket.send", "text": data.decode()})

        async with (
            channels.start_subscription(["events"]) as subscriber,
            subscriber.run_in_background(on_event),
        ):
            while (await socket.receive())["type"] != "websocket.disconnect":
                pass

    @post("/publish", status_code=204)
    async def publish(data: dict[str, Any], channels: ChannelsPlugin) -> None:
        channels.publish(json.dumps(data), "events")

    app = Litestar([ws, publish], plugins=[channels])
    uvicorn.run(
        app,
        host=HOST,
        port=port,
        ws="websockets-sansio",
        ws_per_message_deflate=False,
        log_level="warning",
        access_log=False,
    )


def serve_websockets_broadcast(port: int) -> None:
    from websockets.asyncio.server import ServerConnection, broadcast, serve

    clients: set[ServerConnection] = set()

    async def handler(ws: ServerConnection) -> None:
        if ws.request is not None and ws.request.path == "/publish":
            async for message in ws:
                broadcast(clients, message)
            return
        clients.add(ws)
        try:
            await ws.send('{"type":"hello"}')
            await ws.wait_closed()
        finally:
            clients.discard(ws)

    async def main() -> None:
        async with serve(handler, HOST, port, compression=None, max_queue=4):
            await asyncio.Future()

    asyncio.run(main())


# -- a minimal subscriber -----------------------------------------------------------------
class Subscriber(asyncio.Protocol):
    """A WebSocket client that only reads text frames and hands them to a callback."""

    def __init__(self, path: str, headers: dict[str, str], on_text: Callable[[bytes], None]):
        self.path = path
        self.headers = headers
        self.on_text = on_text
        self.buf = bytearray()
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.greeted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self.upgraded = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        key = base64.b64encode(secrets.token_bytes(16)).decode()
        lines = [
            f"GET {self.path} HTTP/1.1",
            f"Host: {HOST}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            *(f"{k}: {v}" for k, v in self.headers.items()),
        ]
        transport.write(("\r\n".join(lines) + "\r\n\r\n").encode())  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            if b" 101 " not in bytes(buf[:end]):
                self.opened.set_exception(RuntimeError(bytes(buf[:end]).decode()))
                return
            del buf[: end + 4]
            self.upgraded = True
            self.opened.set_result(None)
        pos = 0
        n = len(buf)
        while n - pos >= 2:
            opcode = buf[pos] & 0x0F
            length = buf[pos + 1] & 0x7F
            head = 2
            if length == 126:
                if n - pos < 4:
                    break
                length = struct.unpack_from("!H", buf, pos + 2)[0]
                head = 4
            elif length == 127:
                if n - pos < 10:
                    break
                length = struct.unpack_from("!Q", buf, pos + 2)[0]
                head = 10
            if n - pos < head + length:
                break
            payload = bytes(buf[pos + head : pos + head + length])
            pos += head + length
            if opcode == 1:
                if not self.greeted.done():
                    # The first frame (snapshot / hello): the server has set the socket up.
                    self.greeted.set_result(None)
                self.on_text(payload)
            elif opcode == 9 and self.transport is not None:  # ping -> pong (masked, zero key)
                self.transport.write(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
        del buf[:pos]

    def connection_lost(self, exc: Exception | None) -> None:
        LOST.append(exc)
        for future in (self.opened, self.greeted):
            if not future.done():
                future.set_exception(ConnectionError("closed before the first frame"))


# Sockets the server closed (or that broke) during the run, for the report.
LOST: list[Exception | None] = []


@dataclass
class Tally:
    """What the subscribers received: counts, and receive-time minus stamp per delivery."""

    parse: Callable[[bytes], float | None]
    expected: int = 0
    received: int = 0
    latencies: list[float] = field(default_factory=list)
    last_receipt: float = 0.0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    measure: bool = False

    def on_text(self, payload: bytes) -> None:
        now = time.time()
        stamp = self.parse(payload)
        if stamp is None:
            return  # a greeting / snapshot frame
        self.received += 1
        self.last_receipt = now
        if self.measure:
            self.latencies.append(now - stamp)
        if self.received >= self.expected:
            self.done.set()

    def reset(self, expected: int, measure: bool) -> None:
        self.expected, self.received, self.measure = expected, 0, measure
        self.latencies = []
        self.done = asyncio.Event()


def parse_agentlanes(payload: bytes) -> float | None:
    if not payload.startswith(b'{"offset"'):
        return None
    start = payload.index(b'"ts":"') + 6
    ts = payload[start : payload.index(b'"', start)].decode()
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def parse_stamped(payload: bytes) -> float | None:
    if not payload.startswith(b'{"t":'):
        return None
    return float(payload[5 : payload.index(b",")])


# -- servers under test -------------------------------------------------------------------
@dataclass
class Target:
    name: str
    port: int
    proc: subprocess.Popen[bytes]
    ws_path: str
    headers: dict[str, str]
    parse: Callable[[bytes], float | None]
    publish: Callable[[int], Any]  # async: publish one event (sequence number)
    close: Callable[[], Any]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError("server did not start")


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def start_agentlanes(workdir: Path, redis_url: str = "") -> Target:
    """`agentlanes serve` holding the subscribers. Without ``redis_url`` the check-ins go to
    that same process over HTTP. With it, this bench process is a second agentlanes
    process on the same database and Redis: it runs the check-ins (the real service
    code) and the server only fans out what arrives through Redis, as a fan-out node of a
    cluster would; the publishing work then sits outside the measured server, as it does
    for the baselines."""
    database_url = f"sqlite:///{workdir / 'bench.db'}"
    prefix = f"bench-{secrets.token_hex(4)}"
    server = bench_server(
        workdir,
        BENCH_ADMIN,
        database_url=database_url,
        redis_url=redis_url,
        redis_channel_prefix=prefix,
        subscriber_queue_size=1000,
        # Every subscriber is on one project: above the default cap of 5,000 sockets per
        # project and process the next socket would be closed with 4429.
        max_sockets_per_project=100000,
    ).start(timeout=60)
    assert server.proc is not None
    proc, port, base = server.proc, server.port, server.url
    async with httpx.AsyncClient(base_url=base, timeout=30) as admin:
        r = await admin.post(
            "/api/v1/projects",
            json={"name": f"bench-{secrets.token_hex(3)}"},
            headers={"Authorization": f"Bearer {BENCH_ADMIN}"},
        )
        r.raise_for_status()
        key = r.json()["api_key"]
    http = httpx.AsyncClient(base_url=base, headers={"X-API-Key": key}, timeout=30)
    name = "agentlanes"
    publish_http_or_peer: Callable[[int], Any]

    async def publish_http(seq: int) -> None:
        # A real state change: each check-in (a new agent, so exactly one event) writes
        # its event and fans it out.
        r = await http.post("/api/v1/checkin", json={"agent_name": f"bench{seq}"})
        r.raise_for_status()

    publish_http_or_peer = publish_http
    peer_hub: Any = None
    if redis_url:
        from agentlanes.hub.redis import RedisHub
        from agentlanes.services import sessions
        from agentlanes.services.context import ServiceContext
        from agentlanes.services.projects import project_for_key
        from agentlanes.settings import Settings
        from agentlanes.store.database import Database

        settings = Settings(database_url=database_url, redis_url=redis_url)  # type: ignore[call-arg]
        peer_hub = RedisHub(redis_url, prefix=prefix)
        await peer_hub.start()
        ctx = ServiceContext(settings=settings, db=Database(database_url), hub=peer_hub)
        project = await project_for_key(ctx, key)

        async def publish_peer(seq: int) -> None:
            data = sessions.CheckinInput(agent_name=f"bench{seq}")
            await sessions.checkin(ctx, project, data)

        publish_http_or_peer = publish_peer
        name = "agentlanes (fan-out node)"

    async def close() -> None:
        await http.aclose()
        if peer_hub is not None:
            await peer_hub.stop()
        server.stop()

    return Target(
        name, port, proc, "/api/v1/events", {"X-API-Key": key},
        parse_agentlanes, publish_http_or_peer, close,
    )  # fmt: skip


async def start_litestar_channels() -> Target:
    port = free_port()
    cmd = [sys.executable, __file__, "--serve", "litestar-channels", "--port", str(port)]
    proc = subprocess.Popen(cmd)
    wait_port(port, proc)
    http = httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=30)

    async def publish(seq: int) -> None:
        # Stamped just before sending; the body mirrors a small event.
        r = await http.post("/publish", json={"t": time.time(), "seq": seq, "pad": "x" * 200})
        r.raise_for_status()

    async def close() -> None:
        await http.aclose()
        stop(proc)

    return Target("litestar-channels", port, proc, "/ws", {}, parse_stamped, publish, close)


async def start_websockets_broadcast() -> Target:
    from websockets.asyncio.client import connect

    port = free_port()
    cmd = [sys.executable, __file__, "--serve", "websockets-broadcast", "--port", str(port)]
    proc = subprocess.Popen(cmd)
    wait_port(port, proc)
    publisher = await connect(f"ws://{HOST}:{port}/publish", compression=None)

    async def publish(seq: int) -> None:
        body = {"t": time.time(), "seq": seq, "pad": "x" * 200}
        await publisher.send(json.dumps(body, separators=(",", ":")))

    async def close() -> None:
        await publisher.close()
        stop(proc)

    return Target("websockets-broadcast", port, proc, "/", {}, parse_stamped, publish, close)


# -- one measurement ----------------------------------------------------------------------
@dataclass
class Result:
    server: str
    subscribers: int
    kb_per_conn: float
    p50_ms: float
    p99_ms: float
    rate: float
    burst: int
    one_p99_ms: float = float("nan")
    one_max_ms: float = float("nan")


async def connect_all(target: Target, n: int, tally: Tally) -> list[asyncio.Transport]:
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    transports: list[asyncio.Transport] = []

    async def one() -> None:
        async with gate:
            transport, proto = await loop.create_connection(
                lambda: Subscriber(target.ws_path, target.headers, tally.on_text),
                HOST,
                target.port,
            )
            transports.append(transport)  # type: ignore[arg-type]
            await asyncio.wait_for(proto.opened, PHASE_TIMEOUT)
            # Counted as connected once its first frame arrived: a socket still being set
            # up would take events published meanwhile as part of its snapshot.
            await asyncio.wait_for(proto.greeted, PHASE_TIMEOUT)

    await asyncio.wait_for(asyncio.gather(*(one() for _ in range(n))), PHASE_TIMEOUT * 3)
    return transports


async def measure(target: Target, n: int, burst: int) -> Result:
    tally = Tally(parse=target.parse)
    LOST.clear()
    # Warm up (imports, database pool, first-connection allocations) with as many
    # concurrent connections as the real phase uses; they stay open (with their own
    # tally) so the measured sockets cannot reuse memory they freed.
    warm = await connect_all(target, CONNECT_CONCURRENCY, Tally(parse=target.parse))
    await asyncio.sleep(1.0)
    before = rss_kb(target.proc.pid)
    transports = await connect_all(target, n, tally)
    await asyncio.sleep(2.0)  # snapshots delivered, the server settles
    after = rss_kb(target.proc.pid)
    kb_per_conn = (after - before) / n

    # One event to all: each published alone, once the previous one reached everyone.
    single: list[float] = []
    missing_single = 0
    for seq in range(SINGLE_EVENTS):
        tally.reset(expected=n, measure=True)
        await target.publish(500 + seq)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(tally.done.wait(), PHASE_TIMEOUT)
        missing_single += n - tally.received
        single += tally.latencies
        await asyncio.sleep(0.5)
    single.sort()
    one_p99 = single[min(len(single) - 1, int(len(single) * 0.99))] * 1000 if single else 0.0
    one_max = single[-1] * 1000 if single else 0.0
    if missing_single:
        print(f"  ! {target.name} N={n}: {missing_single} one-event deliveries missing")

    # Latency at a steady rate.
    tally.reset(expected=n * LATENCY_EVENTS, measure=True)
    for seq in range(LATENCY_EVENTS):
        started = time.monotonic()
        await target.publish(seq)
        await asyncio.sleep(max(0.0, 1 / LATENCY_RATE - (time.monotonic() - started)))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(tally.done.wait(), PHASE_TIMEOUT)
    lat = sorted(tally.latencies)
    missing_latency = n * LATENCY_EVENTS - tally.received
    p50 = statistics.median(lat) * 1000 if lat else float("nan")
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else float("nan")

    # Delivery rate under a burst (four publishers at once).
    await asyncio.sleep(0.5)
    tally.reset(expected=n * burst, measure=False)
    first = time.time()
    seqs = iter(range(1000, 1000 + burst))

    async def publisher() -> None:
        for seq in seqs:
            await target.publish(seq)

    await asyncio.gather(*(publisher() for _ in range(4)))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(tally.done.wait(), PHASE_TIMEOUT)
    rate = tally.received / max(1e-9, tally.last_receipt - first)
    missing_burst = n * burst - tally.received
    lost = len(LOST)
    for t in transports + warm:
        t.close()
    if missing_latency or missing_burst:
        print(
            f"  ! {target.name} N={n}: {missing_latency} latency-phase and {missing_burst} "
            f"burst deliveries missing; {lost} sockets lost before the end",
            flush=True,
        )
    await asyncio.sleep(1.0)
    return Result(target.name, n, kb_per_conn, p50, p99, rate, burst, one_p99, one_max)


async def run(sizes: list[int], burst: int, servers: list[str]) -> list[Result]:
    redis_url = os.environ.get("AGENTLANES_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
    starters = {
        "agentlanes": lambda workdir: start_agentlanes(workdir),
        "agentlanes-node": lambda workdir: start_agentlanes(workdir, redis_url),
        "litestar-channels": lambda workdir: start_litestar_channels(),
        "websockets-broadcast": lambda workdir: start_websockets_broadcast(),
    }
    results: list[Result] = []
    for n in sizes:
        for name in servers:
            with tempfile.TemporaryDirectory(prefix="fanout-") as tmp:
                target = await starters[name](Path(tmp))
                try:
                    print(f"- {name}, {n} subscribers ...", flush=True)
                    # The same number of deliveries in every burst, whatever N.
                    events = max(5, burst * 1000 // n)
                    results.append(await measure(target, n, events))
                finally:
                    await target.close()
    return results


def table(results: list[Result]) -> str:
    head = (
        "| server | subscribers | events/s delivered | vs litestar-channels | p50 ms | p99 ms "
        "| KB per idle conn | one event to all: p99 ms | slowest ms |"
    )
    lines = [head, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    base = {r.subscribers: r.rate for r in results if r.server == "litestar-channels"}
    for r in results:
        ratio = f"{r.rate / base[r.subscribers]:.0%}" if r.subscribers in base else "-"
        lines.append(
            f"| {r.server} | {r.subscribers:,} | {r.rate:,.0f} | {ratio} | {r.p50_ms:.1f} "
            f"| {r.p99_ms:.1f} | {r.kb_per_conn:.1f} | {r.one_p99_ms:.0f} | {r.one_max_ms:.0f} |"
        )
    return "\n".join(lines)


def raise_open_files(n: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, 2 * n + 1000))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if want < n + 500:
        sys.exit(f"open-file limit {hard} is too low for {n} subscribers")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,5000", help="subscriber counts")
    parser.add_argument("--burst", type=int, default=50, help="burst events per 1,000 subscribers")
    parser.add_argument(
        "--servers",
        default="agentlanes-node,litestar-channels,websockets-broadcast",
        help="which servers to measure (also: agentlanes, check-ins in the same process)",
    )
    parser.add_argument("--quick", action="store_true", help="200 subscribers, 20-event burst")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        # Servers inherit our raised open-file limit.
        {
            "litestar-channels": serve_litestar_channels,
            "websockets-broadcast": serve_websockets_broadcast,
        }[args.serve](args.port)
        return
    sizes = [200] if args.quick else [int(s) for s in args.sizes.split(",")]
    burst = 20 if args.quick else args.burst
    raise_open_files(max(sizes))
    started = time.monotonic()
    results = asyncio.run(run(sizes, burst, args.servers.split(",")))
    print()
    print(table(results))
    print(
        f"\nburst: {burst} events per 1,000 subscribers; "
        f"latency: {LATENCY_EVENTS} events at {LATENCY_RATE}/s; "
        f"cpu cores: {os.cpu_count()}; load average before the run: "
        f"{os.getloadavg()[0]:.1f}; took {time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
