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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.server import ServerProcess, bench_server  # noqa: E402

ADMIN_TOKEN = "bench-admin-token-of-at-least-32-characters"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def long_literal_patterns(n: int, *, leading_star: bool) -> list[str]:
    """n one-kilobyte near-duplicates; every one of one side overlaps every one of the
    other ('*x…x0001' vs 'x…x0002*' share 'x…x0002x…x0001')."""
    body = "x" * 1000
    if leading_star:
        return [f"*{body}{i:04d}" for i in range(n)]
    return [f"{body}{i:04d}*" for i in range(n)]


@dataclass
class Case:
    name: str
    setup: Callable[[Bench], None]
    request: Callable[[Bench], httpx.Request]


class Bench:
    def __init__(self, server: ServerProcess, timeout: float) -> None:
        self.server = server
        self.timeout = timeout
        self.key = ""
        self.token = ""

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
    header = (
        f"{'case':<56} {'status':>6} {'time s':>8} {'answer':>10} {'peak RSS':>9} "
        f"{'beat p99':>9} {'beat max':>9}"
    )
    print(header)
    print("-" * len(header))
    try:
        for case in cases:
            bench = Bench(server, args.timeout)
            bystander.paused.set()  # set-up is not the case: keep it out of the beats
            case.setup(bench)
            request = case.request(bench)
            bystander.paused.clear()
            time.sleep(0.3)
            started = time.monotonic()
            status, size = "", 0
            try:
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
                f"{case.name:<56} {status:>6} {shown:>8} {size:>10,} {rss:>7.0f}MB "
                f"{_p99(beats) * 1000:>7.0f}ms {max(beats, default=0) * 1000:>7.0f}ms",
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
