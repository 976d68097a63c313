"""The server's request rates and latencies under a compiled load generator, beside bare Litestar.

    .venv/bin/python bench/api.py [--quick] [--backends sqlite,postgres] [--seconds S]

Real `agentlanes serve` processes on 127.0.0.1, one per database (a temp SQLite file; a
scratch PostgreSQL database made on --postgres-url's server and dropped at the end), and
the bare Litestar app of bench/bare_app.py on the same uvicorn as the baseline, measured
in the same run just before each server. The load comes from `wrk` (a compiled load
generator: Debian's package `wrk`), driven by Lua scripts generated into a temp dir for
the bodies and headers, so the client is not what saturates first.

Rows (each with its ratio to bare where one applies, and #13's target with ✓/✗):
  * heartbeat, presence at 10 and 1,000 live sessions, conflicts/check of 1,000 staged
    paths: 16 connections (2 wrk threads), requests per second and latency percentiles;
  * check-in at 10 and 1,000 live, narrow (no conflict) and broad (`**/*.md` against
    1,000 live sessions that each claim a .md file: 1,000 conflicts): one client in
    sequence (1 connection), p50/p99; each check-in reuses one agent name, so it
    supersedes the previous one and the live count stays put;
  * the largest frame of every event type: one socket subscribed to the 1,000-session
    project while each event type is triggered (timeouts and expiries in a small project
    with a 2 s TTL), beside the snapshot and replay frames;
  * database writes per minute with 1,000 sockets that each `attach` a live session and
    then stay idle (PostgreSQL only: the write transactions are counted from the scratch
    database's WAL records with pg_walinspect, the rows written and the commits from
    pg_stat_user_tables and pg_stat_database).

Only the SPEC's endpoints and frames are used, and event payloads are only measured, not
parsed, so the script runs against any server that keeps the contract. The default run
takes about 5 minutes, --quick about 1½ (shorter load windows, a 15 s idle window, and
PostgreSQL only unless --backends says otherwise).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.server import bench_server, free_port  # noqa: E402
from bench.services import (  # noqa: E402
    POSTGRES_ADMIN_URL,
    postgres_or_exit,
    raise_open_files,
    scratch_postgres,
)
from bench.wrk import Call, Load, Wrk, find_wrk, preflight  # noqa: E402

ADMIN_TOKEN = "bench-admin-token-of-at-least-32-characters"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SWARM = 1000  # live sessions of the big project
SMALL = 10  # live sessions of the small one
STAGED_PATHS = 1000  # paths in one conflicts/check
EVENT_LIMIT = 64 * 1024  # #13: every event at most 64 KB
IDLE_SOCKETS = 1000
BURST_CONNECTIONS = 32  # #30: a swarm launched at once
BURST_AGENTS = 20_000  # distinct names, more than a run sends
TIMES = "\N{MULTIPLICATION SIGN}"  # ratios, as in the tables
# Frames of the socket protocol that are not events (measured, not held to the event limit).
CONTROL_FRAMES = ("presence.snapshot", "replay.complete", "pong", "attached", "error")

# The event types of the SPEC that the event-size phase triggers (a server may emit more;
# those are measured too).
EXPECTED_EVENTS = (
    "agent.checkin",
    "agent.conflict",
    "agent.status",
    "agent.checkout",
    "agent.timeout",
    "agent.registered",
    "task.created",
    "task.claimed",
    "task.note",
    "task.status",
    "task.released",
    "task.stale",
    "message.created",
    "message.read",
    "message.acked",
    "lease.acquired",
    "lease.renewed",
    "lease.released",
    "lease.expired",
    "consensus.created",
    "consensus.vote",
    "consensus.approved",
    "consensus.rejected",
    "consensus.expired",
    "checkpoint.created",
    "checkpoint.resolved",
)


def say(text: str) -> None:
    """Progress on stderr; the table goes to stdout."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# -- servers and projects -----------------------------------------------------------------


def start_bare(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "bare_app.py"), str(port)])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("bench/bare_app.py exited")
        try:
            httpx.post(f"http://127.0.0.1:{port}/bare", json={}, timeout=1)
            return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("bench/bare_app.py did not answer")


@dataclass
class Project:
    key: str
    tokens: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    @property
    def h(self) -> dict[str, str]:
        return {"X-API-Key": self.key}

    def token(self, i: int) -> dict[str, str]:
        return {"X-API-Key": self.key, "X-Session-Token": self.tokens[i]}


