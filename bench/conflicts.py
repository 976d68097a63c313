"""Conflict-detection benchmark: indexed detector vs naive all-pairs vs fnmatch.

Run: .venv/bin/python bench/conflicts.py

Prints, in one run:
* check-in latency (5 patterns against N live sessions x 5 patterns) for
  N = 1,000 and 10,000, with the indexed ConflictDetector (module caches as a
  running server has them, and with every cache cleared before each check-in),
  the naive all-pairs exact check, and the both-directions fnmatch baseline;
* how many real overlaps the fnmatch baseline misses (and false alarms it
  raises) on the same pairs;
* conflicts/check of 1,000 staged paths against 1,000 sessions;
* the slowest single pattern pair among adversarial pairs at the limits.
"""

from __future__ import annotations

import fnmatch
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from agentlanes.domain.conflicts import ConflictDetector, Scope
from agentlanes.domain.patterns import (
    clear_caches,
    compile_pattern,
    normalise_pattern,
    overlap_example,
)

SEED = 20240603
CHECKINS = 200


# --------------------------------------------------------------------------
# A synthetic repository and the patterns agents declare on it


def make_repo(rng: random.Random) -> tuple[list[str], list[str]]:
    """(directories, files) of a monorepo-shaped tree."""
    dirs: list[str] = []
    files: list[str] = []
    exts = [".py", ".ts", ".tsx", ".md", ".json", ".yaml", ".sql"]
    for top in ("src", "tests", "web", "services", "libs"):
        for i in range(60):
            pkg = f"{top}/pkg{i}"
            dirs.append(pkg)
            for j in range(4):
                sub = f"{pkg}/mod{j}"
                dirs.append(sub)
                for k in range(5):
                    stem = rng.choice(["handler", "model", "view", "util", "client", "schema"])
                    prefix = "test_" if top == "tests" else ""
                    files.append(f"{sub}/{prefix}{stem}{k}{rng.choice(exts)}")
    for name in ("README.md", "pyproject.toml", "Makefile", ".env", "docs/index.md"):
        files.append(name)
    dirs.append("docs")
    return dirs, files


def make_pattern(rng: random.Random, dirs: list[str], files: list[str]) -> str:
    d = rng.choice(dirs)
    f = rng.choice(files)
    top, _, rest = d.partition("/")
    pkg = rest.split("/")[0]
    ext = rng.choice(["py", "ts", "md", "json", "tsx"])
    roll = rng.random()
    if roll < 0.22:
        raw = f
    elif roll < 0.40:
        raw = f"{d}/**"
    elif roll < 0.52:
        raw = d
    elif roll < 0.64:
        raw = f"{d}/*.{ext}"
    elif roll < 0.74:
        raw = f"{top}/{pkg}/**/*.{ext}"
    elif roll < 0.80:
        raw = f"tests/{pkg}/**/test_*.py"
    elif roll < 0.86:
        raw = f"{{src,tests}}/{pkg}/**"
    elif roll < 0.90:
        raw = f"{top}/{pkg}/mod[0-1]/*"
    elif roll < 0.93:
        raw = f"{top}/*/mod{rng.randrange(4)}/**"
    elif roll < 0.96:
        raw = f"**/{rng.choice(['handler', 'model', 'schema'])}*.{ext}"
    elif roll < 0.98:
        raw = rng.choice(["docs/**", "*.toml", "Makefile", "*.md"])
    else:
        raw = f"**/*.{ext}"
    return normalise_pattern(raw)


def make_scopes(rng: random.Random, n: int, dirs: list[str], files: list[str]) -> list[Scope]:
    return [
        Scope(
            session_id=f"s{i}",
            agent_name=f"agent-{i}",
            declared_area=rng.choice([None, "api", "web", "billing", None, None]),
            patterns=tuple(make_pattern(rng, dirs, files) for _ in range(5)),
        )
        for i in range(n)
    ]


# --------------------------------------------------------------------------
# The three ways of answering a check-in


def naive_exact(scopes: list[Scope], mine: list[str]) -> int:
    found = 0
    for scope in scopes:
        if any(overlap_example(m, t) is not None for m in mine for t in scope.patterns):
            found += 1
    return found


def fnmatch_both(a: str, b: str) -> bool:
    return fnmatch.fnmatchcase(a, b) or fnmatch.fnmatchcase(b, a)


def naive_fnmatch(scopes: list[Scope], mine: list[str]) -> int:
    found = 0
    for scope in scopes:
        if any(fnmatch_both(m, t) for m in mine for t in scope.patterns):
            found += 1
    return found


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return p50 * 1000, p99 * 1000


def time_each(fn, queries: list[list[str]], *, cold: bool = False) -> tuple[float, float]:
    samples = []
    for mine in queries:
        if cold:
            clear_caches()
        t0 = time.perf_counter()
        fn(mine)
        samples.append(time.perf_counter() - t0)
    return percentiles(samples)


