"""Hostile input against a real server: each class's server time, answer size and what a
bystander project's heartbeat waits meanwhile.

    .venv/bin/python bench/hostile.py [--timeout S] [--only 'NAME;...'] [--src DIR]

One `agentlanes serve` process on a temp SQLite file. A bystander project heart-beats
every 50 ms in a thread for the whole run; each case is one request (after its set-up),
timed from the client on 127.0.0.1, and the row gives its status, time, answer bytes, the
server's peak RSS so far, and the bystander's heartbeat p99 and worst during the request.

A request that does not answer within --timeout (default 20 s) is reported as such and
the server is killed and started afresh (some of these inputs, before issue 24, kept a
server busy and growing ~300 MB/s for as long as it lived: the server's address space is
capped at --memory-gb, default 4). --src runs the server from another source tree (a
checkout of an older commit: `git archive <commit> src | tar -x -C /tmp/old`, then
`--src /tmp/old/src`), which is how docs/benchmarks.md's "before" column was made.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import secrets
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import websockets

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, bench/ comes first on the path, and its queue.py would stand in for the
# standard library's queue (which the socket cases' event loop imports).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from bench.server import ServerProcess, bench_server  # noqa: E402

ADMIN_TOKEN = "bench-admin-token-of-at-least-32-characters"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
# One event loop for the cases that keep sockets open from one case to the next.
LOOP = asyncio.new_event_loop()


def long_literal_patterns(n: int, *, leading_star: bool) -> list[str]:
    """n one-kilobyte near-duplicates; every one of one side overlaps every one of the
    other ('*x…x0001' vs 'x…x0002*' share 'x…x0002x…x0001')."""
    body = "x" * 1000
    if leading_star:
        return [f"*{body}{i:04d}" for i in range(n)]
    return [f"{body}{i:04d}*" for i in range(n)]


@dataclass
class Case:
    """One class of hostile input: a set-up (not timed), then one request, or (``run``)
    the work of several, which returns the status to show and the bytes answered."""

    name: str
    setup: Callable[[Bench], None]
    request: Callable[[Bench], httpx.Request] | None = None
    run: Callable[[Bench], tuple[str, int]] | None = None


class Bench:
    def __init__(self, server: ServerProcess, timeout: float) -> None:
        self.server = server
        self.timeout = timeout
        self.key = ""
        self.token = ""
        self.note = ""
        self.loop = LOOP

    def project(self) -> str:
        body = {"name": f"hostile-{secrets.token_hex(4)}"}
        r = httpx.post(f"{self.server.url}/api/v1/projects", json=body, headers=ADMIN)
        r.raise_for_status()
        self.key = r.json()["api_key"]
        return self.key

    def post(self, path: str, body: Any, token: str | None = None) -> httpx.Response:
        headers = {"X-API-Key": self.key}
        if token:
            headers["X-Session-Token"] = token
        return httpx.post(
            f"{self.server.url}/api/v1{path}", json=body, headers=headers, timeout=120
        )

    def checkin(self, **body: Any) -> str:
        r = self.post("/checkin", body)
        assert r.status_code == 201, r.text[:300]
        return str(r.json()["session_token"])

    def build(self, path: str, body: Any, token: str | None = None) -> httpx.Request:
        headers = {"X-API-Key": self.key}
        if token:
            headers["X-Session-Token"] = token
        return httpx.Request("POST", f"{self.server.url}/api/v1{path}", json=body, headers=headers)


class Bystander(threading.Thread):
    """Another project's agent, heart-beating every 50 ms: (time sent, latency) pairs."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()
        self.paused = threading.Event()
        self.inflight: float | None = None  # when the beat in flight was sent

    def connect(self) -> None:
        body = {"name": f"bystander-{secrets.token_hex(4)}"}
        key = httpx.post(f"{self.url}/api/v1/projects", json=body, headers=ADMIN).json()["api_key"]
        r = httpx.post(f"{self.url}/api/v1/checkin", json={}, headers={"X-API-Key": key})
        self.headers = {"X-API-Key": key, "X-Session-Token": r.json()["session_token"]}

    def run(self) -> None:
        with httpx.Client(timeout=60) as client:
            while not self.stop.is_set():
                if self.paused.is_set():
                    time.sleep(0.05)
                    continue
                started = self.inflight = time.monotonic()
                try:
                    client.post(f"{self.url}/api/v1/heartbeat", headers=self.headers)
                    self.samples.append((started, time.monotonic() - started))
                except httpx.HTTPError:
                    self.samples.append((started, float("inf")))
                self.inflight = None
                time.sleep(max(0.0, 0.05 - (time.monotonic() - started)))

    def during(self, start: float, end: float) -> list[float]:
        # A beat sent before the request ended counts: it waited on the same server. One
        # still in flight counts for as long as it has waited so far.
        beats = [lat for at, lat in self.samples if start <= at + lat and at <= end]
        inflight = self.inflight
        if inflight is not None and inflight <= end:
            beats.append(time.monotonic() - inflight)
        return beats