def member(i: int, prefix: str) -> dict[str, Any]:
    """Live session i: its own package and its own notes file (a literal .md path)."""
    return {
        "agent_name": f"{prefix}-{i}",
        "declared_area": f"{prefix}-{i}",
        "declared_files": [f"pkg{i}/**", f"docs/{prefix}-{i}.md"],
    }


async def make_project(
    http: httpx.AsyncClient, name: str, members: int, prefix: str, **settings: int
) -> Project:
    r = await http.post("/api/v1/projects", json={"name": name, **settings}, headers=ADMIN)
    r.raise_for_status()
    project = Project(r.json()["api_key"])
    project.tokens = [""] * members
    project.names = [f"{prefix}-{i}" for i in range(members)]
    queue = iter(range(members))

    async def worker() -> None:
        for i in queue:
            s = await http.post("/api/v1/checkin", json=member(i, prefix), headers=project.h)
            if s.status_code != 201:
                raise RuntimeError(f"check-in {i}: {s.status_code} {s.text[:300]}")
            project.tokens[i] = s.json()["session_token"]

    # Check-ins of one project are serialised by the server; a few in flight keep it busy.
    await asyncio.gather(*(worker() for _ in range(4)))
    return project


# -- the measured rows ----------------------------------------------------------------------


@dataclass
class Figures:
    """Everything measured on one database."""

    backend: str
    bare: Load | None = None
    bare_burst: Load | None = None  # 32 connections, as the burst
    burst: Load | None = None  # distinct agents checking into one project, 32 connections
    heartbeat: Load | None = None
    presence_small: Load | None = None
    presence_swarm: Load | None = None
    narrow_small: Load | None = None
    narrow_swarm: Load | None = None
    broad_swarm: Load | None = None
    broad_conflicts: int = 0
    check: Load | None = None
    check_conflicts: int = 0
    frames: dict[str, int] = field(default_factory=dict)  # type -> largest frame, bytes
    counts: dict[str, int] = field(default_factory=dict)
    idle: dict[str, float] | None = None
    setup_seconds: float = 0.0


def checkin_call(key: str, name: str, files: list[str]) -> Call:
    body = json.dumps({"agent_name": name, "declared_files": files})
    return Call("POST", "/api/v1/checkin", {"X-API-Key": key}, body)


def staged_paths() -> list[str]:
    """1,000 staged files: every tenth inside a live session's package (100 conflicts)."""
    paths = []
    for i in range(STAGED_PATHS):
        if i % 10 == 0:
            paths.append(f"pkg{i}/module/file_{i}.py")
        else:
            paths.append(f"src/staged/dir{i % 37}/file_{i}.py")
    return paths


def http_rows(url: str, wrk: Wrk, fig: Figures, small: Project, swarm: Project) -> None:
    heartbeat = [
        Call("POST", "/api/v1/heartbeat", small.token(i), "{}") for i in range(len(small.tokens))
    ]
    preflight(url, heartbeat[0], 200)
    say(f"{fig.backend}: heartbeat")
    fig.heartbeat = wrk.run(url, heartbeat, 16)

    presence_small = Call("GET", "/api/v1/presence", small.h)
    presence_swarm = Call("GET", "/api/v1/presence", swarm.h)
    for call in (presence_small, presence_swarm):
        preflight(url, call, 200)
    say(f"{fig.backend}: presence")
    fig.presence_small = wrk.run(url, [presence_small], 16)
    fig.presence_swarm = wrk.run(url, [presence_swarm], 16)

    # One client in sequence; the same name each time, so each check-in supersedes the
    # last and the live count stays at 10 (or 1,000) + 1.
    narrow = ["tools/probe/**", "tools/probe.md"]
    for project, attr in ((small, "narrow_small"), (swarm, "narrow_swarm")):
        call = checkin_call(project.key, "probe-narrow", narrow)
        preflight(url, call, 201)
        say(f"{fig.backend}: narrow check-in, {len(project.tokens)} live")
        setattr(fig, attr, wrk.run(url, [call], 1))

    broad = checkin_call(swarm.key, "probe-broad", ["**/*.md"])
    r = httpx.post(url + broad.path, content=broad.body, headers=swarm.h, timeout=60)
    if r.status_code != 201:
        raise RuntimeError(f"broad check-in: {r.status_code} {r.text[:300]}")
    fig.broad_conflicts = len(r.json().get("conflicts", []))
    say(f"{fig.backend}: broad check-in ({fig.broad_conflicts} conflicts), {SWARM} live")
    fig.broad_swarm = wrk.run(url, [broad], 1)

    check = Call("POST", "/api/v1/conflicts/check", swarm.h, json.dumps({"paths": staged_paths()}))
    r = httpx.post(url + check.path, content=check.body, headers=swarm.h, timeout=60)
    if r.status_code != 200:
        raise RuntimeError(f"conflicts/check: {r.status_code} {r.text[:300]}")
    fig.check_conflicts = len(r.json().get("conflicts", []))
    say(f"{fig.backend}: conflicts/check of {STAGED_PATHS} paths")
    fig.check = wrk.run(url, [check], 16)


