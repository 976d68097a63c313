"""The arithmetic of bench/api.py and bench/soak.py: what wrk is told to send, and the
verdicts the soak prints (the benchmarks themselves are run by hand, not by the suite)."""

from __future__ import annotations

import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.soak import (  # noqa: E402
    ALL,
    Interval,
    Stalls,
    Tally,
    slow_lines,
    timed_in_metrics,
    verdicts,
)
from bench.wrk import Call, Wrk, lua_script  # noqa: E402

from tests.support.services import unavailable  # noqa: E402


def test_lua_script_keeps_bodies_and_headers_verbatim() -> None:
    body = '{"declared_files": ["a]]b", "]===]", "c\\"d"]}'
    script = lua_script([Call("POST", "/api/v1/checkin", {"X-API-Key": "k]]"}, body)])
    # The body is in a long bracket that none of its own closing brackets can end.
    assert "[====[" + body + "]====]" in script
    assert '"X-API-Key"' not in script  # keys are long-bracket strings too
    assert "[ [===[X-API-Key]===] ] = [===[k]]]===]" in script


class Recorder(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[tuple[str, str, str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.seen.append((self.command, self.path, self.headers.get("X-Token", ""), body))
        self.send_response(201)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


def test_wrk_sends_each_call_in_turn_and_reports(tmp_path: Path) -> None:
    wrk = shutil.which("wrk")
    if wrk is None:  # `make test` installs it (scripts/ensure-wrk.sh)
        unavailable("wrk", "not on PATH; install it with scripts/ensure-wrk.sh")
        return
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        calls = [
            Call("POST", "/a", {"X-Token": "one"}, '{"n": "]]1"}'),
            Call("POST", "/b", {"X-Token": "two"}, '{"n": 2}'),
        ]
        load = Wrk(wrk, tmp_path, 1).run(f"http://127.0.0.1:{server.server_port}", calls, 1)
    finally:
        server.shutdown()
    assert load.requests > 10 and load.errors == 0 and load.p50_ms > 0
    one = ("POST", "/a", "one", b'{"n": "]]1"}')
    two = ("POST", "/b", "two", b'{"n": 2}')
    # In turn (wrk asks the script for one request before it starts, so either may lead).
    assert set(Recorder.seen[:2]) == {one, two}
    assert all(a != b for a, b in zip(Recorder.seen, Recorder.seen[1:], strict=False))


def row(rss: float, fds: int, p99_samples: list[float]) -> Interval:
    tally = Tally()
    tally.latencies["heartbeat"].extend(p99_samples)
    return Interval(0, rss, fds, 0, 0, 0, 0, tally)


def test_soak_verdicts_judge_the_last_half_and_the_first_interval() -> None:
    flat = [row(100, 50, [10.0] * 100) for _ in range(4)]
    lines = verdicts(flat, ["heartbeat", ALL])
    assert all(line.startswith("✓") for line in lines), lines

    # RSS grows 10 % over the last half; fds 4 %: only RSS fails.
    growing = [
        row(90, 50, [10.0] * 100),
        row(95, 50, [10.0] * 100),
        row(100, 50, [10.0] * 100),
        row(110, 52, [10.0] * 100),
    ]
    rss, fds, *_ = verdicts(growing, ["heartbeat"])
    assert rss.startswith("✗") and "+10.0%" in rss
    assert fds.startswith("✓")

    # One interval's p99 at 1.6x the first's fails; 1.5x passes.
    slow = [row(100, 50, [10.0] * 100), row(100, 50, [16.0] * 100)]
    assert verdicts(slow, ["heartbeat"])[2].startswith("✗")
    edge = [row(100, 50, [10.0] * 100), row(100, 50, [15.0] * 100)]
    assert verdicts(edge, ["heartbeat"])[2].startswith("✓")

    # Too few samples in the first interval: reported, not judged.
    sparse = [row(100, 50, [10.0] * 5), row(100, 50, [99.0] * 100)]
    assert verdicts(sparse, ["heartbeat"])[2].startswith("- heartbeat: too few samples")

    # A later interval under 100 samples is not judged (its "p99" would be its slowest
    # request) and the line says so; 99 samples are too few, 100 are enough.
    gap = [row(100, 50, [10.0] * 100), row(100, 50, [99.0] * 99), row(100, 50, [12.0] * 100)]
    line = verdicts(gap, ["heartbeat"])[2]
    assert line.startswith("✓") and "1 interval(s) with fewer not judged" in line, line
    assert verdicts([row(100, 50, [10.0] * 99)], ["heartbeat"])[2].startswith("- heartbeat")


def test_soak_reads_the_servers_own_slow_requests_from_its_histogram() -> None:
    metrics = "\n".join(
        [
            "# HELP agentlanes_request_duration_seconds Request duration, in seconds",
            'agentlanes_request_duration_seconds_bucket{le="0.025",method="POST",path="/a"} 90.0',
            'agentlanes_request_duration_seconds_bucket{le="0.05",method="POST",path="/a"} 97.0',
            'agentlanes_request_duration_seconds_bucket{le="+Inf",method="POST",path="/a"} 100.0',
            'agentlanes_request_duration_seconds_count{method="POST",path="/a"} 100.0',
            'agentlanes_request_duration_seconds_bucket{le="0.05",method="GET",path="/b"} 50.0',
            'agentlanes_request_duration_seconds_count{method="GET",path="/b"} 50.0',
            # The soak's own scrapes are not the swarm's requests.
            'agentlanes_request_duration_seconds_bucket{le="0.05",path="/metrics"} 1.0',
            'agentlanes_request_duration_seconds_count{path="/metrics"} 9.0',
            "agentlanes_gc_full_collection_seconds_count 3.0",
        ]
    )
    assert timed_in_metrics(metrics) == (150.0, 147.0)

    stalls = Stalls()
    stalls.loop, stalls.gc = [68.0], [21.0, 77.0]
    requests, own = slow_lines([10.0, 51.0, 80.0, 50.0], (150.0, 147.0), stalls)
    assert requests.startswith("requests over 50 ms: 2 of 4 as the client timed them; 3 of 150")
    assert own == (
        "this process's stalls over 20 ms: 1 of its event loop (longest 68 ms), "
        "2 garbage collections (longest 77 ms)"
    )


def test_every_bench_starts_its_server_through_bench_server() -> None:
    """One way to start `agentlanes serve` in bench/ (bench/server.py): no bench builds its
    own process or its own ServerProcess."""
    own = [
        path.name
        for path in sorted((ROOT / "bench").glob("*.py"))
        if path.name != "server.py"
        and any(
            needle in path.read_text()
            for needle in ("ServerProcess(", '"agentlanes", "serve"', "'agentlanes', 'serve'")
        )
    ]
    assert own == []


def test_bench_server_passes_the_benchs_settings_to_the_server(tmp_path: Path) -> None:
    from bench.server import bench_server

    server = bench_server(tmp_path, "t" * 32, redis_url="", rate_limit_per_minute=0)
    assert server.env["AGENTLANES_ADMIN_TOKEN"] == "t" * 32
    assert server.env["AGENTLANES_DATABASE_URL"] == f"sqlite:///{tmp_path / 'bench.db'}"
    assert server.env["AGENTLANES_LOG_LEVEL"] == "warning"
    assert server.env["AGENTLANES_REDIS_URL"] == ""
    assert server.env["AGENTLANES_RATE_LIMIT_PER_MINUTE"] == "0"
    assert server.workdir == tmp_path and server.proc is None  # not started yet
    other = bench_server(tmp_path, "t" * 32, database_url="postgresql://x/y")
    assert other.env["AGENTLANES_DATABASE_URL"] == "postgresql://x/y"
