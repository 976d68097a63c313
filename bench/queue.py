"""Waiting for a lane: release → grant latency, and a simulated swarm on hot files.

    .venv/bin/python bench/queue.py [--handovers 1000] [--processes 3] [--swarm-only]
                                    [--no-swarm] [--retry-seconds 5]

1. **Hand-overs.** Two agents take turns on one file in a block-mode project: the holder
   releases (``POST /status`` with ``declared_files: []``), the other is waiting for it
   (``POST /queue``) and hears ``claim.granted`` on its event socket. Measured from the
   moment the release is sent to the frame's arrival, and from the release's answer. The
   baseline in the same run: a status change and its own ``agent.status`` frame on the same
   socket (the hub's delivery alone). One process (SQLite), then three processes on
   PostgreSQL + Redis behind nginx (deploy/nginx.conf), the socket and the releases
   spread by nginx over the processes.
2. **The swarm.** 30 agents take 200 short tasks (0.3 s of work each) over 55 files, 5 of
   them hot (60 % of tasks need one hot file, every task one or two of the 50 others). An
   agent claims its task's files (``POST /status``); refused, it either (a) retries every
   ``--retry-seconds`` (5), or (b) waits in the queue (``POST /queue``) for the grant; then
   works and releases. Makespan, refusals and wasted retries per strategy. (c) "queue +
   range claims": a task on a hot file changes one of its ``FUNCTIONS`` functions (20
   lines each, one base), and claims only those lines (``claims: [{path, base, ranges}]``
   beside its other files): two tasks on different functions of one hot file go on
   together; refused (the same function), it waits in the queue for the file as (b).

Servers are real ``agentlanes serve`` processes on 127.0.0.1 (PostgreSQL: a scratch
database on the machine's server; Redis: the machine's). Prints Markdown tables.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, bench/ comes first on the path, and this file would stand in for the
# standard library's queue (which concurrent.futures and asyncio import).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import secrets  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import httpx  # noqa: E402
import websockets  # noqa: E402

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
from tests.support.nginx import PrivateNginx  # noqa: E402

ADMIN_TOKEN = "bench-admin-token-for-the-queue-run-2026"
HOT = [f"src/hot{i}.py" for i in range(5)]
COLD = [f"src/mod{i}.py" for i in range(50)]
# (c): each hot file has this many functions of FUNCTION_LINES lines, all on one base.
FUNCTIONS = 8
FUNCTION_LINES = 20
BASE = "b" * 40


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def new_project(url: str, **body: Any) -> str:
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        r = await http.post(
            "/api/v1/projects", json={"name": f"q-{secrets.token_hex(3)}", **body}, headers=admin
        )
        r.raise_for_status()
        return str(r.json()["api_key"])


class Socket:
    """One event socket of the project; frames handed to whoever waits for them."""

    def __init__(self, ws_url: str, key: str) -> None:
        self.ws_url, self.key = ws_url, key
        self.waiters: list[tuple[Callable[[dict[str, Any]], bool], asyncio.Future[float]]] = []
        self.ws: Any = None
        self.task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        self.ws = await websockets.connect(
            f"{self.ws_url}/api/v1/events",
            additional_headers={"X-API-Key": self.key},
            max_size=None,
        )
        json.loads(await self.ws.recv())  # the snapshot
        self.task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        async for raw in self.ws:
            arrived = time.perf_counter()
            frame = json.loads(raw)
            for match, fut in list(self.waiters):
                if not fut.done() and match(frame):
                    fut.set_result(arrived)
                    self.waiters.remove((match, fut))

    def expect(self, match: Callable[[dict[str, Any]], bool]) -> asyncio.Future[float]:
        fut: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiters.append((match, fut))
        return fut

    async def close(self) -> None:
        if self.task:
            self.task.cancel()
        await self.ws.close()


@dataclass
class Handovers:
    grant_from_sent: list[float] = field(default_factory=list)
    grant_from_answer: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)


async def handovers(url: str, ws_url: str, n: int) -> Handovers:
    """``n`` hand-overs of one file between two agents, and as many baseline round trips."""
    key = await new_project(url, conflict_mode="block")
    out = Handovers()
    socket = Socket(ws_url, key)
    await socket.open()
    h = {"X-API-Key": key}
    async with httpx.AsyncClient(base_url=url, headers=h, timeout=30) as http:

        async def checkin(name: str, files: list[str]) -> str:
            r = await http.post(
                "/api/v1/checkin", json={"agent_name": name, "declared_files": files}
            )
            r.raise_for_status()
            return str(r.json()["session_token"])

        tokens = [await checkin("claude-a", ["src/router.py"]), await checkin("codex-b", [])]
        for i in range(n):
            holder, waiter = tokens[i % 2], tokens[(i + 1) % 2]
            q = await http.post(
                "/api/v1/queue",
                json={"paths": ["src/router.py"]},
                headers={"X-Session-Token": waiter},
            )
            assert q.status_code == 202, q.text
            queue_id = q.json()["queue_id"]
            granted = socket.expect(
                lambda f, qid=queue_id: (
                    f.get("type") == "claim.granted" and f["data"]["entry"]["queue_id"] == qid
                )
            )
            sent = time.perf_counter()
            r = await http.post(
                "/api/v1/status", json={"declared_files": []}, headers={"X-Session-Token": holder}
            )
            answered = time.perf_counter()
            assert r.status_code == 200, r.text
            arrived = await asyncio.wait_for(granted, 30)
            out.grant_from_sent.append((arrived - sent) * 1000)
            out.grant_from_answer.append((arrived - answered) * 1000)
            # Baseline: a plain status change of the new holder and its own frame.
            text = f"turn {i}"
            seen = socket.expect(
                lambda f, t=text: (
                    f.get("type") == "agent.status" and f["data"]["session"]["status_text"] == t
                )
            )
            sent = time.perf_counter()
            r = await http.post(
                "/api/v1/status", json={"status_text": text}, headers={"X-Session-Token": waiter}
            )
            assert r.status_code == 200, r.text
            out.baseline.append((await asyncio.wait_for(seen, 30) - sent) * 1000)
    await socket.close()
    return out


# -- the swarm -----------------------------------------------------------------------------


def tasks(rng: random.Random, count: int) -> list[list[str]]:
    out = []
    for _ in range(count):
        files = rng.sample(COLD, rng.choice((1, 2)))
        if rng.random() < 0.6:
            files.append(rng.choice(HOT))
        out.append(sorted(files))
    return out


@dataclass
class SwarmRun:
    makespan: float = 0.0
    refusals: int = 0
    retries: int = 0
    waits: list[float] = field(default_factory=list)


def scope(files: list[str], strategy: str, rng: random.Random) -> dict[str, Any]:
    """The status body that claims a task's files: with range claims, the lines of one
    function of its hot file instead of the whole file."""
    hot = [f for f in files if f in HOT]
    if strategy != "ranges" or not hot:
        return {"declared_files": files}
    k = rng.randrange(FUNCTIONS)
    lines = [k * FUNCTION_LINES + 1, (k + 1) * FUNCTION_LINES]
    return {
        "declared_files": [f for f in files if f not in HOT],
        "claims": [{"path": hot[0], "base": BASE, "ranges": [lines]}],
    }


async def swarm(
    url: str, ws_url: str, strategy: str, *, agents: int, count: int, work: float, retry: float
) -> SwarmRun:
    key = await new_project(url, conflict_mode="block")
    run = SwarmRun()
    todo = tasks(random.Random(36), count)
    which = random.Random(37)  # the function of a hot file a task changes (c)
    socket = Socket(ws_url, key)
    await socket.open()
    h = {"X-API-Key": key}
    async with httpx.AsyncClient(
        base_url=url, headers=h, timeout=60, limits=httpx.Limits(max_connections=agents * 2)
    ) as http:

        async def agent(n: int) -> None:
            r = await http.post("/api/v1/checkin", json={"agent_name": f"agent-{n}"})
            r.raise_for_status()
            me = {"X-Session-Token": r.json()["session_token"]}
            while todo:
                files = todo.pop()
                body = scope(files, strategy, which)
                started = time.perf_counter()
                while True:
                    r = await http.post("/api/v1/status", json=body, headers=me)
                    if r.status_code == 200:
                        break
                    assert r.status_code == 409, r.text
                    run.refusals += 1
                    if strategy == "retry":
                        run.retries += 1
                        await asyncio.sleep(retry)
                        continue
                    q = await http.post("/api/v1/queue", json={"paths": files}, headers=me)
                    if q.status_code == 200:
                        break
                    assert q.status_code == 202, q.text
                    qid = q.json()["queue_id"]
                    granted = socket.expect(
                        lambda f, qid=qid: (
                            f.get("type") == "claim.granted"
                            and f["data"]["entry"]["queue_id"] == qid
                        )
                    )
                    await asyncio.wait_for(granted, 600)
                    break
                run.waits.append(time.perf_counter() - started)
                await asyncio.sleep(work)
                done = {"declared_files": [], **({"claims": []} if "claims" in body else {})}
                r = await http.post("/api/v1/status", json=done, headers=me)
                r.raise_for_status()
            await http.post("/api/v1/checkout", json={}, headers=me)

        began = time.perf_counter()
        await asyncio.gather(*(agent(n) for n in range(agents)))
        run.makespan = time.perf_counter() - began
    await socket.close()
    return run


# -- reporting -----------------------------------------------------------------------------


def latency_rows(name: str, h: Handovers) -> list[str]:
    def row(what: str, values: list[float]) -> str:
        return (
            f"| {name} | {what} | {len(values)} | {pct(values, 0.5):.1f} | "
            f"{pct(values, 0.99):.1f} | {max(values):.1f} |"
        )

    return [
        row("release sent → claim.granted", h.grant_from_sent),
        row("release answered → claim.granted", h.grant_from_answer),
        row("baseline: status sent → its agent.status", h.baseline),
    ]


def run_async(coro: Awaitable[Any]) -> Any:
    return asyncio.run(coro)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--handovers", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--agents", type=int, default=30)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--work-seconds", type=float, default=0.3)
    parser.add_argument("--retry-seconds", type=float, default=5.0)
    parser.add_argument("--no-swarm", action="store_true")
    parser.add_argument("--swarm-only", action="store_true")
    parser.add_argument("--pg-admin-url", default=POSTGRES_ADMIN_URL)
    parser.add_argument("--redis-url", default=REDIS_URL)
    args = parser.parse_args()
    raise_open_files()
    latency: list[str] = []
    swarm_rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="agentlanes-queue-bench-") as tmp:
        work = Path(tmp)
        one = bench_server(work / "one", ADMIN_TOKEN, rate_limit_per_minute=0)
        (work / "one").mkdir()
        try:
            say("one process (SQLite)")
            one.start(timeout=120)
            if not args.swarm_only:
                h = run_async(handovers(one.url, one.ws_url, args.handovers))
                latency += latency_rows("one process (SQLite)", h)
            if not args.no_swarm:
                for strategy, label in (
                    ("retry", "(a) refusal + retry"),
                    ("queue", "(b) queue"),
                    ("ranges", "(c) queue + range claims"),
                ):
                    say(f"swarm: {label}")
                    s = run_async(
                        swarm(
                            one.url,
                            one.ws_url,
                            strategy,
                            agents=args.agents,
                            count=args.tasks,
                            work=args.work_seconds,
                            retry=args.retry_seconds,
                        )
                    )
                    swarm_rows.append(
                        f"| {label} | {s.makespan:.1f} | {s.refusals} | {s.retries} | "
                        f"{statistics.mean(s.waits):.2f} | {pct(s.waits, 0.99):.2f} |"
                    )
        finally:
            one.stop()
        if not args.swarm_only:
            postgres_or_exit(args.pg_admin_url)
            redis_or_exit(args.redis_url)
            with scratch_postgres(args.pg_admin_url) as database_url:
                settings = {
                    "redis_url": args.redis_url,
                    "redis_channel_prefix": f"bench-{secrets.token_hex(4)}",
                    "allowed_hosts": "127.0.0.1,localhost",
                    "rate_limit_per_minute": 0,
                }
                (work / "many").mkdir()
                backends = [
                    bench_server(work / "many", ADMIN_TOKEN, database_url=database_url, **settings)
                    for _ in range(args.processes)
                ]
                nginx = PrivateNginx(work / "many", [f"127.0.0.1:{b.port}" for b in backends])
                try:
                    say(f"{args.processes} processes on PostgreSQL + Redis behind nginx")
                    with ThreadPoolExecutor(len(backends)) as pool:
                        list(pool.map(lambda b: b.start(timeout=180), backends))
                    nginx.start()
                    h = run_async(handovers(nginx.url, nginx.ws_url, args.handovers))
                    latency += latency_rows(
                        f"{args.processes} processes behind nginx (PostgreSQL + Redis)", h
                    )
                finally:
                    nginx.stop()
                    for backend in backends:
                        backend.stop()
    load1, load5, _ = os.getloadavg()
    print(f"\n({os.cpu_count()} cores, load average {load1:.1f}/{load5:.1f} at the end)\n")
    if latency:
        print(f"Release → grant, {args.handovers} hand-overs (ms):\n")
        print("| deployment | measured | n | p50 | p99 | max |")
        print("|---|---|---:|---:|---:|---:|")
        print("\n".join(latency))
    if swarm_rows:
        print(
            f"\nSwarm: {args.agents} agents, {args.tasks} tasks of {args.work_seconds:g} s, "
            f"5 hot files, one process (SQLite):\n"
        )
        print("| strategy | makespan s | refusals | wasted retries | mean wait s | p99 wait s |")
        print("|---|---:|---:|---:|---:|---:|")
        print("\n".join(swarm_rows))


if __name__ == "__main__":
    main()