def burst_row(url: str, wrk: Wrk, fig: Figures) -> None:
    """A swarm launched at once: distinct agents check into one new project on 32
    connections (each its own package and notes file: no conflicts), so the live count
    grows through the run; wrk's threads start at their own share of the agents."""
    r = httpx.post(
        url + "/api/v1/projects",
        json={"name": f"burst-{secrets.token_hex(3)}", "heartbeat_ttl_seconds": 3600},
        headers=ADMIN,
    )
    r.raise_for_status()
    key = r.json()["api_key"]
    calls = [
        Call("POST", "/api/v1/checkin", {"X-API-Key": key}, json.dumps(member(i, "burst")))
        for i in range(BURST_AGENTS)
    ]
    say(f"{fig.backend}: a burst of distinct agents' check-ins, {BURST_CONNECTIONS} conn.")
    fig.burst = wrk.run(url, calls, BURST_CONNECTIONS)


def burst(f: Figures) -> str:
    """The burst row: rate against bare Litestar at the same connections, and p99."""
    load, bare = f.burst, f.bare_burst
    if load is None or bare is None or not bare.rate:
        return "—"
    ratio = load.rate / bare.rate
    ok = ratio >= 0.1 and load.p99_ms <= 100
    text = (
        f"{load.rate:,.0f} check-ins/s ({ratio:.3f}{TIMES} bare {bare.rate:,.0f}), "
        f"p50 {load.p50_ms:.1f} / p99 {load.p99_ms:.1f} ms {mark(ok)}"
    )
    return text + (f" [{load.errors} failed]" if load.errors else "")


# -- event sizes ----------------------------------------------------------------------------


class Recorder:
    """Reads a socket and keeps the largest frame of each type (events and control frames)."""

    def __init__(self, fig: Figures) -> None:
        self.fig = fig
        self.last_frame = time.monotonic()
        self.last_offset = 0

    def record(self, raw: str | bytes) -> dict[str, Any]:
        size = len(raw.encode() if isinstance(raw, str) else raw)
        frame = json.loads(raw)
        kind = str(frame.get("type", "?"))
        if kind in CONTROL_FRAMES:
            kind = f"{kind} (frame)"
        self.fig.frames[kind] = max(self.fig.frames.get(kind, 0), size)
        self.fig.counts[kind] = self.fig.counts.get(kind, 0) + 1
        if isinstance(frame.get("offset"), int):
            self.last_offset = max(self.last_offset, frame["offset"])
        self.last_frame = time.monotonic()
        return frame

    async def pump(self, ws: ClientConnection) -> None:
        with contextlib.suppress(Exception):
            async for raw in ws:
                self.record(raw)

    async def seen(self, kind: str, limit: float = 30.0) -> None:
        """Wait until a frame of this type has come (at most `limit` seconds)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and kind not in self.fig.frames:
            await asyncio.sleep(0.05)

    async def quiet(self, seconds: float = 1.0, limit: float = 20.0) -> None:
        """Wait until no frame came for `seconds` (at most `limit`)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and time.monotonic() - self.last_frame < seconds:
            await asyncio.sleep(0.1)


def ws_connect(ws_url: str, key: str, query: str = "") -> Any:
    return connect(
        f"{ws_url}/api/v1/events{query}",
        additional_headers={"X-API-Key": key},
        max_size=None,
        compression=None,
        ping_interval=None,
        open_timeout=60,
        close_timeout=5,
    )


def ok(r: httpx.Response, *expect: int) -> dict[str, Any]:
    if r.status_code not in (expect or (200, 201)):
        raise RuntimeError(
            f"{r.request.method} {r.request.url.path}: {r.status_code} {r.text[:300]}"
        )
    return dict(r.json())