def _p99(values: list[float]) -> float:
    if not values:
        return 0.0
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _setup_256_holder(b: Bench) -> None:
    b.project()
    b.checkin(agent_name="holder", declared_files=long_literal_patterns(256, leading_star=False))


def _setup_600_sessions(b: Bench) -> None:
    b.project()
    for i in range(600):
        b.checkin(agent_name=f"agent-{i}", declared_files=["src/**", f"lib{i}/**/*.py"])


def _setup_plain(b: Bench) -> None:
    b.project()
    b.checkin(agent_name="holder", declared_files=["src/**"])


def _setup_status(b: Bench) -> None:
    _setup_256_holder(b)
    b.token = b.checkin(agent_name="mover", declared_files=["docs/**"])


def _setup_globstars(b: Bench) -> None:
    b.project()
    holder = [f"{i}/" + "/".join(["**"] * 15) + "/*.py" for i in range(256)]
    b.checkin(agent_name="holder", declared_files=holder)


PATHS_10K = [f"src/d{k % 100}/f{k}.py" for k in range(10_000)]


# -- issue 40 -----------------------------------------------------------------------------


def _same(b: Bench) -> None:
    """No set-up: the project of the case before."""


def _setup_mover(b: Bench) -> None:
    b.project()
    b.token = b.checkin(agent_name="mover", declared_files=["docs/**"])


def _ranges_body() -> dict[str, Any]:
    ranges = [[n, n] for n in range(1, 100_001)]
    return {"edits": [{"path": "src/a.py", "base": "abcd", "ranges": ranges}]}


def _meta_body() -> dict[str, Any]:
    # 150,000 keys, 1.6 MB of JSON: under max_body_bytes (2 MB).
    return {"meta": {str(i): 0 for i in range(150_000)}}


def _long(body: str, n: int) -> list[str]:
    return [f"*{body}{n}{i:03d}" for i in range(256)]


def _slow_beside_ordinary(b: Bench) -> tuple[str, int]:
    """Six check-ins of 256 x 1 KB patterns, then 30 ordinary ones of the same project;
    the row's time is the slowest ordinary one's (the status names their median)."""
    headers = {"X-API-Key": b.key, "Content-Type": "application/json"}
    body = "x" * 1000
    slow = [
        json.dumps(
            {"agent_name": f"slow{n}", "declared_files": [f"*{body}{n}{i:03d}" for i in range(256)]}
        )
        for n in range(6)
    ]
    plain = [
        json.dumps({"agent_name": f"o{n}", "declared_files": [f"src/o{n}/**"]}) for n in range(30)
    ]

    async def burst() -> list[float]:
        limits = httpx.Limits(max_connections=64)
        async with httpx.AsyncClient(base_url=b.server.url, timeout=60, limits=limits) as c:
            await asyncio.gather(*[c.get("/healthz") for _ in range(36)])

            async def one(text: str) -> float:
                started = time.monotonic()
                r = await c.post("/api/v1/checkin", content=text, headers=headers)
                assert r.status_code in (201, 400), r.text[:200]
                return time.monotonic() - started

            slow_ones = [asyncio.create_task(one(t)) for t in slow]
            await asyncio.sleep(0.1)
            took = await asyncio.gather(*[one(t) for t in plain])
            await asyncio.gather(*slow_ones)
            return sorted(took)

    took = asyncio.run(burst())
    b.note = f"ordinary: median {took[len(took) // 2]:.2f} s, max {took[-1]:.2f} s"
    return f"201x{len(took)}", 0


OPEN_SOCKETS: list[Any] = []  # kept open from one case to the next


