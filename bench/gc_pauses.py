"""Garbage-collector pauses over a long run of check-ins, per collector set-up.

    .venv/bin/python bench/gc_pauses.py [--sessions 1000] [--checkins 10000]

The conflict benchmark's steady rows come after 1,000 check-ins; a server
runs for far longer, and once its memoised verdicts reach their bounds it
replaces them all the time. Each replacement is a new object in the
collector's young generation while the count that triggers a young pass
(allocations minus deallocations) stays flat, so young passes come rarely
but walk more. This script runs the same broad workload as
bench/conflicts.py (each check-in answered, joining, the oldest leaving) for
many check-ins, once per collector set-up, each in a fresh process, and
prints per set-up: check-in latency percentiles, and how many passes of the
young and of the old generations ran and the longest of each.

Baseline: Python's default thresholds, in the same run.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conflicts import GC, WORKLOADS, churn, make_repo, make_scopes

from agentlanes.domain.conflicts import ConflictDetector
from agentlanes.server.gc_tuning import THRESHOLDS

SETUPS = {
    "Python's default (700, 10, 10)": {"thresholds": (700, 10, 10), "freeze": False},
    f"agentlanes serve {THRESHOLDS}": {"thresholds": THRESHOLDS, "freeze": True},
}


def run(sessions: int, checkins: int, thresholds: tuple[int, int, int], freeze: bool) -> dict:
    """One set-up, in this process: the figures as a dict."""
    if freeze:  # as `agentlanes serve` does after start-up, before any request
        gc.collect()
        gc.freeze()
    rng = random.Random(7)
    dirs, files = make_repo(rng)
    draw = WORKLOADS["broad"]
    scopes = make_scopes(rng, sessions, dirs, files, "broad")
    # The index is built on a project's first request, then lives long.
    checkin, _ = churn(ConflictDetector(scopes), scopes)
    queries = [draw(rng, dirs, files) for _ in range(checkins)]
    gc.collect()
    gc.set_threshold(*thresholds)
    first_pass = len(GC.passes)  # bench/conflicts.py records every pass
    samples = []
    t_start = time.perf_counter()
    for mine in queries:
        t0 = time.perf_counter()
        checkin(mine)
        samples.append(time.perf_counter() - t0)
    wall = time.perf_counter() - t_start
    passes = GC.passes[first_pass:]
    samples.sort()

    def pct(q: float) -> float:
        return samples[min(len(samples) - 1, int(len(samples) * q))] * 1000

    young = [s for g, s in passes if g == 0]
    old = [s for g, s in passes if g > 0]
    return {
        "p50": pct(0.5),
        "p99": pct(0.99),
        "p999": pct(0.999),
        "max": samples[-1] * 1000,
        "young": len(young),
        "young_max": max(young, default=0) * 1000,
        "old": len(old),
        "old_max": max(old, default=0) * 1000,
        "gc_share": (sum(young) + sum(old)) / wall * 100,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--checkins", type=int, default=10_000)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a set-up, in a child process
    args = parser.parse_args()
    if args.one is not None:
        setup = SETUPS[args.one]
        figures = run(args.sessions, args.checkins, tuple(setup["thresholds"]), setup["freeze"])
        print(json.dumps(figures))
        return
    print(
        f"Python {sys.version.split()[0]}, broad workload, {args.sessions:,} live sessions, "
        f"{args.checkins:,} check-ins timed (each answered, joining, the oldest leaving)\n"
    )
    header = (
        f"{'collector set-up':<48} {'p50':>6} {'p99':>6} {'p99.9':>7} {'max':>6} "
        f"{'young':>6} {'longest':>8} {'old':>5} {'longest':>8} {'GC %':>5}"
    )
    print(header)
    units = f"{'ms':>6} {'ms':>6} {'ms':>7} {'ms':>6} {'passes':>6} {'ms':>8} {'':>5} {'ms':>8}"
    print(f"{'':<48} {units}")
    print("-" * len(header))
    for name in SETUPS:
        out = subprocess.run(
            [
                *(sys.executable, __file__, "--sessions", str(args.sessions)),
                *("--checkins", str(args.checkins), "--one", name),
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        f = json.loads(out)
        print(
            f"{name:<48} {f['p50']:>6.2f} {f['p99']:>6.2f} {f['p999']:>7.1f} {f['max']:>6.1f} "
            f"{f['young']:>6} {f['young_max']:>8.1f} {f['old']:>5} {f['old_max']:>8.1f} "
            f"{f['gc_share']:>5.1f}"
        )


if __name__ == "__main__":
    main()
