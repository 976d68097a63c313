"""Sizing figures for docs/operations.md: memory per open event socket, per live
session, and storage per kept event, measured on a real `agentlanes serve` (SQLite).

    .venv/bin/python bench/sizing.py [--sockets 500] [--sessions 1000] [--events 2000]

Resident memory (VmRSS of the server process) is read before and after each step; the
figure is the growth divided by the count. Each session declares its own area and three
patterns of its own, so no event lists conflicts (one that does is bigger: each
conflict listed adds its JSON). Events are status changes; the database file's growth
(after a WAL checkpoint) divided by their number is the storage per kept event.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.server import bench_server

ADMIN = {"Authorization": "Bearer admin-secret-for-the-test-suite-2026-sizing"}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def settle(pid: int) -> int:
    time.sleep(1.5)
    return rss_kib(pid)


async def open_sockets(ws_url: str, key: str, n: int) -> list[object]:
    socks = []
    for _ in range(n):
        ws = await websockets.connect(
            f"{ws_url}/api/v1/events", additional_headers={"X-API-Key": key}, compression=None
        )
        await ws.recv()  # presence.snapshot
        socks.append(ws)
    return socks


async def close_sockets(socks: list[object]) -> None:
    await asyncio.gather(*(s.close() for s in socks))  # type: ignore[attr-defined]


def db_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentlanes-sizing-"))
    db = work / "sizing.db"
    server = bench_server(
        work,
        ADMIN["Authorization"].split()[1],
        database_url=f"sqlite:///{db}",
        heartbeat_ttl_seconds=3600,
    ).start()
    assert server.proc is not None
    pid = server.proc.pid
    try:
        c = httpx.Client(base_url=server.url, timeout=30)
        key = c.post("/api/v1/projects", headers=ADMIN, json={"name": "sizing"}).json()["api_key"]
        h = {"X-API-Key": key}
        c.get("/api/v1/presence", headers=h)
        base = settle(pid)

        loop = asyncio.new_event_loop()
        socks = loop.run_until_complete(open_sockets(server.ws_url, key, args.sockets))
        with_sockets = settle(pid)
        per_socket = (with_sockets - base) * 1024 / args.sockets
        loop.run_until_complete(close_sockets(socks))
        after_close = settle(pid)

        tokens = []
        for i in range(args.sessions):
            r = c.post(
                "/api/v1/checkin",
                headers=h,
                json={
                    "agent_name": f"agent-{i}",
                    "declared_area": f"area-{i}",
                    "declared_files": [f"pkg{i}/src/**/*.py", f"pkg{i}/tests/**", f"docs/{i}.md"],
                },
            )
            tokens.append(r.json()["session_token"])
        with_sessions = settle(pid)
        per_session = (with_sessions - after_close) * 1024 / args.sessions

        before_events = db_bytes(db)
        for i in range(args.events):
            c.post(
                "/api/v1/status",
                headers={**h, "X-Session-Token": tokens[i % len(tokens)]},
                json={"status_text": f"step {i}: editing pkg{i % 97}/src/module_{i}.py"},
            )
        after_events_rss = settle(pid)
        per_event_disk = (db_bytes(db) - before_events) / args.events
        per_event_rss = (after_events_rss - with_sessions) * 1024 / args.events
        rows = [
            ("server RSS at start (one project)", f"{base / 1024:.1f} MiB"),
            (f"per open event socket ({args.sockets})", f"{per_socket / 1024:.1f} KiB"),
            ("RSS after the sockets closed", f"{after_close / 1024:.1f} MiB"),
            (f"per live session, 3 patterns ({args.sessions})", f"{per_session / 1024:.1f} KiB"),
            (f"per kept event on disk ({args.events})", f"{per_event_disk:.0f} bytes"),
            ("per event, server memory", f"{per_event_rss:.0f} bytes"),
        ]
        for label, value in rows:
            print(f"{label:<42} {value}")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("AGENTLANES_REDIS_URL", "")
    sys.exit(main())