async def event_sizes(url: str, ws_url: str, fig: Figures, swarm: Project) -> None:
    rec = Recorder(fig)
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        async with ws_connect(ws_url, swarm.key) as ws:
            pump = asyncio.create_task(rec.pump(ws))
            await rec.seen("presence.snapshot (frame)")
            await swarm_events(http, swarm)
            await rec.quiet()
            pump.cancel()
        # Resuming from the last offset: the replay.complete frame.
        async with ws_connect(ws_url, swarm.key, f"?since={rec.last_offset}") as ws:
            pump = asyncio.create_task(rec.pump(ws))
            await rec.seen("replay.complete (frame)")
            pump.cancel()
        await expiry_events(http, ws_url, rec)


async def swarm_events(http: httpx.AsyncClient, swarm: Project) -> None:
    """Every event type that can be caused at once, in the 1,000-session project."""
    h = swarm.h
    a = ok(await http.post("/api/v1/checkin", json=member(5000, "ev"), headers=h))
    ta = {**h, "X-Session-Token": a["session_token"]}
    # The broad one answers ~1,000 conflicts: agent.checkin + agent.conflict.
    b = ok(
        await http.post(
            "/api/v1/checkin",
            json={"agent_name": "ev-broad", "declared_files": ["**/*.md"]},
            headers=h,
        )
    )
    tb = {**h, "X-Session-Token": b["session_token"]}
    ok(
        await http.post(
            "/api/v1/status",
            json={"declared_files": ["**/*.md", "pkg*/**"], "status_text": "reviewing docs"},
            headers=tb,
        )
    )
    ok(await http.put("/api/v1/agents/ev-5000", json={"role": "bench"}, headers=h))
    t1 = ok(await http.post("/api/v1/tasks", json={"title": "one"}, headers=ta))
    t1_id = t1["task_id"]
    ok(await http.post(f"/api/v1/tasks/{t1_id}/claim", json={}, headers=ta))
    ok(await http.post(f"/api/v1/tasks/{t1_id}/notes", json={"body": "note"}, headers=ta))
    ok(await http.post(f"/api/v1/tasks/{t1_id}/status", json={"status": "done"}, headers=ta))
    t2 = ok(await http.post("/api/v1/tasks", json={"title": "two"}, headers=tb))
    ok(await http.post(f"/api/v1/tasks/{t2['task_id']}/claim", json={}, headers=tb))
    t3 = ok(await http.post("/api/v1/tasks", json={"title": "gated"}, headers=ta))
    cp = ok(
        await http.post(
            "/api/v1/checkpoints", json={"name": "review", "task_ids": [t3["task_id"]]}, headers=h
        )
    )
    ok(
        await http.post(
            f"/api/v1/checkpoints/{cp['checkpoint_id']}/resolve",
            json={"status": "passed"},
            headers=h,
        )
    )
    msg = ok(
        await http.post("/api/v1/messages", json={"to": "broadcast", "body": "hello"}, headers=ta)
    )
    t0 = {**h, "X-Session-Token": swarm.tokens[0]}
    ok(await http.post(f"/api/v1/messages/{msg['message_id']}/read", json={}, headers=t0))
    ok(await http.post(f"/api/v1/messages/{msg['message_id']}/ack", json={}, headers=t0))
    lease = ok(await http.post("/api/v1/leases", json={"resource": "deploy:bench"}, headers=ta))
    ok(await http.post(f"/api/v1/leases/{lease['lease_id']}/renew", json={}, headers=ta))
    ok(await http.post(f"/api/v1/leases/{lease['lease_id']}/release", json={}, headers=ta))
    # Its voters are every other live agent: ~1,000 names.
    vote = ok(
        await http.post(
            "/api/v1/consensus", json={"action": "deploy", "reason": "bench"}, headers=ta
        )
    )
    ok(
        await http.post(
            f"/api/v1/consensus/{vote['consensus_id']}/vote", json={"vote": "approve"}, headers=t0
        )
    )
    # Checking out releases its claimed task: agent.checkout + task.released.
    ok(await http.post("/api/v1/checkout", json={}, headers=tb))
    ok(await http.post("/api/v1/checkout", json={}, headers=ta))