def _sockets_in_bursts(b: Bench, total: int = 2000, burst: int = 250) -> tuple[str, int]:
    """Open ``total`` event sockets of one project, ``burst`` at a time; each reads its
    frames in the background (as a client does)."""
    url = b.server.ws_url + "/api/v1/events"
    headers = {"X-API-Key": b.key}
    refused = 0

    async def one() -> Any:
        ws = await websockets.connect(url, additional_headers=headers, compression=None)
        await ws.recv()
        return ws

    async def run() -> None:
        nonlocal refused
        for _ in range(total // burst):
            for got in await asyncio.gather(*[one() for _ in range(burst)], return_exceptions=True):
                if isinstance(got, BaseException):
                    refused += 1
                else:
                    OPEN_SOCKETS.append(got)

    b.loop.run_until_complete(run())
    return f"{len(OPEN_SOCKETS)} open" + (f", {refused} refused" if refused else ""), 0


def _broadcasts_to_sockets(b: Bench, n: int = 20, size: int = 40_000) -> tuple[str, int]:
    """``n`` broadcast messages of ``size`` characters to the open sockets, which read
    them; done once every socket has read them all."""
    token = b.checkin(agent_name="speaker")
    got = {id(ws): 0 for ws in OPEN_SOCKETS}

    async def read(ws: Any) -> None:
        while got[id(ws)] < n:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 60))
            if frame.get("type") == "message.created":
                got[id(ws)] += 1

    async def run() -> None:
        readers = [asyncio.create_task(read(ws)) for ws in OPEN_SOCKETS]
        async with httpx.AsyncClient(base_url=b.server.url, timeout=60) as c:
            for _ in range(n):
                body = {"to": "broadcast", "body": "y" * size}
                r = await c.post(
                    "/api/v1/messages",
                    json=body,
                    headers={"X-API-Key": b.key, "X-Session-Token": token},
                )
                assert r.status_code == 201, r.text[:200]
        await asyncio.gather(*readers, return_exceptions=True)
        for ws in OPEN_SOCKETS:
            await ws.close()

    b.loop.run_until_complete(run())
    done = sum(1 for v in got.values() if v == n)
    OPEN_SOCKETS.clear()
    return f"{done} read all", 0


