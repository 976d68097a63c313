"""Soak: a real server under a steady, churning swarm for minutes; does anything creep?

    .venv/bin/python bench/soak.py [--minutes 10] [--quick] [--sqlite] [--no-redis]

One `agentlanes serve` process (PostgreSQL in a scratch database and Redis by default;
--sqlite for a temp SQLite file), one project with the SPEC's liveness defaults (30 s
interval, 120 s TTL), and in this process (the load generator):
  * 200 agents, each in a loop: check in (its own package and notes file; now and then a
    broad `**/*.md`), then every 2.5-7.5 s (--pace) one of: heartbeat (at least one per
    interval), a scope change (status), a lease taken and released (50 shared resource
    keys, so some acquires get 409), a task created, claimed, noted and done, a
    conflicts check, a presence read; after 30-180 s it checks out, or one time in ten
    vanishes and lets the session time out;
  * 50 WebSocket subscribers reading every event (offsets checked strictly increasing;
    a subscriber cut off resumes with `since`), in a process of their own, so that their
    parsing never stalls the agents' event loop and inflates the agents' timings.
The client load is modest (about 40 requests a second from one pool of 32 connections;
enough that most calls have 100 samples a minute), so the client is not what
saturates; each interval prints the CPU the server and the client (both of its
processes) used, and the requests per second the server answered.

After a warm-up (the agents start over its first 20 s; it lasts at least 30 s and until
the server's first scheduled full collection, about a minute after its start), every
interval (a minute; 15 s with --quick) it prints the server's RSS and open file
descriptors (from /proc/<pid>; the descriptors' median of samples every 2 s, since
connections come and go), p50/p99 of each call in that interval, events per second,
the mean pause of the server's scheduled full garbage collections ("gc ms"), the
database's size and any unexpected answers. At the end: how many requests took
over 50 ms as the agents timed them and as the server's own request histogram timed
them, and this process's own stalls (event loop, garbage collection), so that a slow
request can be told from a slow load generator; then the verdicts of #19:
RSS and fds flat after warm-up (growth at most 5 % over the last half of the run), and
each call's p99 in every interval within 1.5x of its first interval's, judged only in
intervals with at least 100 samples of that call (below that a p99 is the slowest one).

Default 10 minutes (and the warm-up); --minutes N for longer; --quick is 2 minutes in all.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing
import os
import random
import secrets
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.server import ServerProcess, bench_server  # noqa: E402
from bench.services import (  # noqa: E402
    POSTGRES_ADMIN_URL,
    REDIS_URL,
    postgres_or_exit,
    raise_open_files,
    redis_or_exit,
    scratch_postgres,
)

ADMIN_TOKEN = "soak-admin-token-of-at-least-32-characters"
HEARTBEAT_INTERVAL = 30  # the project's settings: the SPEC's defaults
HEARTBEAT_TTL = 120
WARMUP_SECONDS = 30.0  # before the first interval (not measured, not judged)
PACE = 5.0  # seconds between an agent's calls, on average (uniform over 0.5-1.5x)
LEASE_KEYS = 50
CONNECTIONS = 32  # HTTP connections from the agents (one pool)
FD_SAMPLE_SECONDS = 2.0  # descriptors come and go with connections: judge their median
GROWTH_LIMIT = 0.05  # RSS and fds: at most 5 % growth over the last half
P99_LIMIT = 1.5  # p99 per interval within 1.5x of the first interval's
# A call's p99 is judged only in intervals with this many samples: below 100, a
# nearest-rank p99 is simply the interval's slowest request, and one outlier decides it.
MIN_SAMPLES = 100
# Where the slow requests come from: a request over SLOW_MS as the client saw it, as the
# server's own request histogram timed it, and stalls of this process's event loop (which
# delay every request in flight, whatever the server does).
SLOW_MS = 50
STALL_MS = 20
STALL_PROBE_SECONDS = 0.01
CLIENT_GC_SECONDS = 1.0  # this process's own full collections (see soak())

# The answers a call may give in a healthy run (409: a lease held by someone else, a
# task claimed by another, a session already ended by a timeout or supersede race).
EXPECTED = {
    "checkin": {201},
    "heartbeat": {200, 410},
    "status": {200, 410},
    "checkout": {200, 410},
    "lease.acquire": {200, 201, 409, 410},
    "lease.release": {200, 409, 410},
    "task.create": {201, 410},
    "task.claim": {200, 409, 410},
    "task.note": {201, 410},
    "task.done": {200, 409, 410},
    "conflicts.check": {200},
    "presence": {200},
}


class Stalls:
    """This process's own hiccups: event-loop stalls and garbage-collection pauses."""

    def __init__(self) -> None:
        self.loop: list[float] = []  # ms a sleep overshot, when over STALL_MS
        self.gc: list[float] = []  # ms of each collection over STALL_MS
        self._gc_started = 0.0

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif (ms := (time.perf_counter() - self._gc_started) * 1000) > STALL_MS:
            self.gc.append(ms)

    async def watch_loop(self) -> None:
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(STALL_PROBE_SECONDS)
            late = (time.perf_counter() - t0 - STALL_PROBE_SECONDS) * 1000
            if late > STALL_MS:
                self.loop.append(late)