async def expiry_events(http: httpx.AsyncClient, ws_url: str, rec: Recorder) -> None:
    """Timeouts and expiries, in a small project with a 2 s TTL: agent.timeout, task.stale,
    lease.expired, consensus.expired, and a vote approved and one rejected."""
    r = await http.post(
        "/api/v1/projects",
        json={
            "name": f"expiry-{secrets.token_hex(3)}",
            "heartbeat_interval_seconds": 1,
            "heartbeat_ttl_seconds": 2,
        },
        headers=ADMIN,
    )
    h = {"X-API-Key": (ok(r))["api_key"]}
    async with ws_connect(ws_url, h["X-API-Key"]) as ws:
        pump = asyncio.create_task(rec.pump(ws))
        x = ok(await http.post("/api/v1/checkin", json={"agent_name": "x"}, headers=h))
        y = ok(await http.post("/api/v1/checkin", json={"agent_name": "y"}, headers=h))
        tx = {**h, "X-Session-Token": x["session_token"]}
        ty = {**h, "X-Session-Token": y["session_token"]}

        async def keep_y() -> None:
            while True:
                await http.post("/api/v1/heartbeat", json={}, headers=ty)
                await asyncio.sleep(0.4)

        beat = asyncio.create_task(keep_y())
        try:
            task = ok(await http.post("/api/v1/tasks", json={"title": "x"}, headers=tx))
            ok(await http.post(f"/api/v1/tasks/{task['task_id']}/claim", headers=tx))
            ok(
                await http.post(
                    "/api/v1/leases", json={"resource": "r", "ttl_seconds": 1}, headers=ty
                )
            )
            ok(
                await http.post(
                    "/api/v1/consensus",
                    json={"action": "a", "reason": "r", "timeout_seconds": 1},
                    headers=tx,
                )
            )
            asked = ok(
                await http.post(
                    "/api/v1/consensus", json={"action": "b", "reason": "r"}, headers=ty
                )
            )
            ok(
                await http.post(
                    f"/api/v1/consensus/{asked['consensus_id']}/vote",
                    json={"vote": "approve"},
                    headers=tx,
                )
            )
            # x stops beating: it times out (its task goes stale); then y is alone.
            wanted = {"agent.timeout", "task.stale", "lease.expired", "consensus.expired"}
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not wanted <= set(rec.fig.frames):
                await asyncio.sleep(0.2)
            ok(
                await http.post(
                    "/api/v1/consensus", json={"action": "c", "reason": "r"}, headers=ty
                )
            )
            await rec.quiet()
        finally:
            beat.cancel()
            pump.cancel()


# -- idle attached sockets ----------------------------------------------------------------


WAL_WRITERS = """
SELECT DISTINCT xid::text FROM pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn)
WHERE xid <> '0'::xid AND block_ref ~ ('rel [0-9]+/' || $3::text || '/')
"""
# The WAL is read in slices as the window goes: on a busy shared server a checkpoint may
# recycle the segments of a whole minute before it ends.
WAL_SLICE_SECONDS = 3.0


