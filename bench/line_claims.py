"""A status change with edits against the check-in targets (issue #27, SPEC "Line-level
claims"): grading must keep the hot paths where they were.

One command: ``.venv/bin/python bench/line_claims.py [--seconds S] [--database-url URL]``
(needs ``wrk``: ``bash scripts/ensure-wrk.sh``).

It starts a real server (SQLite in a temp dir unless ``--database-url``) and makes two
projects, with 10 and with 1,000 live sessions; each session claims its own package and
notes file (``pkg<i>/**``, ``docs/s-<i>.md``) and has reported edits to both (two files,
three ranges each), so every conflict below is graded from both sides' edits. Then, one
client in sequence (wrk, 1 connection), as the check-in rows of docs/benchmarks.md:

* narrow check-in (the baseline of the targets), at 10 and 1,000 live;
* narrow status with edits: a session reports edits to three files of its own package
  (no conflict), at 10 and 1,000 live;
* broad check-in ``**/*.md`` at 1,000 live (1,001 conflicts, none graded: a check-in has
  no edits) and a broad status with edits: a session claiming ``**/*.md`` reports edits
  to ten notes files of others, so each of the 1,000 conflicts is graded (ten of them
  ``lines``).

Targets (docs/benchmarks.md): p50 at 1,000 live at most 1.5x p50 at 10 for the narrow
rows, and p50 at most 30 ms for the broad ones.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.server import bench_server  # noqa: E402
from bench.wrk import Call, Load, Wrk, find_wrk, preflight  # noqa: E402

ADMIN_TOKEN = "bench-admin-token-with-at-least-32-chars"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
BASE = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
NARROW_RATIO = 1.5
BROAD_P50_MS = 30.0


def edits(paths: list[str], shift: int = 0) -> list[dict[str, Any]]:
    ranges = [[10 + shift, 12 + shift], [40 + shift, 40 + shift], [81 + shift, 80 + shift]]
    return [{"path": p, "base": BASE, "ranges": ranges} for p in paths]


async def make(url: str, sessions: int) -> dict[str, Any]:
    """A project with ``sessions`` live sessions, each with edits; its key and tokens."""
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        r = await http.post(
            "/api/v1/projects",
            json={"name": f"lines-{sessions}", "heartbeat_ttl_seconds": 86_400},
            headers=ADMIN,
        )
        r.raise_for_status()
        key = r.json()["api_key"]
        tokens = [""] * sessions
        queue = iter(range(sessions))

        async def worker() -> None:
            for i in queue:
                files = [f"pkg{i}/**", f"docs/s-{i}.md"]
                r = await http.post(
                    "/api/v1/checkin",
                    json={"agent_name": f"s-{i}", "declared_files": files},
                    headers={"X-API-Key": key},
                )
                r.raise_for_status()
                tokens[i] = r.json()["session_token"]
                r = await http.post(
                    "/api/v1/status",
                    json={"edits": edits([f"pkg{i}/a.py", f"docs/s-{i}.md"])},
                    headers={"X-API-Key": key, "X-Session-Token": tokens[i]},
                )
                r.raise_for_status()

        await asyncio.gather(*(worker() for _ in range(4)))
        return {"key": key, "tokens": tokens}


def checkin(key: str, name: str, files: list[str]) -> Call:
    body = json.dumps({"agent_name": name, "declared_files": files})
    return Call("POST", "/api/v1/checkin", {"X-API-Key": key}, body)


def status(url: str, key: str, name: str, files: list[str], edited: list[str]) -> Call:
    """A session that claims ``files`` and reports edits to ``edited`` (near the others')."""
    r = httpx.post(
        url + "/api/v1/checkin",
        json={"agent_name": name, "declared_files": files},
        headers={"X-API-Key": key},
        timeout=60,
    )
    r.raise_for_status()
    token = r.json()["session_token"]
    body = json.dumps({"edits": edits(edited, shift=2)})
    return Call("POST", "/api/v1/status", {"X-API-Key": key, "X-Session-Token": token}, body)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="wrk duration per row")
    ap.add_argument("--database-url", help="default: SQLite in a temp dir")
    args = ap.parse_args()
    wrk_binary = find_wrk()
    work = Path(tempfile.mkdtemp(prefix="agentlanes-bench-lines-"))
    server = bench_server(
        work, ADMIN_TOKEN, database_url=args.database_url, rate_limit_per_minute=0
    ).start(timeout=90)
    wrk = Wrk(wrk_binary, work, args.seconds)
    rows: dict[str, Load] = {}
    conflicts: dict[str, int] = {}
    try:
        for n in (10, 1000):
            p = asyncio.run(make(server.url, n))
            key = p["key"]
            edited = [f"tools/edit/{k}.py" for k in range(3)]
            # Made one at a time, just before its row: a session a later row needs (the
            # broad editor) must not overlap the rows before it.
            calls: dict[str, Callable[[], Call]] = {
                f"narrow check-in, {n:,} live": lambda k=key: checkin(
                    k, "probe", ["tools/probe/**"]
                ),
                f"narrow status with edits, {n:,} live": lambda k=key, e=edited: status(
                    server.url, k, "editor", ["tools/edit/**"], e
                ),
            }
            if n == 1000:
                broad = [f"docs/s-{i}.md" for i in range(10)]
                calls["broad check-in **/*.md, 1,000 live"] = lambda k=key: checkin(
                    k, "broad", ["**/*.md"]
                )
                calls["broad status with edits, 1,000 live"] = lambda k=key, e=broad: status(
                    server.url, k, "broad-editor", ["**/*.md"], e
                )
            for name, make_call in calls.items():
                call = make_call()
                preflight(server.url, call, 201 if "check-in" in name else 200)
                conflicts[name] = _total(_once(server.url, call))
                rows[name] = wrk.run(server.url, [call], 1)
    finally:
        server.stop()
    print(
        f"\none client in sequence (wrk, 1 connection, {args.seconds:.0f} s per row); "
        f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs\n"
    )
    print("| what | p50 ms | p99 ms | requests/s | conflicts | errors |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, load in rows.items():
        print(
            f"| {name} | {load.p50_ms:.1f} | {load.p99_ms:.1f} | {load.rate:,.0f} | "
            f"{conflicts.get(name, 0):,} | {load.errors} |"
        )
    print()
    for what in ("check-in", "status with edits"):
        small, big = rows[f"narrow {what}, 10 live"], rows[f"narrow {what}, 1,000 live"]
        ratio = big.p50_ms / small.p50_ms if small.p50_ms else float("inf")
        verdict = "met" if ratio <= NARROW_RATIO else "NOT met"
        print(f"narrow {what}: 1,000 vs 10 live p50 {ratio:.2f}x (target <= 1.5x: {verdict})")
    for what in ("check-in **/*.md", "status with edits"):
        p50 = rows[f"broad {what}, 1,000 live"].p50_ms
        verdict = "met" if p50 <= BROAD_P50_MS else "NOT met"
        print(f"broad {what}: p50 {p50:.1f} ms (target <= {BROAD_P50_MS:.0f} ms: {verdict})")
    return 0


def _once(url: str, call: Call) -> Any:
    headers = {"Content-Type": "application/json", **call.headers}
    return httpx.post(url + call.path, headers=headers, content=call.body, timeout=60).json()


def _total(answer: Any) -> int:
    if isinstance(answer, dict):
        return int(answer.get("conflicts_total") or len(answer.get("conflicts") or []))
    return 0


if __name__ == "__main__":
    sys.exit(main())