def _bad_key_upgrades(b: Bench, n: int = 500) -> tuple[str, int]:
    """``n`` socket upgrades with random keys from one address, 25 at a time."""
    url = b.server.ws_url + "/api/v1/events"
    outcomes: dict[str, int] = {}

    async def one() -> None:
        key = f"alk_{secrets.token_hex(16)}"
        try:
            async with websockets.connect(url, additional_headers={"X-API-Key": key}) as ws:
                with contextlib.suppress(websockets.ConnectionClosed):
                    while True:
                        await asyncio.wait_for(ws.recv(), 10)
            what = str(ws.close_code)
        except websockets.InvalidStatus as exc:
            what = str(exc.response.status_code)
        outcomes[what] = outcomes.get(what, 0) + 1

    async def run() -> None:
        for _ in range(n // 25):
            await asyncio.gather(*[one() for _ in range(25)])

    b.loop.run_until_complete(run())
    return " ".join(f"{k}x{v}" for k, v in sorted(outcomes.items())), 0


CASES = [
    Case(
        "brace range {1..10^18}, check-in",
        _setup_plain,
        lambda b: b.build("/checkin", {"declared_files": ["{1..1000000000000000000}"]}),
    ),
    Case(
        "brace product {a,b} x24, check-in",
        _setup_plain,
        lambda b: b.build("/checkin", {"declared_files": ["{a,b}" * 24]}),
    ),
    Case(
        "brace product {a,b} x24, conflicts/check",
        _setup_plain,
        lambda b: b.build("/conflicts/check", {"patterns": ["{a,b}" * 24]}),
    ),
    Case(
        "nested braces, 64 alternatives",
        _setup_plain,
        lambda b: b.build(
            "/checkin", {"declared_files": ["/".join(["{{a,b},{c,d}}"] * 2) + "/**/{1..4}/*"]}
        ),
    ),
    Case(
        "empty expansion {,}, check-in",
        _setup_plain,
        lambda b: b.build("/checkin", {"declared_files": ["{,}"]}),
    ),
    Case(
        "256 x 1 KB patterns vs 256 similar, check-in",
        _setup_256_holder,
        lambda b: b.build(
            "/checkin", {"declared_files": long_literal_patterns(256, leading_star=True)}
        ),
    ),
    Case(
        "256 x 1 KB patterns vs 256 similar, status",
        _setup_status,
        lambda b: b.build(
            "/status", {"declared_files": long_literal_patterns(256, leading_star=True)}, b.token
        ),
    ),
    Case(
        "256 x 1 KB patterns vs 256 similar, conflicts/check",
        _setup_256_holder,
        lambda b: b.build(
            "/conflicts/check", {"patterns": long_literal_patterns(256, leading_star=True)}
        ),
    ),
    Case(
        "conflicts/check 10,000 paths vs 600 sessions",
        _setup_600_sessions,
        lambda b: b.build("/conflicts/check", {"paths": PATHS_10K}),
    ),
    Case(
        "256 patterns of 15 '**' each vs 256 similar, check-in",
        _setup_globstars,
        lambda b: b.build(
            "/checkin",
            {"declared_files": ["/".join(["**"] * 15) + f"/x{i}*" for i in range(256)]},
        ),
    ),
    Case(
        "100,000 edit ranges in one file, status",
        _setup_mover,
        lambda b: b.build("/status", _ranges_body(), b.token),
    ),
    Case(
        "100,000 edit ranges in one file, conflicts/check",
        _setup_mover,
        lambda b: b.build("/conflicts/check", {"paths": ["src/a.py"], **_ranges_body()}),
    ),
    Case(
        "150,000-key meta (1.6 MB), check-in",
        _setup_plain,
        lambda b: b.build("/checkin", _meta_body()),
    ),
    Case(
        "6 x 256 x 1 KB check-ins beside 30 ordinary, one project",
        _setup_256_holder,
        run=_slow_beside_ordinary,
    ),
    Case(
        "pair list (GET /conflicts), 600 overlapping sessions",
        _setup_600_sessions,
        lambda b: httpx.Request(
            "GET", f"{b.server.url}/api/v1/conflicts", headers={"X-API-Key": b.key}
        ),
    ),
    Case("2,000 sockets opened in bursts of 250", _setup_plain, run=_sockets_in_bursts),
    Case(
        "20 broadcasts of 40 KB to those 2,000 sockets", lambda b: None, run=_broadcasts_to_sockets
    ),
    Case("500 socket upgrades with random keys", _same, run=_bad_key_upgrades),
    Case(
        "256 long classes [!...] x 32, check-in",
        _setup_256_holder,
        lambda b: b.build(
            "/checkin",
            {"declared_files": ["[!abcdefghijklmnopqrstuvw]" * 32 + f"{i}" for i in range(256)]},
        ),
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--memory-gb", type=float, default=4.0)
    parser.add_argument("--only", default="", help="substrings of case names, ';' between")
    parser.add_argument("--src", default="", help="run the server from this source tree")
    args = parser.parse_args()
    wanted = [w.strip() for w in args.only.split(";") if w.strip()]
    cases = [c for c in CASES if not wanted or any(w in c.name for w in wanted)]

    workdir = Path(tempfile.mkdtemp(prefix="agentlanes-hostile-"))
    server = bench_server(workdir, ADMIN_TOKEN)
    if args.src:
        server.env["PYTHONPATH"] = os.path.abspath(args.src)

    def start() -> Bystander:
        server.start()
        assert server.proc is not None
        cap = int(args.memory_gb * 2**30)
        resource.prlimit(server.proc.pid, resource.RLIMIT_AS, (cap, cap))
        bystander = Bystander(server.url)
        bystander.connect()
        bystander.start()
        return bystander

    bystander = start()
    last_key = ""
    header = (
        f"{'case':<56} {'status':>22} {'time s':>8} {'answer':>10} {'peak RSS':>9} "
        f"{'beat p99':>9} {'beat max':>9}"
    )
    print(header)
    print("-" * len(header))
    try:
        for case in cases:
            bench = Bench(server, args.timeout)
            bench.key = last_key  # a case without a set-up of its own: the last project
            bystander.paused.set()  # set-up is not the case: keep it out of the beats
            case.setup(bench)
            last_key = bench.key
            request = case.request(bench) if case.request is not None else None
            bystander.paused.clear()
            time.sleep(0.3)
            started = time.monotonic()
            status, size = "", 0
            try:
                if case.run is not None:
                    status, size = case.run(bench)
                else:
                    assert request is not None
                    with httpx.Client(timeout=args.timeout) as client:
                        r = client.send(request)
                    status, size = str(r.status_code), len(r.content)
            except httpx.TimeoutException:
                status = "none"
            elapsed = time.monotonic() - started
            beats = bystander.during(started, started + elapsed)
            assert server.proc is not None
            rss = _peak_rss_mb(server.proc.pid) if server.proc.poll() is None else float("nan")
            shown = f"> {args.timeout:.0f}" if status == "none" else f"{elapsed:.3f}"
            print(
                f"{case.name:<56} {status:>22} {shown:>8} {size:>10,} {rss:>7.0f}MB "
                f"{_p99(beats) * 1000:>7.0f}ms {max(beats, default=0) * 1000:>7.0f}ms"
                + (f"  ({bench.note})" if bench.note else ""),
                flush=True,
            )
            if status == "none" or server.proc.poll() is not None:
                bystander.stop.set()
                server.kill()
                bystander = start()
    finally:
        bystander.stop.set()
        server.stop()


if __name__ == "__main__":
    main()