def checkin_rows(rng: random.Random, dirs: list[str], files: list[str], n: int) -> list[tuple]:
    clear_caches()
    scopes = make_scopes(rng, n, dirs, files)
    t0 = time.perf_counter()
    detector = ConflictDetector(scopes)
    build_ms = (time.perf_counter() - t0) * 1000
    queries = [[make_pattern(rng, dirs, files) for _ in range(5)] for _ in range(CHECKINS)]
    # Warm: the caches hold what earlier check-ins left, as in a running server.
    warm = time_each(lambda mine: detector.find(patterns=mine), queries)
    cold_n = 20 if n <= 1000 else 5
    cold = time_each(lambda mine: detector.find(patterns=mine), queries[:cold_n], cold=True)
    few = 5 if n <= 1000 else 2
    naive = time_each(lambda mine: naive_exact(scopes, mine), queries[-few:])
    fnm = time_each(lambda mine: naive_fnmatch(scopes, mine), queries[-few:])
    # Agreement, and what fnmatch gets wrong, on the same pairs.
    missed = false_alarm = real = 0
    for mine in queries[:few]:
        for scope in scopes[:1000]:
            for m in mine:
                for t in scope.patterns:
                    exact = overlap_example(m, t) is not None
                    guess = fnmatch_both(m, t)
                    real += exact
                    missed += exact and not guess
                    false_alarm += guess and not exact
        got = {c.session_id for c in detector.find(patterns=mine)}
        want = {
            s.session_id
            for s in scopes
            if any(overlap_example(m, t) for m in mine for t in s.patterns)
        }
        assert got == want, "detector disagrees with all-pairs"
    return [
        (f"check-in, {n:,} sessions: indexed (warm caches)", *warm),
        (f"check-in, {n:,} sessions: indexed (caches cleared each time)", *cold),
        (f"check-in, {n:,} sessions: naive all-pairs exact", *naive),
        (f"check-in, {n:,} sessions: both-directions fnmatch", *fnm),
        ("__accuracy__", n, real, missed, false_alarm, build_ms),
    ]


def paths_rows(rng: random.Random, dirs: list[str], files: list[str]) -> list[tuple]:
    clear_caches()
    scopes = make_scopes(rng, 1000, dirs, files)
    detector = ConflictDetector(scopes)
    batches = [rng.sample(files, 1000) for _ in range(12)]
    indexed = time_each(lambda paths: detector.find(paths=paths), batches)

    def naive(paths: list[str]) -> int:
        return sum(
            1
            for s in scopes
            if any(compile_pattern(t).claims(p) for p in paths for t in s.patterns)
        )

    slow = time_each(naive, batches[:1])
    return [
        ("conflicts/check 1,000 paths x 1,000 sessions: indexed", *indexed),
        ("conflicts/check 1,000 paths x 1,000 sessions: naive all-pairs", *slow),
    ]


ADVERSARIAL = [
    ("64 stars vs 64 stars", "*a" * 32, "*b" * 32),
    ("star + 1000 a's vs star + 999 a's + b", "*" + "a" * 1000, "*" + "a" * 999 + "b"),
    ("'*a' + 62 '?' vs '*b' + 62 '?' (DFA blow-up)", "*a" + "?" * 62, "*b" + "?" * 62),
    ("'*a' + 62 '?' vs 'b' x 63 + '*'", "*a" + "?" * 62, "b" * 63 + "*"),
    ("31 globstars each side", "/".join(["**", "a"] * 31), "/".join(["**", "b"] * 31)),
    ("globstars vs 500 literal segments", "/".join(["**", "a"] * 20), "/".join(["a"] * 500)),
    ("64 classes vs 64 negated classes", "[ab]" * 64, "[!ab]" * 64),
    (
        "256 segment braces vs 256 segment braces",
        "{a,b}/{c,d}/{e,f}/{g,h}/{i,j}/{k,l}/{m,n}/{o,p}/*",
        "{q,r}/{s,t}/{u,v}/{w,x}/{y,z}/{0,1}/{2,3}/{4,5}/*",
    ),
    (
        "256 in-segment braces vs 256 in-segment braces",
        "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}*",
        "*{q,r}{s,t}{u,v}{w,x}{y,z}{0,1}{2,3}{4,5}",
    ),
    (
        "256 braces of '*' vs 256 braces (overlap at the last pair)",
        "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}x*",
        "*y{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}",
    ),
]


def adversarial_rows() -> list[tuple]:
    rows = []
    for name, a, b in ADVERSARIAL:
        a, b = normalise_pattern(a), normalise_pattern(b)
        samples = []
        for _ in range(5):
            clear_caches()
            t0 = time.perf_counter()
            result = overlap_example(a, b)
            samples.append(time.perf_counter() - t0)
        rows.append((name, max(samples) * 1000, "overlap" if result else "disjoint"))
    return rows


def main() -> None:
    rng = random.Random(SEED)
    dirs, files = make_repo(rng)
    started = time.perf_counter()
    rows = checkin_rows(rng, dirs, files, 1000) + checkin_rows(rng, dirs, files, 10_000)
    rows += paths_rows(rng, dirs, files)
    print(f"Python {sys.version.split()[0]}, {CHECKINS} check-ins of 5 patterns each; ms")
    print()
    print(f"{'workload':<66} {'p50 ms':>9} {'p99 ms':>9}")
    print("-" * 86)
    accuracy = []
    for row in rows:
        if row[0] == "__accuracy__":
            accuracy.append(row[1:])
            continue
        name, p50, p99 = row
        print(f"{name:<66} {p50:>9.3f} {p99:>9.3f}")
    print()
    print("fnmatch both ways vs exact, same pattern pairs (check-ins x first 1,000 sessions):")
    for n, real, missed, false_alarm, build_ms in accuracy:
        share = 100 * missed / real if real else 0
        print(
            f"  {n:>6,} sessions: {real:,} real overlapping pairs, fnmatch misses "
            f"{missed:,} ({share:.0f}%), false alarms {false_alarm:,}; "
            f"index built in {build_ms:.0f} ms"
        )
    print()
    print(f"{'adversarial pair (cold caches, worst of 5)':<66} {'ms':>9} {'verdict':>9}")
    print("-" * 86)
    for name, ms, verdict in adversarial_rows():
        print(f"{name:<66} {ms:>9.3f} {verdict:>9}")
    print()
    print(f"total run time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