async def collect_garbage_often() -> None:
    while True:
        await asyncio.sleep(CLIENT_GC_SECONDS)
        gc.collect()


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


@dataclass
class Tally:
    """What happened in one interval."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    unexpected: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    events: int = 0  # event frames seen by the first subscriber
    deliveries: int = 0  # event frames seen by all subscribers
    disorder: int = 0  # an offset at or below one already seen on that socket
    reconnects: int = 0
    fds: list[int] = field(default_factory=list)  # sampled every FD_SAMPLE_SECONDS


class Swarm:
    def __init__(self, http: httpx.AsyncClient, key: str, seed: int, pace: float) -> None:
        self.http = http
        self.pace = pace
        self.key = key
        self.rng = random.Random(seed)
        self.tally = Tally()
        self.running = True

    async def call(
        self, name: str, method: str, path: str, token: str | None = None, body: Any = None
    ) -> httpx.Response | None:
        headers = {"X-API-Key": self.key}
        if token:
            headers["X-Session-Token"] = token
        t0 = time.perf_counter()
        try:
            r = await self.http.request(method, path, headers=headers, json=body)
        except httpx.HTTPError as exc:
            self.tally.unexpected[f"{name} {type(exc).__name__}"] += 1
            return None
        self.tally.latencies[name].append((time.perf_counter() - t0) * 1000)
        if r.status_code not in EXPECTED[name]:
            self.tally.unexpected[f"{name} {r.status_code}"] += 1
        return r

    # -- one agent ----------------------------------------------------------------------

    async def agent(self, i: int, start_after: float) -> None:
        rng = random.Random(self.rng.random())
        await asyncio.sleep(start_after)
        while self.running:
            files = [f"svc{i % 40}/mod{i}/**", f"docs/agent-{i}.md"]
            if rng.random() < 0.02:
                files.append("**/*.md")  # the broad check-in: conflicts with everyone
            r = await self.call(
                "checkin",
                "POST",
                "/api/v1/checkin",
                body={"agent_name": f"agent-{i}", "declared_files": files},
            )
            if r is None or r.status_code != 201:
                await asyncio.sleep(5)
                continue
            token = r.json()["session_token"]
            await self.live(i, token, rng, time.monotonic() + rng.uniform(30, 180))
            if not self.running:
                return
            if rng.random() < 0.1:
                # Vanish: no checkout, no heartbeat; the session times out.
                await asyncio.sleep(rng.uniform(HEARTBEAT_TTL + 5, HEARTBEAT_TTL + 20))
            else:
                await self.call(
                    "checkout",
                    "POST",
                    "/api/v1/checkout",
                    token,
                    {"outcome_status": "completed", "work_summary": "soak"},
                )
                await asyncio.sleep(rng.uniform(1, 5))

    async def live(self, i: int, token: str, rng: random.Random, until: float) -> None:
        lease: str | None = None
        task: str | None = None
        beat = time.monotonic()
        while self.running and time.monotonic() < until:
            await asyncio.sleep(rng.uniform(self.pace / 2, self.pace * 1.5))
            if not self.running:
                return
            roll = rng.random()
            if roll < 0.45 or time.monotonic() - beat >= HEARTBEAT_INTERVAL:
                # A well-behaved agent beats at least once per interval.
                r = await self.call("heartbeat", "POST", "/api/v1/heartbeat", token, {})
                beat = time.monotonic()
            elif roll < 0.60:
                files = [f"svc{i % 40}/mod{rng.randrange(8)}/**", f"docs/agent-{i}.md"]
                r = await self.call(
                    "status",
                    "POST",
                    "/api/v1/status",
                    token,
                    {"declared_files": files, "status_text": f"step {rng.randrange(100)}"},
                )
                beat = time.monotonic()  # a status change counts as a heartbeat
            elif roll < 0.75:
                if lease is None:
                    resource = f"deploy:env{rng.randrange(LEASE_KEYS)}"
                    r = await self.call(
                        "lease.acquire",
                        "POST",
                        "/api/v1/leases",
                        token,
                        {"resource": resource, "ttl_seconds": 60},
                    )
                    if r is not None and r.status_code in (200, 201):
                        lease = r.json()["lease_id"]
                else:
                    r = await self.call(
                        "lease.release", "POST", f"/api/v1/leases/{lease}/release", token, {}
                    )
                    lease = None
            elif roll < 0.90:
                r = await self.task_step(i, token, task)
                if r is not None and r.status_code in (200, 201):
                    body = r.json()
                    task = body.get("task_id", task)
                    if body.get("status") == "done":
                        task = None
            elif roll < 0.97:
                paths = [f"svc{rng.randrange(40)}/mod{rng.randrange(200)}/x.py" for _ in range(20)]
                r = await self.call(
                    "conflicts.check", "POST", "/api/v1/conflicts/check", token, {"paths": paths}
                )
            else:
                r = await self.call("presence", "GET", "/api/v1/presence")
            if r is not None and r.status_code == 410:
                return  # ended under us (timed out while the machine stalled): start over

    async def task_step(self, i: int, token: str, task: str | None) -> httpx.Response | None:
        """Create and claim a task; then a note; then done (one step each)."""
        if task is None:
            r = await self.call(
                "task.create",
                "POST",
                "/api/v1/tasks",
                token,
                {"title": f"soak work of agent {i}", "paths": [f"svc{i % 40}/mod{i}/work.py"]},
            )
            if r is None or r.status_code != 201:
                return r
            task_id = r.json()["task_id"]
            return await self.call(
                "task.claim", "POST", f"/api/v1/tasks/{task_id}/claim", token, {}
            )
        if self.rng.random() < 0.5:
            return await self.call(
                "task.note", "POST", f"/api/v1/tasks/{task}/notes", token, {"body": "progress"}
            )
        return await self.call(
            "task.done", "POST", f"/api/v1/tasks/{task}/status", token, {"status": "done"}
        )


# -- the subscribers, in a process of their own ---------------------------------------------
# They parse every event (about 25 a second, times 50): in the agents' process, that work
# and its garbage would share the agents' event loop and collector, and delay the requests
# in flight. Apart, they cannot touch the agents' timings.

EVENTS, DELIVERIES, DISORDER, RECONNECTS = range(4)  # the shared counters


def subscribers_main(ws_url: str, key: str, n: int, counts: Any) -> None:
    """The child process: n subscribers, counting into ``counts`` (only this process
    writes them; the agents' process reads them at each interval)."""

    async def all_of_them() -> None:
        await asyncio.gather(*(subscriber(ws_url, key, counts, i == 0) for i in range(n)))

    asyncio.run(all_of_them())


async def subscriber(ws_url: str, key: str, counts: Any, first: bool) -> None:
    last = -1
    since = ""
    while True:
        try:
            async with connect(
                f"{ws_url}/api/v1/events{since}",
                additional_headers={"X-API-Key": key},
                max_size=None,
                compression=None,
                open_timeout=60,
            ) as ws:
                async for raw in ws:
                    frame = json.loads(raw)
                    offset = frame.get("offset")
                    if not isinstance(offset, int):
                        continue
                    if "data" in frame and frame.get("type") != "presence.snapshot":
                        if offset <= last:
                            counts[DISORDER] += 1
                        counts[DELIVERIES] += 1
                        if first:
                            counts[EVENTS] += 1
                    last = max(last, offset)
        except (ConnectionClosed, OSError, TimeoutError):
            pass
        counts[RECONNECTS] += 1
        since = f"?since={last}" if last >= 0 else ""
        await asyncio.sleep(1)


# -- what the server uses -------------------------------------------------------------------


def client_cpu(listeners: int | None) -> float:
    """CPU seconds of the load generator: this process and the subscribers' process."""
    return time.process_time() + (proc_stats(listeners)[2] if listeners else 0.0)


def proc_stats(pid: int) -> tuple[float, int, float]:
    """RSS in MB, open file descriptors, CPU seconds so far (user + system)."""
    rss_kb = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kb = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    return rss_kb / 1024, fds, cpu


async def database_mb(db_url: str, sqlite_file: Path | None) -> float:
    if sqlite_file is not None:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                total += Path(f"{sqlite_file}{suffix}").stat().st_size
        return total / 1e6
    conn = await asyncpg.connect(db_url)
    try:
        return int(await conn.fetchval("SELECT pg_database_size(current_database())")) / 1e6
    finally:
        await conn.close()


async def gc_totals(http: httpx.AsyncClient) -> tuple[float, float]:
    """How many scheduled full collections the server ran, and their pauses' sum (s)."""
    text = (await http.get("/metrics")).text
    found = {"count": 0.0, "sum": 0.0}
    for line in text.splitlines():
        for what in found:
            if line.startswith(f"agentlanes_gc_full_collection_seconds_{what} "):
                found[what] = float(line.split()[1])
    return found["count"], found["sum"]


async def server_timed(http: httpx.AsyncClient) -> tuple[float, float]:
    return timed_in_metrics((await http.get("/metrics")).text)


def timed_in_metrics(text: str) -> tuple[float, float]:
    """The server's own count of API requests, and of those it answered within SLOW_MS
    (its request-duration histogram, summed over routes; /metrics itself left out)."""
    le = f'le="{SLOW_MS / 1000:g}"'
    total = fast = 0.0
    for line in text.splitlines():
        if not line.startswith("agentlanes_request_duration_seconds") or 'path="/metrics"' in line:
            continue
        if line.startswith("agentlanes_request_duration_seconds_count{"):
            total += float(line.split()[-1])
        elif line.startswith("agentlanes_request_duration_seconds_bucket{") and le in line:
            fast += float(line.split()[-1])
    return total, fast


def slow_lines(client_ms: list[float], server: tuple[float, float], stalls: Stalls) -> list[str]:
    """Where the slow requests come from: the server's time, or this process's stalls."""
    slow = sum(1 for ms in client_ms if ms > SLOW_MS)
    total, fast = server

    def longest(values: list[float]) -> str:
        return f" (longest {max(values):.0f} ms)" if values else ""

    return [
        f"requests over {SLOW_MS} ms: {slow} of {len(client_ms):,} as the client timed them; "
        f"{total - fast:.0f} of {total:,.0f} as the server timed them (its request histogram, "
        "from the first byte its middleware saw to the last it sent)",
        f"this process's stalls over {STALL_MS} ms: {len(stalls.loop)} of its event loop"
        f"{longest(stalls.loop)}, {len(stalls.gc)} garbage collections{longest(stalls.gc)}",
    ]


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


@dataclass
class Interval:
    end_s: float
    rss_mb: float
    fds: int  # the interval's median
    db_mb: float
    server_cpu: float  # percent of one core
    client_cpu: float
    gc_ms: float  # the mean pause of the interval's scheduled full collections
    tally: Tally


ALL = "all calls"


def latencies(tally: Tally, call: str) -> list[float]:
    if call == ALL:
        return [x for values in tally.latencies.values() for x in values]
    return tally.latencies.get(call, [])


def width(call: str) -> int:
    return max(len(call), 13)


def header(calls: list[str]) -> str:
    cells = ["time", "RSS MB", " fds", "req/s", " ev/s", "  DB MB", "  srv", "  cli", "gc ms"]
    cells += [c.rjust(width(c)) for c in calls]
    return " ".join([*cells, "unexpected"])


def interval_line(row: Interval, calls: list[str], seconds: float) -> str:
    t = row.tally
    cells = [
        f"{int(row.end_s // 60)}:{int(row.end_s % 60):02d}".rjust(4),
        f"{row.rss_mb:6.1f}",
        f"{row.fds:4d}",
        f"{len(latencies(t, ALL)) / seconds:5.1f}",
        f"{t.events / seconds:5.1f}",
        f"{row.db_mb:7.1f}",
        f"{row.server_cpu:4.0f}%",
        f"{row.client_cpu:4.0f}%",
        f"{row.gc_ms:5.1f}",
    ]
    for c in calls:
        lat = latencies(t, c)
        text = f"{statistics.median(lat):.1f}/{pct(lat, 0.99):.1f}" if lat else "-"
        cells.append(text.rjust(width(c)))
    cells.append(str(sum(t.unexpected.values()) + t.disorder))
    return " ".join(cells)


def verdicts(rows: list[Interval], calls: list[str]) -> list[str]:
    out = []
    half = rows[len(rows) // 2 :]
    base = half[0]
    for what, at_half, values in (
        ("RSS", base.rss_mb, [r.rss_mb for r in half]),
        ("open fds", float(base.fds), [float(r.fds) for r in half]),
    ):
        growth = (max(values) - at_half) / at_half if at_half else 0.0
        ok = growth <= GROWTH_LIMIT
        out.append(
            f"{'✓' if ok else '✗'} {what} over the last half ({len(half)} intervals): "
            f"{at_half:,.1f} -> at most {max(values):,.1f} ({growth:+.1%}; limit +5%)"
        )
    for c in calls:
        first = latencies(rows[0].tally, c)
        if len(first) < MIN_SAMPLES:
            out.append(f"- {c}: too few samples in the first interval to judge its p99")
            continue
        p0 = pct(first, 0.99)
        judged = [latencies(r.tally, c) for r in rows]
        judged = [values for values in judged if len(values) >= MIN_SAMPLES]
        worst = max(pct(values, 0.99) for values in judged)
        ok = worst <= P99_LIMIT * p0
        skipped = len(rows) - len(judged)
        out.append(
            f"{'✓' if ok else '✗'} {c} p99: first interval {p0:.1f} ms, worst {worst:.1f} ms "
            f"({worst / p0:.2f}x; limit {P99_LIMIT}x; at least "
            f"{min(len(values) for values in judged)} samples an interval"
            + (f"; {skipped} interval(s) with fewer not judged" if skipped else "")
            + ")"
        )
    return out


# -- the run ----------------------------------------------------------------------------------


async def soak(
    server: ServerProcess,
    db_url: str,
    sqlite_file: Path | None,
    agents: int,
    subscribers: int,
    seconds: float,
    interval: float,
    seed: int,
    pace: float,
) -> None:
    assert server.proc is not None
    pid = server.proc.pid
    # A fixed pool of kept-alive connections, so the server's descriptor count reflects
    # what it holds on to, not how many connections the client happened to open.
    limits = httpx.Limits(
        max_connections=CONNECTIONS,
        max_keepalive_connections=CONNECTIONS,
        # Below uvicorn's 5 s keep-alive: the client drops an idle connection before the
        # server can close it under a request just sent (an httpx ReadError, not the
        # server's fault).
        keepalive_expiry=4,
    )
    async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as http:
        r = await http.post(
            "/api/v1/projects",
            json={
                "name": f"soak-{secrets.token_hex(3)}",
                "heartbeat_interval_seconds": HEARTBEAT_INTERVAL,
                "heartbeat_ttl_seconds": HEARTBEAT_TTL,
            },
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        )
        r.raise_for_status()
        swarm = Swarm(http, r.json()["api_key"], seed, pace)
        spawn = multiprocessing.get_context("spawn")
        counts = spawn.Array("q", 4, lock=False)
        listeners = spawn.Process(
            target=subscribers_main,
            args=(server.ws_url, swarm.key, subscribers, counts),
            daemon=True,
        )
        listeners.start()
        # Staggered over the first 20 s, not a thundering herd.
        tasks = [
            asyncio.create_task(swarm.agent(i, start_after=20 * i / agents)) for i in range(agents)
        ]
        calls = [*EXPECTED, ALL]
        rows: list[Interval] = []
        print(
            f"\nagentlanes serve (pid {pid}); {agents} agents, {subscribers} subscribers; "
            f"a line every {interval:.0f} s; per call p50/p99 ms\n"
        )
        # The agents start over the first 20 s; the first interval starts after that.
        say(f"warming up (at least {WARMUP_SECONDS:.0f} s, and the server's first full collection)")
        await asyncio.sleep(WARMUP_SECONDS)
        # ... and until the server's first scheduled full collection, which also freezes
        # what its warm-up built: a one-off pause (30-60 ms) that belongs to start-up, not
        # to the first interval, whose p99 every later one is judged against.
        while (await gc_totals(http))[0] < 1:
            await asyncio.sleep(1)
        swarm.tally = Tally()
        # A pause of this process's loop makes every request in flight look that much
        # slower. What warm-up built (200 agents' coroutines, the connection pool) is kept
        # for the whole run: freeze it, so full collections walk only what is new. And
        # each httpx request leaves its response and stream in a reference cycle, which
        # only the collector frees: left to its own schedule, it freed them in batches
        # that paused the loop for 30-80 ms (a 5-minute run: 7 pauses over 20 ms, and 10
        # of the 11 requests over 50 ms were not slow on the server); collected every
        # second, a pass takes 1-2 ms.
        gc.collect()
        gc.freeze()
        print(header(calls), flush=True)
        stalls = Stalls()
        gc.callbacks.append(stalls.on_gc)
        tasks.append(asyncio.create_task(stalls.watch_loop()))
        tasks.append(asyncio.create_task(collect_garbage_often()))
        timed0 = await server_timed(http)
        started = time.monotonic()
        _, _, server_cpu0 = proc_stats(pid)
        client_cpu0 = client_cpu(listeners.pid)
        seen0 = list(counts)
        gc0 = await gc_totals(http)

        async def sample_fds() -> None:
            while True:
                with contextlib.suppress(OSError):
                    swarm.tally.fds.append(len(os.listdir(f"/proc/{pid}/fd")))
                await asyncio.sleep(FD_SAMPLE_SECONDS)

        tasks.append(asyncio.create_task(sample_fds()))
        try:
            while time.monotonic() - started < seconds - 1:
                await asyncio.sleep(interval - ((time.monotonic() - started) % interval))
                tally, swarm.tally = swarm.tally, Tally()
                rss, fds, server_cpu = proc_stats(pid)
                cpu = client_cpu(listeners.pid)
                seen = list(counts)
                tally.events, tally.deliveries, tally.disorder, tally.reconnects = (
                    now - before for now, before in zip(seen, seen0, strict=True)
                )
                seen0 = seen
                gc_now = await gc_totals(http)
                collections, paused = gc_now[0] - gc0[0], gc_now[1] - gc0[1]
                gc0 = gc_now
                row = Interval(
                    end_s=time.monotonic() - started,
                    rss_mb=rss,
                    fds=int(statistics.median(tally.fds)) if tally.fds else fds,
                    db_mb=await database_mb(db_url, sqlite_file),
                    server_cpu=100 * (server_cpu - server_cpu0) / interval,
                    client_cpu=100 * (cpu - client_cpu0) / interval,
                    gc_ms=1000 * paused / collections if collections else 0.0,
                    tally=tally,
                )
                server_cpu0, client_cpu0 = server_cpu, cpu
                rows.append(row)
                print(interval_line(row, calls, interval), flush=True)
                for what, n in sorted(tally.unexpected.items()):
                    print(f"    unexpected: {what} x{n}", flush=True)
                if tally.disorder:
                    print(f"    offsets out of order: {tally.disorder}", flush=True)
            timed = await server_timed(http)
        finally:
            gc.callbacks.remove(stalls.on_gc)
            swarm.running = False
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            listeners.terminate()
            listeners.join(10)
    total = Tally()
    for row in rows:
        total.deliveries += row.tally.deliveries
        total.reconnects += row.tally.reconnects
        total.disorder += row.tally.disorder
    requests = sum(len(latencies(row.tally, ALL)) for row in rows)
    span = max(1.0, rows[-1].end_s) if rows else 1.0
    print(
        f"\n{requests:,} requests ({requests / span:.0f}/s), {total.deliveries:,} event "
        f"deliveries, {total.reconnects} subscriber reconnects, "
        f"{total.disorder} offsets out of order\n"
    )
    client_ms = [ms for row in rows for ms in latencies(row.tally, ALL)]
    server = (timed[0] - timed0[0], timed[1] - timed0[1])
    print("\n".join(slow_lines(client_ms, server, stalls)) + "\n")
    if len(rows) >= 2:
        print("\n".join(verdicts(rows, calls)))
    else:
        print("(one interval only: no verdicts)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--minutes", type=float, help="how long to measure, after a 30 s warm-up (default 10)"
    )
    ap.add_argument(
        "--quick", action="store_true", help="1.5 minutes after the warm-up, a line every 15 s"
    )
    ap.add_argument("--interval", type=float, help="seconds between lines (default 60)")
    ap.add_argument("--sqlite", action="store_true", help="a temp SQLite file, not PostgreSQL")
    ap.add_argument("--no-redis", action="store_true", help="the in-memory hub, not Redis")
    ap.add_argument("--agents", type=int, default=200)
    ap.add_argument("--subscribers", type=int, default=50)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument(
        "--pace",
        type=float,
        default=PACE,
        help=f"seconds between one agent's calls, on average (default {PACE:g})",
    )
    ap.add_argument("--postgres-url", default=POSTGRES_ADMIN_URL)
    ap.add_argument("--redis-url", default=REDIS_URL)
    args = ap.parse_args()
    minutes = args.minutes or (1.5 if args.quick else 10.0)
    interval = args.interval or (15.0 if args.quick else 60.0)
    if minutes * 60 < 2 * interval:
        ap.error("--minutes must cover at least two intervals")
    if not args.sqlite:
        postgres_or_exit(args.postgres_url)
    if not args.no_redis:
        redis_or_exit(args.redis_url)
    raise_open_files()

    work = Path(tempfile.mkdtemp(prefix="agentlanes-soak-"))
    settings = {
        "rate_limit_per_minute": 0,
        "redis_url": "" if args.no_redis else args.redis_url,
        "redis_channel_prefix": f"soak-{secrets.token_hex(4)}",
    }

    def run(db_url: str, sqlite_file: Path | None) -> None:
        server = bench_server(work, ADMIN_TOKEN, database_url=db_url, **settings).start(timeout=90)
        backend = "SQLite" if sqlite_file else "PostgreSQL"
        hub = "in-memory hub" if args.no_redis else "Redis"
        say(f"server up ({backend}, {hub}); soaking for {minutes:g} min")
        try:
            asyncio.run(
                soak(
                    server,
                    db_url,
                    sqlite_file,
                    args.agents,
                    args.subscribers,
                    minutes * 60,
                    interval,
                    args.seed,
                    args.pace,
                )
            )
        except Exception:
            print(server.log()[-3000:], file=sys.stderr)
            raise
        finally:
            server.stop()
        log = server.log()
        errors = [line for line in log.splitlines() if "ERROR" in line or "Traceback" in line]
        print(
            f"\nserver log: {len(errors)} error lines" + (f", first: {errors[0]}" if errors else "")
        )

    if args.sqlite:
        db_file = work / "soak.db"
        run(f"sqlite:///{db_file}", db_file)
    else:
        with scratch_postgres(args.postgres_url, "agentlanes_soak") as db_url:
            run(db_url, None)


if __name__ == "__main__":
    main()