async def wal_writers(
    conn: asyncpg.Connection, start_lsn: str, dboid: str, seconds: float
) -> set[str] | None:
    """The ids of the transactions that wrote to this database in the next `seconds`
    (None when the WAL could not be read)."""
    writers: set[str] = set()
    lsn = start_lsn
    deadline = time.monotonic() + seconds
    failed = False
    while (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(min(WAL_SLICE_SECONDS, left))
        now = str(await conn.fetchval("SELECT pg_current_wal_flush_lsn()::text"))
        if failed or now == lsn:
            # Nothing flushed since the last slice (an idle window's usual case), and
            # pg_walinspect refuses a start LSN that is not behind the flushed one.
            continue
        try:
            rows = await conn.fetch(WAL_WRITERS, lsn, now, dboid)
        except asyncpg.PostgresError as exc:
            say(f"reading the WAL failed ({exc}): write transactions not counted")
            failed = True
            continue
        writers.update(r[0] for r in rows)
        lsn = now
    return None if failed else writers


async def pg_counters(conn: asyncpg.Connection) -> dict[str, Any]:
    await conn.execute("SELECT pg_stat_clear_snapshot()")
    row = await conn.fetchrow(
        "SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())"
        " AS commits,"
        " (SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint"
        "  FROM pg_stat_user_tables) AS rows,"
        " pg_current_wal_flush_lsn()::text AS lsn,"
        " (SELECT oid FROM pg_database WHERE datname = current_database()) AS dboid"
    )
    return dict(row)


async def idle_sockets(
    base_url: str,
    ws_url: str,
    db_url: str,
    swarm: Project,
    window: float,
    connect_at_once: int = 50,
) -> dict[str, float]:
    """Attach a socket to each of the 1,000 live sessions, then count the database's writes
    while they sit idle for `window` seconds."""
    conn = await asyncpg.connect(db_url)
    try:
        walinspect = True
        try:
            await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        except asyncpg.PostgresError as exc:
            say(f"pg_walinspect unavailable ({exc}): write transactions not counted")
            walinspect = False
        async with httpx.AsyncClient(timeout=60) as http:
            r = await http.get(f"{base_url}/api/v1/presence", headers=swarm.h)
            latest = int(r.json()["offset"])  # resume from here: no snapshot per socket
        sockets: list[ClientConnection] = []
        gate = asyncio.Semaphore(connect_at_once)
        replies: dict[str, int] = {"attached": 0, "error": 0}
        failures: list[str] = []

        async def listen(ws: ClientConnection) -> None:
            """Count the reply to the attach, then read (and drop) whatever comes."""
            with contextlib.suppress(Exception):
                async for raw in ws:
                    kind = json.loads(raw).get("type")
                    if kind in replies:
                        replies[kind] += 1
                        if kind == "error":
                            failures.append(str(raw)[:300])

        async def attach(token: str) -> None:
            async with gate:
                ws = await ws_connect(ws_url, swarm.key, f"?since={latest}")
                sockets.append(ws)
                listeners.append(asyncio.create_task(listen(ws)))
                await ws.send(json.dumps({"type": "attach", "session_token": token}))

        listeners: list[asyncio.Task[None]] = []
        t0 = time.monotonic()
        await asyncio.gather(*(attach(t) for t in swarm.tokens[:IDLE_SOCKETS]))
        # The SPEC names no reply to `attach`; today's server answers `attached` (or an
        # error), so wait for those answers, but not forever for a server that sends none.
        deadline = time.monotonic() + 60
        while sum(replies.values()) < len(sockets) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        if failures:
            raise RuntimeError(f"{len(failures)} attaches failed, first: {failures[0]}")
        say(
            f"{len(sockets)} sockets open, {replies['attached']} attaches acknowledged, in "
            f"{time.monotonic() - t0:.1f} s; idle {window:.0f} s"
        )
        await asyncio.sleep(5)  # the attaches' own writes settle
        before = await pg_counters(conn)
        t1 = time.monotonic()
        if walinspect:
            writers = await wal_writers(conn, before["lsn"], str(before["dboid"]), window)
        else:
            writers = None
            await asyncio.sleep(window)
        after = await pg_counters(conn)
        elapsed = time.monotonic() - t1
        per_minute = 60 / elapsed
        result = {
            "sockets": float(len(sockets)),
            "acknowledged": float(replies["attached"]),
            "seconds": elapsed,
            "rows": (after["rows"] - before["rows"]) * per_minute,
            "commits": (after["commits"] - before["commits"]) * per_minute,
        }
        if writers is not None:
            result["writes"] = len(writers) * per_minute
        for task in listeners:
            task.cancel()
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
        return result
    finally:
        await conn.close()


# -- one backend ----------------------------------------------------------------------------


def bench_backend(
    backend: str, db_url: str, wrk: Wrk, bare_url: str, work: Path, idle_window: float
) -> Figures:
    fig = Figures(backend)
    say(f"{backend}: bare Litestar")
    bare_call = Call("POST", "/bare", {}, json.dumps({"agent_name": "bare", "n": 1}))
    fig.bare = wrk.run(bare_url, [bare_call], 16)
    fig.bare_burst = wrk.run(bare_url, [bare_call], BURST_CONNECTIONS)
    server = bench_server(
        work, ADMIN_TOKEN, database_url=db_url, redis_url="", rate_limit_per_minute=0
    ).start(timeout=90)
    try:
        say(f"{backend}: {SWARM + SMALL} check-ins to set up")
        t0 = time.monotonic()

        async def setup() -> tuple[Project, Project]:
            async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
                # A long TTL: the sessions stay live for the whole run without heartbeats.
                ttl = {"heartbeat_interval_seconds": 30, "heartbeat_ttl_seconds": 3600}
                tag = secrets.token_hex(3)
                small = await make_project(http, f"small-{tag}", SMALL, "small", **ttl)
                swarm = await make_project(http, f"swarm-{tag}", SWARM, "swarm", **ttl)
                return small, swarm

        small, swarm = asyncio.run(setup())
        fig.setup_seconds = time.monotonic() - t0
        http_rows(server.url, wrk, fig, small, swarm)
        burst_row(server.url, wrk, fig)
        say(f"{backend}: event sizes")
        asyncio.run(event_sizes(server.url, server.ws_url, fig, swarm))
        if backend == "postgres":
            say(f"{backend}: {IDLE_SOCKETS} attached idle sockets")
            fig.idle = asyncio.run(
                idle_sockets(server.url, server.ws_url, db_url, swarm, idle_window)
            )
    except Exception:
        print(server.log()[-3000:], file=sys.stderr)
        raise
    finally:
        server.stop()
    return fig


# -- the table ------------------------------------------------------------------------------


def mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def kb(n: int) -> str:
    return f"{n:,} B" if n < 10_000 else f"{n / 1024:,.1f} KB"


def throughput(load: Load | None, bare: Load | None, target: float | None = None) -> str:
    if load is None:
        return "—"
    text = f"{load.rate:,.0f} req/s, p50 {load.p50_ms:.1f} ms"
    if bare is not None and bare.rate:
        ratio = load.rate / bare.rate
        text += f" ({ratio:.2f}{TIMES} bare)" if ratio >= 0.1 else f" ({ratio:.2g}{TIMES} bare)"
        if target is not None:
            text += f" {mark(ratio >= target)}"
    if load.errors:
        text += f" [{load.errors} failed]"
    return text


def latency(load: Load | None, check: Callable[[Load], bool] | None = None, extra: str = "") -> str:
    if load is None:
        return "—"
    text = f"p50 {load.p50_ms:.1f} / p99 {load.p99_ms:.1f} ms{extra}"
    if check is not None:
        text += f" {mark(check(load))}"
    if load.errors:
        text += f" [{load.errors} failed]"
    return text


def largest_event(fig: Figures) -> str:
    events = {k: v for k, v in fig.frames.items() if not k.endswith("(frame)")}
    if not events:
        return "—"
    kind = max(events, key=lambda k: events[k])
    return f"{kind} {kb(events[kind])} {mark(events[kind] <= EVENT_LIMIT)}"


def idle_writes(fig: Figures) -> str:
    if fig.idle is None:
        return "— (PostgreSQL only)"
    writes = fig.idle.get("writes")
    rows = f"{fig.idle['rows']:,.0f} rows, {fig.idle['commits']:,.0f} commits incl. reads"
    if writes is None:
        return f"? write transactions ({rows})"
    return f"{writes:,.0f} write transactions ({rows}) {mark(writes <= 60)}"


def table(figs: list[Figures]) -> str:
    def row(what: str, target: str, cell: Callable[[Figures], str]) -> str:
        return "| " + " | ".join([what, *(cell(f) for f in figs), target]) + " |"

    def narrow_ratio(f: Figures) -> str:
        if f.narrow_swarm is None or f.narrow_small is None or not f.narrow_small.p50_ms:
            return latency(f.narrow_swarm)
        ratio = f.narrow_swarm.p50_ms / f.narrow_small.p50_ms
        return latency(f.narrow_swarm, extra=f" ({ratio:.1f}{TIMES} 10 live) {mark(ratio <= 1.5)}")

    head = ["what", *(f.backend for f in figs), "target (#13)"]
    lines = [
        "| " + " | ".join(head) + " |",
        "| " + " | ".join(["---"] * len(head)) + " |",
        row("bare Litestar POST, same uvicorn (16 conn.)", "", lambda f: throughput(f.bare, None)),
        row(
            "heartbeat, 10 live (16 conn.)",
            f"≥ 0.5{TIMES} bare",
            lambda f: throughput(f.heartbeat, f.bare, 0.5),
        ),
        row("presence, 10 live (16 conn.)", "", lambda f: throughput(f.presence_small, f.bare)),
        row(
            f"presence, {SWARM:,} live (16 conn.)",
            f"≥ 0.1{TIMES} bare",
            lambda f: throughput(f.presence_swarm, f.bare, 0.1),
        ),
        row(
            f"check-in burst, distinct agents, one project ({BURST_CONNECTIONS} conn.)",
            f"≥ 0.1{TIMES} bare, p99 ≤ 100 ms (#30)",
            burst,
        ),
        row(
            "check-in, narrow, 10 live (1 client in sequence)",
            "",
            lambda f: latency(f.narrow_small),
        ),
        row(
            f"check-in, narrow, {SWARM:,} live (1 client in sequence)",
            f"p50 ≤ 1.5{TIMES} at 10 live",
            narrow_ratio,
        ),
        row(
            f"check-in, broad `**/*.md`, {SWARM:,} live (1 client in sequence)",
            "p50 ≤ 30 ms",
            lambda f: latency(
                f.broad_swarm,
                lambda x: x.p50_ms <= 30,
                extra=f", {f.broad_conflicts:,} conflicts",
            ),
        ),
        row(
            f"conflicts/check, {STAGED_PATHS:,} paths, {SWARM:,} live (16 conn.)",
            "",
            lambda f: throughput(f.check, f.bare) + f", {f.check_conflicts} conflicts",
        ),
        row("largest event", "≤ 64 KB", largest_event),
        row(
            f"DB writes per minute, {IDLE_SOCKETS:,} attached idle sockets",
            "≤ 60",
            idle_writes,
        ),
    ]
    return "\n".join(lines)


def frames_table(figs: list[Figures]) -> str:
    kinds = sorted({k for f in figs for k in f.frames} | set(EXPECTED_EVENTS))
    head = ["frame", *(f"{f.backend} largest" for f in figs), "≤ 64 KB"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * len(head)) + " |"]
    for kind in kinds:
        sizes = [f.frames.get(kind) for f in figs]
        cells = [kb(s) if s is not None else "not seen" for s in sizes]
        seen = [s for s in sizes if s is not None]
        verdict = "" if kind.endswith("(frame)") or not seen else mark(max(seen) <= EVENT_LIMIT)
        lines.append("| " + " | ".join([kind, *cells, verdict]) + " |")
    return "\n".join(lines)


