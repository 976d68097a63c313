"""Heartbeats through nginx (deploy/nginx.conf as shipped) in front of three processes,
beside one process direct and nginx in front of one, in the same run.

    .venv/bin/python bench/nginx.py [--seconds 10] [--connections 32] [--processes 3]

Every server is a real `agentlanes serve` on one scratch PostgreSQL database and the
machine's Redis (the multi-process deployment), on 127.0.0.1. nginx is Debian's package
(`bash scripts/ensure-nginx.sh`), started with its own prefix in a temporary folder; the
load generator is wrk (`bash scripts/ensure-wrk.sh`). The heartbeats are those of 100 live
sessions of one project, sent in turn over each connection. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.server import bench_server  # noqa: E402
from bench.services import (  # noqa: E402
    POSTGRES_ADMIN_URL,
    REDIS_URL,
    postgres_or_exit,
    raise_open_files,
    redis_or_exit,
    scratch_postgres,
)
from bench.wrk import Call, Load, Wrk, find_wrk, preflight  # noqa: E402
from tests.support.nginx import PrivateNginx  # noqa: E402

ADMIN_TOKEN = "bench-admin-token-for-the-nginx-run-2026"
SESSIONS = 100


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


async def sessions(url: str) -> list[Call]:
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        r = await http.post("/api/v1/projects", json={"name": "hb"}, headers=admin)
        r.raise_for_status()
        key = r.json()["api_key"]
        calls = []
        for i in range(SESSIONS):
            s = await http.post(
                "/api/v1/checkin", json={"agent_name": f"hb-{i}"}, headers={"X-API-Key": key}
            )
            s.raise_for_status()
            headers = {"X-API-Key": key, "X-Session-Token": s.json()["session_token"]}
            calls.append(Call("POST", "/api/v1/heartbeat", headers, "{}"))
    return calls


def row(name: str, load: Load, base: Load | None) -> str:
    ratio = (
        f"{load.rate / base.rate:.2f}\N{MULTIPLICATION SIGN}"
        if base
        else "1\N{MULTIPLICATION SIGN}"
    )
    return (
        f"| {name} | {load.rate:,.0f} | {ratio} | {load.p50_ms:.1f} | {load.p99_ms:.1f} "
        f"| {load.errors} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--pg-admin-url", default=POSTGRES_ADMIN_URL)
    parser.add_argument("--redis-url", default=REDIS_URL)
    args = parser.parse_args()
    raise_open_files()
    postgres_or_exit(args.pg_admin_url)
    redis_or_exit(args.redis_url)
    wrk_binary = find_wrk()
    with (
        tempfile.TemporaryDirectory(prefix="agentlanes-nginx-bench-") as tmp,
        scratch_postgres(args.pg_admin_url) as database_url,
    ):
        workdir = Path(tmp)
        settings = {
            "redis_url": args.redis_url,
            "redis_channel_prefix": f"bench-{secrets.token_hex(4)}",
            "allowed_hosts": "127.0.0.1,localhost",
            "rate_limit_per_minute": 0,
        }
        backends = [
            bench_server(workdir, ADMIN_TOKEN, database_url=database_url, **settings)
            for _ in range(args.processes)
        ]
        nginx_all = PrivateNginx(workdir / "all", [f"127.0.0.1:{b.port}" for b in backends])
        nginx_one = PrivateNginx(workdir / "one", [f"127.0.0.1:{backends[0].port}"])
        try:
            say(f"starting {args.processes} processes on PostgreSQL + Redis, and two nginx")
            with ThreadPoolExecutor(len(backends)) as pool:
                list(pool.map(lambda b: b.start(timeout=120), backends))
            nginx_all.start()
            nginx_one.start()
            # Checked in through nginx, as agents would: every process sees the project.
            calls = asyncio.run(sessions(nginx_all.url))
            wrk = Wrk(wrk_binary, workdir, args.seconds)
            rows: list[tuple[str, Load]] = []
            for name, url in (
                ("one process, direct", backends[0].url),
                ("nginx \N{RIGHTWARDS ARROW} one process", nginx_one.url),
                (f"nginx \N{RIGHTWARDS ARROW} {args.processes} processes", nginx_all.url),
                *(
                    (f"process {i + 1} of {args.processes}, direct", b.url)
                    for i, b in enumerate(backends[1:], 1)
                ),
                (f"nginx \N{RIGHTWARDS ARROW} {args.processes} processes, again", nginx_all.url),
            ):
                preflight(url, calls[0], 200)
                say(f"heartbeats: {name}")
                rows.append((name, wrk.run(url, calls, args.connections)))
        finally:
            nginx_all.stop()
            nginx_one.stop()
            for backend in backends:
                backend.stop()
    base = rows[0][1]
    load1, load5, _ = os.getloadavg()
    print(
        f"\nHeartbeats, {args.connections} connections, {args.seconds:g} s each, "
        f"{SESSIONS} live sessions of one project, PostgreSQL + Redis "
        f"({os.cpu_count()} cores, load average {load1:.1f}/{load5:.1f}):\n"
    )
    print("| path | heartbeats/s | vs direct | p50 ms | p99 ms | failed |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, load in rows:
        print(row(name, load, base if load is not base else None))


if __name__ == "__main__":
    main()
