"""Request throughput and latency of the core endpoints, beside a bare Litestar endpoint.

    .venv/bin/python bench/api.py [--requests 2000] [--concurrency 16] [--postgres]

Starts real server processes on 127.0.0.1 (agentlanes on a temp SQLite file, and on the
local PostgreSQL with --postgres; the bare app), drives each with httpx from this process,
and prints one table. Everything is bounded by --requests.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.server import ServerProcess, free_port  # noqa: E402

ADMIN = {"Authorization": "Bearer bench-admin"}


async def drive(
    n: int, concurrency: int, call: Callable[[int], Awaitable[httpx.Response]]
) -> tuple[float, list[float]]:
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


async def bench_agentlanes(url: str, label: str, n: int, c: int) -> list[str]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        r = await http.post(
            "/api/v1/projects", json={"name": f"bench-{secrets.token_hex(4)}"}, headers=ADMIN
        )
        key = r.json()["api_key"]
        h = {"X-API-Key": key}
        # A standing crowd of 50 live sessions with patterns, like a busy repository.
        tokens = []
        for i in range(50):
            s = await http.post(
                "/api/v1/checkin",
                json={
                    "agent_name": f"crowd{i}",
                    "declared_files": [f"pkg{i}/**", f"docs/{i}/*.md"],
                },
                headers=h,
            )
            tokens.append(s.json()["session_token"])
        rows = []
        elapsed, lat = await drive(
            n,
            c,
            lambda i: http.post(
                "/api/v1/heartbeat", headers={**h, "X-Session-Token": tokens[i % 50]}
            ),
        )
        rows.append(row(f"{label} heartbeat", elapsed, lat))
        elapsed, lat = await drive(n, c, lambda i: http.get("/api/v1/presence", headers=h))
        rows.append(row(f"{label} presence (50 live)", elapsed, lat))
        elapsed, lat = await drive(
            n // 4,
            c,
            lambda i: http.post(
                "/api/v1/checkin",
                json={
                    "agent_name": f"w{i % 20}",
                    "declared_files": [f"src/m{i % 20}/**", "src/shared/*.py"],
                },
                headers=h,
            ),
        )
        rows.append(row(f"{label} check-in (supersede, 70 live)", elapsed, lat))
        elapsed, lat = await drive(
            n,
            c,
            lambda i: http.post(
                "/api/v1/conflicts/check",
                json={"paths": [f"pkg{i % 50}/a.py", "README.md"]},
                headers=h,
            ),
        )
        rows.append(row(f"{label} conflicts/check", elapsed, lat))
        return rows


async def bench_bare(url: str, n: int, c: int) -> list[str]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        elapsed, lat = await drive(n, c, lambda i: http.post("/bare", json={"x": i}))
        return [row("baseline: bare Litestar POST", elapsed, lat)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument(
        "--postgres", action="store_true", help="also run against PostgreSQL (database test)"
    )
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="agentlanes-bench-"))
    env = {"AGENTLANES_ADMIN_TOKEN": "bench-admin", "AGENTLANES_LOG_LEVEL": "warning"}
    targets = [("sqlite", f"sqlite:///{work / 'bench.db'}")]
    if args.postgres:
        targets.append(("postgres", "postgresql://postgres@127.0.0.1:5432/test"))

    port = free_port()
    bare = subprocess.Popen([sys.executable, str(ROOT / "bench" / "bare_app.py"), str(port)])
    rows = ["| endpoint | req/s | p50 ms | p99 ms |", "| --- | ---: | ---: | ---: |"]
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                httpx.post(f"http://127.0.0.1:{port}/bare", json={}, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        rows += asyncio.run(bench_bare(f"http://127.0.0.1:{port}", args.requests, args.concurrency))
        for label, url in targets:
            server = ServerProcess({**env, "AGENTLANES_DATABASE_URL": url}, work).start()
            try:
                rows += asyncio.run(
                    bench_agentlanes(server.url, label, args.requests, args.concurrency)
                )
            finally:
                server.stop()
    finally:
        bare.terminate()
        bare.wait()
    print(
        f"\n{args.requests} requests per row, {args.concurrency} concurrent clients, "
        f"server and client on one machine ({os.cpu_count()} cores)\n"
    )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
