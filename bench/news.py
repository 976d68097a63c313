"""The agent's news call (``GET /api/v1/news``) at 10 and at 1,000 live sessions.

One command: ``.venv/bin/python bench/news.py [--seconds S] [--database-url URL]``
(needs ``wrk``: ``bash scripts/ensure-wrk.sh``).

It starts a real server (SQLite in a temp dir unless ``--database-url``), and makes two
projects: one with 10 live sessions, one with 1,000, each session claiming its own
package and notes file. In each, a reader claims ``src/api/**``; then 20 events follow
its cursor: 10 other sessions start editing a file under it (status changes, certain
overlaps), 5 send it a message and 5 others change unrelated claims. wrk then asks for
the reader's news after that cursor (16 connections, 2 threads): every call computes the
same 20 events' items. The sizes alternate for ``--rounds`` rounds (3), and each keeps
the median round. The target (issue #25): the call at 1,000 sessions stays within
1.5x its cost at 10, its p50 and its throughput alike.

Then the keepalive: ``lanes keepalive --socket`` for an agent in a git checkout, and
``--messages`` (200) messages sent to it one by one, each timed from its POST to its item
in the agent's local news file (target: p99 at most 200 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.server import bench_server  # noqa: E402
from bench.wrk import Call, Load, Wrk, find_wrk, preflight  # noqa: E402

ADMIN_TOKEN = "bench-admin-token-with-at-least-32-chars"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
TARGET_RATIO = 1.5
KEEPALIVE_TARGET_MS = 200


def setup(url: str, sessions: int) -> tuple[str, str, str]:
    """A project with ``sessions`` live sessions and a reader; (key, token, cursor)."""
    with httpx.Client(base_url=url, timeout=60) as http:
        r = http.post(
            "/api/v1/projects",
            json={"name": f"news-{sessions}", "heartbeat_ttl_seconds": 86_400},
            headers=ADMIN,
        )
        r.raise_for_status()
        key = r.json()["api_key"]
        h = {"X-API-Key": key}
        tokens = []
        for i in range(sessions):
            body = {"agent_name": f"agent-{i}", "declared_files": [f"pkg{i}/**", f"docs/{i}.md"]}
            s = http.post("/api/v1/checkin", json=body, headers=h)
            s.raise_for_status()
            tokens.append(s.json()["session_token"])
        reader = http.post(
            "/api/v1/checkin",
            json={"agent_name": "reader", "declared_files": ["src/api/**"]},
            headers=h,
        ).json()["session_token"]
        me = {**h, "X-Session-Token": reader}
        cursor = http.get("/api/v1/news", headers=me).json()["cursor"]
        for n in range(10):
            who = {**h, "X-Session-Token": tokens[n]}
            files = [f"pkg{n}/**", f"src/api/mod{n}.py"]
            http.post("/api/v1/status", json={"declared_files": files}, headers=who)
        for n in range(5):
            who = {**h, "X-Session-Token": tokens[n]}
            http.post("/api/v1/messages", json={"to": "reader", "body": f"note {n}"}, headers=who)
        for n in range(5):
            who = {**h, "X-Session-Token": tokens[-1 - n]}
            http.post("/api/v1/status", json={"status_text": f"step {n}"}, headers=who)
        items = http.get(f"/api/v1/news?after={cursor}", headers=me).json()["items"]
        assert len(items) == 15, items  # 10 overlaps, 5 messages
    return key, reader, cursor


def keepalive_latency(url: str, work: Path, messages: int) -> list[float]:
    """Milliseconds from a message's POST to its item in the keepalive's local news file
    (``lanes keepalive --socket`` in a git checkout, as an agent's session start runs it)."""
    with httpx.Client(base_url=url, timeout=60) as http:
        r = http.post("/api/v1/projects", json={"name": "news-keepalive"}, headers=ADMIN)
        r.raise_for_status()
        key = r.json()["api_key"]
        sender = http.post(
            "/api/v1/checkin", json={"agent_name": "sender"}, headers={"X-API-Key": key}
        ).json()["session_token"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLANES_", "GIT_"))}
    env.update(AGENTLANES_URL=url, AGENTLANES_API_KEY=key, HOME=str(work))
    repo = work / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=True)
    lanes = [sys.executable, "-m", "agentlanes"]
    subprocess.run(
        [*lanes, "checkin", "--agent", "reader"], cwd=repo, env=env, check=True, capture_output=True
    )
    news_file = repo / ".git/agentlanes/sessions/reader.news.jsonl"
    keepalive = subprocess.Popen(
        [*lanes, "keepalive", "--socket", "--agent", "reader"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    latencies = []
    try:
        deadline = time.monotonic() + 30
        # Its first line names the cursor it reads from: from then on it appends news.
        while not news_file.exists() or news_file.read_text().count("\n") < 1:
            if time.monotonic() > deadline:
                raise SystemExit("the keepalive wrote no news")
            time.sleep(0.05)
        h = {"X-API-Key": key, "X-Session-Token": sender}
        with httpx.Client(base_url=url, headers=h, timeout=60) as http:
            for n in range(messages):
                start = time.perf_counter()
                r = http.post("/api/v1/messages", json={"to": "reader", "body": f"m{n}"})
                needle = f'"message_id":{r.json()["message_id"]},'
                while needle not in news_file.read_text():
                    if time.perf_counter() - start > 10:
                        raise SystemExit(f"message {n} never reached the news file")
                    time.sleep(0.001)
                latencies.append((time.perf_counter() - start) * 1000)
                time.sleep(0.02)
    finally:
        keepalive.terminate()
        keepalive.wait(timeout=10)
    return latencies


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="wrk duration per row")
    ap.add_argument("--database-url", help="default: SQLite in a temp dir")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per size")
    ap.add_argument(
        "--messages", type=int, default=200, help="messages timed into the keepalive's file"
    )
    args = ap.parse_args()
    wrk_binary = find_wrk()
    work = Path(tempfile.mkdtemp(prefix="agentlanes-bench-news-"))
    server = bench_server(
        work, ADMIN_TOKEN, database_url=args.database_url, rate_limit_per_minute=0
    ).start(timeout=90)
    wrk = Wrk(wrk_binary, work, args.seconds)
    runs: dict[int, list[Load]] = {10: [], 1000: []}
    try:
        calls = {}
        for sessions in runs:
            key, token, cursor = setup(server.url, sessions)
            calls[sessions] = Call(
                "GET",
                f"/api/v1/news?after={cursor}",
                {"X-API-Key": key, "X-Session-Token": token},
            )
            preflight(server.url, calls[sessions], 200)
            wrk.run(server.url, [calls[sessions]], 16)  # warm-up
        # Alternating rounds: a machine shared with other work drifts; each size gets the
        # median of its rounds.
        for _ in range(args.rounds):
            for sessions, call in calls.items():
                runs[sessions].append(wrk.run(server.url, [call], 16))
        latencies = sorted(keepalive_latency(server.url, work, args.messages))
    finally:
        server.stop()
    rows = {n: sorted(loads, key=lambda x: x.rate)[len(loads) // 2] for n, loads in runs.items()}
    small, swarm = rows[10], rows[1000]
    ratio_p50 = swarm.p50_ms / small.p50_ms if small.p50_ms else float("inf")
    ratio_rate = small.rate / swarm.rate if swarm.rate else float("inf")
    print(
        f"\nGET /api/v1/news, 20 events after the cursor (15 items), wrk {args.seconds:.0f} s, "
        f"16 connections, median of {args.rounds} alternating rounds; "
        f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs\n"
    )
    print("| live sessions | requests/s | p50 ms | p99 ms | errors |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n, load in rows.items():
        print(
            f"| {n:,} | {load.rate:,.0f} | {load.p50_ms:.2f} | {load.p99_ms:.2f} | {load.errors} |"
        )
    verdict = "met" if max(ratio_p50, ratio_rate) <= TARGET_RATIO else "NOT met"
    print(
        f"\n1,000 vs 10 sessions: p50 {ratio_p50:.2f}x, throughput {ratio_rate:.2f}x "
        f"(target: within {TARGET_RATIO}x: {verdict})"
    )
    p99 = latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))]
    verdict = "met" if p99 <= KEEPALIVE_TARGET_MS else "NOT met"
    print(
        f"\nmessage sent -> in the keepalive's local news file, {len(latencies)} messages: "
        f"p50 {statistics.median(latencies):.1f} ms, p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms "
        f"(target: p99 at most {KEEPALIVE_TARGET_MS} ms: {verdict})"
    )
    print(json.dumps({"p50_ratio": round(ratio_p50, 3), "rate_ratio": round(ratio_rate, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
