"""Throughput of the coordination endpoints, beside the heartbeat of the same server.

    .venv/bin/python bench/coordination.py [--requests 1000] [--concurrency 16] [--postgres]

Starts a real server on 127.0.0.1 (a temp SQLite file; also the local PostgreSQL with
--postgres), drives it with httpx from this process and prints one table. Every write takes
the project lock, so the heartbeat row (a write without it) is the baseline to read the
others against. Bounded by --requests.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.api import ADMIN, ADMIN_TOKEN  # noqa: E402
from bench.server import bench_server  # noqa: E402

AGENTS = 32


async def drive(
    n: int, concurrency: int, call: Callable[[int], Awaitable[httpx.Response]]
) -> tuple[float, list[float]]:
    """``n`` calls from ``concurrency`` clients: the seconds they took, and each one's."""
    latencies: list[float] = []
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            t0 = time.perf_counter()
            r = await call(i)
            latencies.append(time.perf_counter() - t0)
            if r.status_code >= 500:
                raise RuntimeError(f"{r.status_code}: {r.text}")

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - t0, latencies


def row(name: str, elapsed: float, lat: list[float]) -> str:
    lat.sort()
    p50 = statistics.median(lat) * 1000
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
    return f"| {name} | {len(lat) / elapsed:,.0f} | {p50:.1f} | {p99:.1f} |"


async def bench(url: str, label: str, n: int, c: int) -> list[str]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        r = await http.post(
            "/api/v1/projects", json={"name": f"bench-{secrets.token_hex(4)}"}, headers=ADMIN
        )
        h = {"X-API-Key": r.json()["api_key"]}
        tokens = []
        for i in range(AGENTS):
            s = await http.post(
                "/api/v1/checkin",
                json={"agent_name": f"a{i}", "declared_files": [f"pkg{i}/**"]},
                headers=h,
            )
            tokens.append(s.json()["session_token"])

        def auth(i: int) -> dict[str, str]:
            return {**h, "X-Session-Token": tokens[i % AGENTS]}

        rows = []
        elapsed, lat = await drive(n, c, lambda i: http.post("/api/v1/heartbeat", headers=auth(i)))
        rows.append(row(f"{label} heartbeat (baseline)", elapsed, lat))
        task_ids: list[str] = []

        async def create(i: int) -> httpx.Response:
            reply = await http.post(
                "/api/v1/tasks",
                json={"title": f"t{i}", "priority": i % 5, "paths": [f"src/m{i % 50}/**"]},
                headers=h,
            )
            task_ids.append(reply.json()["task_id"])
            return reply

        elapsed, lat = await drive(n, c, create)
        rows.append(row(f"{label} task create", elapsed, lat))
        elapsed, lat = await drive(
            n // 4, c, lambda i: http.get("/api/v1/tasks/ready?limit=50", headers=h)
        )
        rows.append(row(f"{label} tasks/ready ({n} pending, {AGENTS} live)", elapsed, lat))

        async def claim_and_finish(i: int) -> httpx.Response:
            # One worker per agent token at a time would be needed for one-active-task; each
            # call here claims then finishes, so a token is free again when it returns.
            tid = task_ids[i]
            got = await http.post(f"/api/v1/tasks/{tid}/claim", headers=auth(i))
            if got.status_code != 200:
                return got
            return await http.post(
                f"/api/v1/tasks/{tid}/status", json={"status": "done"}, headers=auth(i)
            )

        elapsed, lat = await drive(min(n, AGENTS * 8), min(c, AGENTS), claim_and_finish)
        rows.append(row(f"{label} claim + done (2 requests)", elapsed, lat))

        async def lease_cycle(i: int) -> httpx.Response:
            got = await http.post(
                "/api/v1/leases", json={"resource": f"res:{i % 64}"}, headers=auth(i)
            )
            if got.status_code != 201:
                return got
            return await http.post(
                f"/api/v1/leases/{got.json()['lease_id']}/release", headers=auth(i)
            )

        elapsed, lat = await drive(n, c, lease_cycle)
        rows.append(row(f"{label} lease acquire + release (2 requests)", elapsed, lat))
        elapsed, lat = await drive(
            n,
            c,
            lambda i: http.post(
                "/api/v1/messages",
                json={"to": f"a{(i + 1) % AGENTS}", "body": "x" * 500},
                headers=auth(i),
            ),
        )
        rows.append(row(f"{label} message send (500 chars)", elapsed, lat))
        elapsed, lat = await drive(
            n, c, lambda i: http.get("/api/v1/messages/inbox?limit=20", headers=auth(i))
        )
        rows.append(row(f"{label} inbox (20 of ~{n // AGENTS})", elapsed, lat))
        return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--postgres", action="store_true", help="also run against PostgreSQL")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentlanes-bench-"))
    targets = [("sqlite", f"sqlite:///{work / 'bench.db'}")]
    if args.postgres:
        targets.append(("postgres", "postgresql://postgres@127.0.0.1:5432/test"))
    rows = ["| endpoint | req/s | p50 ms | p99 ms |", "| --- | ---: | ---: | ---: |"]
    for label, url in targets:
        server = bench_server(work, ADMIN_TOKEN, database_url=url).start()
        try:
            rows += asyncio.run(bench(server.url, label, args.requests, args.concurrency))
        finally:
            server.stop()
    print(
        f"\n{args.requests} requests per row (fewer where noted), {args.concurrency} concurrent "
        f"clients, server and client on one machine ({os.cpu_count()} cores)\n"
    )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