def load_average() -> str:
    with contextlib.suppress(OSError):
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    return "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="about 1½ minutes")
    ap.add_argument(
        "--backends",
        help="comma-separated: sqlite,postgres (default both; --quick: postgres)",
    )
    ap.add_argument("--seconds", type=float, help="wrk duration per row (default 6, quick 2)")
    ap.add_argument("--idle-seconds", type=float, help="idle socket window (default 60, quick 15)")
    ap.add_argument(
        "--postgres-url",
        default=POSTGRES_ADMIN_URL,
        help="a server where a scratch database may be created and dropped",
    )
    args = ap.parse_args()
    backends = (args.backends or ("postgres" if args.quick else "sqlite,postgres")).split(",")
    unknown = set(backends) - {"sqlite", "postgres"}
    if unknown:
        ap.error(f"--backends: unknown {', '.join(sorted(unknown))} (sqlite, postgres)")
    seconds = args.seconds or (2.0 if args.quick else 6.0)
    idle_window = args.idle_seconds or (15.0 if args.quick else 60.0)

    wrk_binary = find_wrk()
    if "postgres" in backends:
        postgres_or_exit(args.postgres_url)
    raise_open_files()
    started = time.monotonic()
    load_before = load_average()
    work = Path(tempfile.mkdtemp(prefix="agentlanes-bench-api-"))
    wrk = Wrk(wrk_binary, work, seconds)
    bare_port = free_port()
    bare = start_bare(bare_port)
    bare_url = f"http://127.0.0.1:{bare_port}"
    figs: list[Figures] = []
    try:
        for backend in backends:
            if backend == "sqlite":
                url = f"sqlite:///{work / 'bench.db'}"
                figs.append(bench_backend(backend, url, wrk, bare_url, work, idle_window))
            else:
                with scratch_postgres(args.postgres_url) as db_url:
                    figs.append(bench_backend(backend, db_url, wrk, bare_url, work, idle_window))
    finally:
        bare.terminate()
        bare.wait()
        shutil.rmtree(work, ignore_errors=True)

    print(
        f"\nagentlanes serve vs bare Litestar (bench/bare_app.py), same uvicorn, wrk "
        f"{seconds:.0f} s per row; server and wrk on the same {os.cpu_count()} cores; "
        f"load average {load_before} before, {load_average()} after; "
        f"{time.monotonic() - started:.0f} s in all\n"
    )
    print(table(figs))
    print("\nLargest frame of each type (events, and the snapshot/replay frames):\n")
    print(frames_table(figs))
    for f in figs:
        extra = ""
        if f.idle:
            extra = (
                f"; idle window {f.idle['seconds']:.0f} s over {f.idle['sockets']:.0f} sockets"
                f" ({f.idle['acknowledged']:.0f} attaches acknowledged)"
            )
        setup = f"{SWARM + SMALL:,} check-ins to set up took {f.setup_seconds:.0f} s"
        print(f"\n{f.backend}: {setup}{extra}")


if __name__ == "__main__":
    main()
