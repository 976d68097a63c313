"""Conflict-detection benchmark: indexed detector vs naive all-pairs vs fnmatch.

Run: .venv/bin/python bench/conflicts.py

Prints, in one run:
* check-in latency (5 patterns against N live sessions x 5 patterns) for
  N = 1,000 and 10,000, with the indexed ConflictDetector (just after the index
  is built, in a steady state after 1,000 more check-ins, and with every
  verdict cache and kept answer cleared before each check-in), the share of
  check-ins holding a wildcard-first pattern,
  the naive all-pairs exact check, and the both-directions fnmatch baseline,
  on two workloads: "broad" (patterns drawn across the whole repository, 7 %
  of them wildcard-first) and "modules" (each agent works in one package);
* how many conflicts the check-ins answer (the cost of an exact answer grows
  with its size), and how many of their overlaps and conflicts are certain
  (the rest hold only if a slash-less literal is a directory);
* how many answers the detector keeps in the steady state, and their size;
* how many real overlaps the fnmatch baseline misses (and false alarms it
  raises) on the same pairs;
* conflicts/check of 1,000 staged paths against 1,000 sessions;
* the cost of single adversarial pattern pairs at the limits (and that
  patterns over the limits are refused);
* the load average, since the figures are wall-clock times (each row also
  gives the process CPU time, which waiting for a busy CPU does not inflate).
"""

from __future__ import annotations

import fnmatch
import gc
import itertools
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from agentlanes.domain.conflicts import KEEP_PER_PATTERN, ConflictDetector, Scope
from agentlanes.domain.globs import (
    PatternError,
    PatternLimits,
    clear_caches,
    compile_pattern,
    normalise_pattern,
    overlap,
    overlap_example,
)
from agentlanes.domain.globs.overlap import clear_verdict_caches
from agentlanes.server.gc_tuning import tune_for_serving

SEED = 20240603
CHECKINS = 200
WARMUP = 20  # check-ins run, untimed, between building an index and timing it
STEADY = 1000  # more untimed check-ins before the steady-state rows


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
    elif roll < 0.48:
        raw = d + "/"  # a directory, as a client that sees the working tree sends it
    elif roll < 0.52:
        raw = d  # a directory named without '/': it may be a file
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


def make_module_patterns(rng: random.Random, dirs: list[str], files: list[str]) -> list[str]:
    """Five patterns of one agent working in one package (the second workload).

    Most agents stay inside their package; 1 % of patterns reach the root
    (`docs/**`, `Makefile` …) and 0.5 % start with `**` (about 2.5 % of
    agents hold one).
    """
    top, pkg = rng.choice([d for d in dirs if d.count("/") == 1]).split("/")
    home = f"{top}/{pkg}"
    own = [f for f in files if f.startswith(home + "/")]
    patterns = []
    for _ in range(5):
        mod = f"mod{rng.randrange(4)}"
        ext = rng.choice(["py", "ts", "md", "json", "tsx"])
        roll = rng.random()
        if roll < 0.30:
            raw = rng.choice(own)
        elif roll < 0.50:
            raw = f"{home}/{mod}/**"
        elif roll < 0.58:
            raw = f"{home}/{mod}/"
        elif roll < 0.62:
            raw = f"{home}/{mod}"
        elif roll < 0.77:
            raw = f"{home}/{mod}/*.{ext}"
        elif roll < 0.87:
            raw = f"{home}/**/*.{ext}"
        elif roll < 0.93:
            raw = f"tests/{pkg}/**/test_*.py"
        elif roll < 0.975:
            raw = f"{{src,tests}}/{pkg}/**"
        elif roll < 0.985:
            raw = f"{home}/mod[0-1]/*"
        elif roll < 0.995:
            raw = rng.choice(["docs/**", "Makefile", "pyproject.toml", "README.md"])
        else:
            raw = f"**/{rng.choice(['handler', 'model', 'schema'])}*.{ext}"
        patterns.append(normalise_pattern(raw))
    return patterns


def make_broad_patterns(rng: random.Random, dirs: list[str], files: list[str]) -> list[str]:
    return [make_pattern(rng, dirs, files) for _ in range(5)]


WORKLOADS = {"broad": make_broad_patterns, "modules": make_module_patterns}


def make_scopes(
    rng: random.Random, n: int, dirs: list[str], files: list[str], workload: str = "broad"
) -> list[Scope]:
    draw = WORKLOADS[workload]
    return [
        Scope(
            session_id=f"s{i}",
            agent_name=f"agent-{i}",
            declared_area=rng.choice([None, "api", "web", "billing", None, None]),
            patterns=tuple(draw(rng, dirs, files)),
        )
        for i in range(n)
    ]


# --------------------------------------------------------------------------
# The three ways of answering a check-in


def naive_exact(scopes: list[Scope], mine: list[str]) -> int:
    """Conflicts by every pair, each told certain or not (as the detector does)."""
    found = 0
    for scope in scopes:
        verdicts = [overlap(m, t) for m in mine for t in scope.patterns]
        if any(v is not None for v in verdicts):
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


class Samples(list):
    """Wall-clock seconds, with the process CPU seconds of each sample in ``cpu``
    and the seconds of garbage collection inside each sample in ``young``
    (passes over the young generation only) and ``old`` (passes over an old one)."""

    def __init__(self) -> None:
        super().__init__()
        self.cpu: list[float] = []
        self.young: list[float] = []
        self.old: list[float] = []

    def take(self, other: Samples, n: int) -> None:
        """Add sample ``n`` of ``other``."""
        for mine, theirs in zip(
            (self, self.cpu, self.young, self.old),
            (other, other.cpu, other.young, other.old),
            strict=True,
        ):
            mine.append(theirs[n])


class Collections:
    """(generation, seconds) of each pass of the garbage collector."""

    def __init__(self) -> None:
        self.passes: list[tuple[int, float]] = []
        self._start = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.passes.append((info["generation"], time.perf_counter() - self._start))


GC = Collections()
gc.callbacks.append(GC)


def time_each(fn, queries: list, *, before=None) -> Samples:
    """Time ``fn`` on each query; ``before`` (untimed) runs ahead of each."""
    samples = Samples()
    for mine in queries:
        if before is not None:
            before()
        n_gc = len(GC.passes)
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn(mine)
        samples.append(time.perf_counter() - t0)
        samples.cpu.append(time.process_time() - c0)
        inside = GC.passes[n_gc:]
        samples.young.append(sum(seconds for gen, seconds in inside if gen == 0))
        samples.old.append(sum(seconds for gen, seconds in inside if gen > 0))
    return samples


def forgetting(detector: ConflictDetector):
    """Forget every memoised verdict and kept answer; patterns stay compiled
    (the server compiles a pattern when it normalises it)."""

    def forget() -> None:
        clear_verdict_caches()
        detector._kept.clear()  # kept answers, as in a process that just started

    return forget


def figures(samples: Samples) -> tuple[float, float, float, float, str, str]:
    """(p50, p99) wall-clock, then (p50, p99) CPU time, in ms; then, for the
    young and then the old generation, the samples with garbage collection
    inside: how many, and the longest such collection time in ms."""

    def passes(seconds: list[float]) -> str:
        inside = [s for s in seconds if s]
        return f"{len(inside)} ({max(inside) * 1000:.0f})" if inside else "0"

    return (
        *percentiles(samples),
        *percentiles(samples.cpu),
        passes(samples.young),
        passes(samples.old),
    )


def wildcard_first(pattern: str) -> bool:
    return any(not e.prefix for e in compile_pattern(pattern).entries)


def churn(
    detector: ConflictDetector, scopes: list[Scope]
) -> tuple[Callable[[list[str]], None], dict[str, Scope]]:
    """(check in, the live scopes by session id). Sessions come and go: each
    check-in is answered, joins the index, and the oldest session leaves (all
    three belong in a timing: keeping broad patterns' answers up to date is
    part of joining and leaving)."""
    live = {s.session_id: s for s in scopes}
    joined = itertools.count()

    def checkin(mine: list[str]) -> None:
        detector.find(patterns=mine)
        k = next(joined)
        scope = Scope(f"q{k}", f"newcomer-{k}", None, tuple(mine))
        detector.add(scope)
        live[scope.session_id] = scope
        oldest = next(iter(live))
        detector.remove(oldest)
        del live[oldest]

    return checkin, live


def checkin_rows(
    rng: random.Random, dirs: list[str], files: list[str], n: int, workload: str = "broad"
) -> list[tuple]:
    clear_caches()
    scopes = make_scopes(rng, n, dirs, files, workload)
    t0 = time.perf_counter()
    detector = ConflictDetector(scopes)
    build_ms = (time.perf_counter() - t0) * 1000
    draw = WORKLOADS[workload]
    queries = [draw(rng, dirs, files) for _ in range(CHECKINS)]
    checkin, live = churn(detector, scopes)

    # Just started: the index is built in one go, as after a restart. One
    # full collection (untimed) puts it in the collector's oldest generation,
    # where a running server's index is, and the first check-ins fill its
    # lazy caches (untimed too; the "verdicts cleared" row shows the cold cost).
    gc.collect()
    for _ in range(WARMUP):
        checkin(draw(rng, dirs, files))
    warm = time_each(checkin, queries)
    # Steady state: a server that has answered many check-ins keeps the
    # answers of the broad patterns its agents use; a broad pattern seen for
    # the first time (as in the rows above, just after start-up) is rarer.
    for _ in range(STEADY):
        checkin(draw(rng, dirs, files))
    later = [draw(rng, dirs, files) for _ in range(CHECKINS)]
    steady = time_each(checkin, later)
    kept = detector._kept
    label = f"check-in, {n:,} sessions, {workload}"
    kept_row = (label, len(kept), sum(map(len, kept.values())), len(detector._ids))
    scopes = list(live.values())
    answered = [detector.find(patterns=mine) for mine in queries]
    sizes = sorted(map(len, answered))
    overlaps = [o for found in answered for c in found for o in c.overlapping_files]
    certain = (
        sum(o.certain for o in overlaps),
        len(overlaps),
        sum(c.certain for found in answered for c in found),
        sum(sizes),
    )
    # Cold: every memoised verdict and kept answer forgotten before each check-in.
    cold_n = 40 if n <= 1000 else 20
    cold = time_each(
        lambda mine: detector.find(patterns=mine), queries[:cold_n], before=forgetting(detector)
    )
    answers = (f"{label}: conflicts per check-in", sizes[len(sizes) // 2], sizes[-1], *certain)
    timed = [
        (f"{label}: indexed, just started (after {WARMUP})", *figures(warm)),
        *wild_row(queries, warm),
        (f"{label}: indexed, steady (after {STEADY:,} more)", *figures(steady)),
        *wild_row(later, steady),
        (f"{label}: indexed (verdicts cleared)", *figures(cold)),
    ]
    if workload != "broad":
        for mine in queries[:5] + queries[-5:]:
            assert_agrees(detector, scopes, mine)
        return [*timed, ("__answers__", *answers), ("__kept__", *kept_row)]
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
    for mine in queries[:few] + queries[-few:]:
        assert_agrees(detector, scopes, mine)
    return [
        *timed,
        (f"{label}: naive all-pairs exact", *figures(naive)),
        (f"{label}: both-directions fnmatch", *figures(fnm)),
        ("__answers__", *answers),
        ("__kept__", *kept_row),
        ("__accuracy__", n, real, missed, false_alarm, build_ms),
    ]


def wild_row(queries: list[list[str]], samples: Samples) -> list[tuple]:
    """The row of the check-ins holding a wildcard-first pattern, if any."""
    wild = Samples()
    for n_query, q in enumerate(queries):
        if any(map(wildcard_first, q)):
            wild.take(samples, n_query)
    if not wild:
        return []
    return [(f"  of which the {len(wild)} holding a wildcard-first pattern", *figures(wild))]


def assert_agrees(detector: ConflictDetector, scopes: list[Scope], mine: list[str]) -> None:
    """The detector's answer is the all-pairs exact one, each pair once, each as
    certain as the pair verdict says."""
    got = [
        (c.session_id, o.pattern, o.their_pattern, o.certain)
        for c in detector.find(patterns=mine)
        for o in c.overlapping_files
    ]
    want = {
        (s.session_id, m, t, v.certain)
        for s in scopes
        for m in dict.fromkeys(mine)
        for t in dict.fromkeys(s.patterns)
        if (v := overlap(m, t)) is not None
    }
    assert len(got) == len(set(got)) and set(got) == want, "detector disagrees with all-pairs"


def paths_rows(rng: random.Random, dirs: list[str], files: list[str]) -> list[tuple]:
    clear_caches()
    scopes = make_scopes(rng, 1000, dirs, files)
    detector = ConflictDetector(scopes)
    batches = [rng.sample(files, 1000) for _ in range(20)]
    indexed = time_each(lambda paths: detector.find(paths=paths), batches)
    forget = forgetting(detector)
    cold = time_each(lambda paths: detector.find(paths=paths), batches[:5], before=forget)

    def naive(paths: list[str]) -> set[tuple[str, str, str]]:
        return {
            (s.session_id, p, t)
            for s in scopes
            for t in s.patterns
            for p in paths
            if compile_pattern(t).claims(p)
        }

    slow = time_each(naive, batches[:1])
    got = [
        (c.session_id, o.pattern, o.their_pattern)
        for c in detector.find(paths=batches[0])
        for o in c.overlapping_files
    ]
    assert len(got) == len(set(got)) and set(got) == naive(batches[0]), "paths disagree"
    return [
        ("conflicts/check 1,000 paths x 1,000 sessions: indexed", *figures(indexed)),
        ("conflicts/check 1,000 paths x 1,000 sessions: caches cleared", *figures(cold)),
        ("conflicts/check 1,000 paths x 1,000 sessions: naive all-pairs", *figures(slow)),
    ]


BRACES_6 = "{a,b}" * 6  # 64 alternatives
ADVERSARIAL = [
    ("32 stars vs 32 stars", "*a" * 16, "*b" * 16),
    ("star + 1000 a's vs star + 999 a's + b", "*" + "a" * 1000, "*" + "a" * 999 + "b"),
    ("'*a' + 30 '?' vs '*b' + 30 '?' (DFA blow-up)", "*a" + "?" * 30, "*b" + "?" * 30),
    ("'*a' + 30 '?' vs 'b' x 31 + '*'", "*a" + "?" * 30, "b" * 31 + "*"),
    ("32 classes vs 32 negated classes", "[ab]" * 32, "[!ab]" * 32),
    ("32 classes vs 32 overlapping classes", "[a-m]" * 32, "[k-z]" * 32),
    ("16 globstars each side", "/".join(["**", "a"] * 16), "/".join(["**", "b"] * 16)),
    ("16 globstars vs 500 literal segments", "/".join(["**", "a"] * 16), "/".join(["a"] * 500)),
    ("16 globstars vs 340 literal segments + 'b'", "/".join(["**", "a"] * 16), "a/" * 340 + "b"),
    (
        "64 segment braces vs 64 segment braces",
        "{a,b}/{c,d}/{e,f}/{g,h}/{i,j}/{k,l}/*",
        "{q,r}/{s,t}/{u,v}/{w,x}/{y,z}/{0,1}/*",
    ),
    (
        "64 in-segment braces vs 64 in-segment braces (disjoint)",
        "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}*",
        "{q,r}{s,t}{u,v}{w,x}{y,z}{0,1}*",
    ),
    (
        "64 in-segment braces vs 64 in-segment braces (overlap)",
        "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}*",
        "*{q,r}{s,t}{u,v}{w,x}{y,z}{0,1}",
    ),
    ("64 braces + '*' vs 64 braces + '*' (overlap)", BRACES_6 + "x*", "*y" + BRACES_6),
    ("64 braces of 1 globstar vs 64 braces", "**/" + BRACES_6 + "/**", BRACES_6 + "/**/z"),
    (
        "64 x 8-globstar braces vs 64 braces",
        "{a,b}/{c,d}/{e,f}/{g,h}/{i,j}/{k,l}/" + "/".join(["**", "x"] * 8) + "/u*",
        "**/{a,b}/{c,d}/{e,f}/{g,h}/{i,j}/{k,l}/" + "/".join(["**", "x"] * 7) + "/v*",
    ),
    ("(over the limits) 128 alternatives", "{a,b}" * 7 + "*", "*"),
    ("(over the limits) 17 globstars", "/".join(["**", "a"] * 17), "*"),
    ("(over the limits) 64 alternatives x 80 characters", BRACES_6 + "/" + "x" * 80, "*"),
]


def adversarial_rows() -> list[tuple]:
    """Cold (all caches cleared): normalise and compile both, then decide; worst of 5."""
    rows = []
    for name, a, b in ADVERSARIAL:
        prepare, decide = [], []
        verdict = "refused"
        for _ in range(5):
            clear_caches()
            t0 = time.perf_counter()
            try:
                pa, pb = normalise_pattern(a), normalise_pattern(b)
            except PatternError:
                prepare.append(time.perf_counter() - t0)
                continue
            t1 = time.perf_counter()
            found = overlap(pa, pb)
            decide.append(time.perf_counter() - t1)
            prepare.append(t1 - t0)
            verdict = "disjoint" if found is None else "certain" if found.certain else "if dir"
        rows.append(
            (name, max(prepare) * 1000, max(decide) * 1000 if decide else float("nan"), verdict)
        )
    return rows


def main() -> None:
    # The collector set-up of `agentlanes serve`, so these figures are the server's.
    tune_for_serving()
    rng = random.Random(SEED)
    dirs, files = make_repo(rng)
    started = time.perf_counter()
    load_before = os.getloadavg()
    rows = checkin_rows(rng, dirs, files, 1000) + checkin_rows(rng, dirs, files, 10_000)
    rows += checkin_rows(rng, dirs, files, 1000, "modules")
    rows += checkin_rows(rng, dirs, files, 10_000, "modules")
    rows += paths_rows(rng, dirs, files)
    limits = PatternLimits()
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"{CHECKINS} timed check-ins of 5 patterns each (after {WARMUP} untimed)"
    )
    print(
        f"limits: max_length {limits.max_length}, max_wildcards {limits.max_wildcards}, "
        f"max_brace_alternatives {limits.max_brace_alternatives}"
    )
    print(f"garbage collector as in `agentlanes serve`: thresholds {gc.get_threshold()}")
    print()
    print(f"{'':<72} {'wall-clock ms':>19} {'CPU ms':>19} {'GC in samples':>19}")
    print(f"{'workload':<72} {'p50':>9} {'p99':>9} {'p50':>9} {'p99':>9} {'young':>9} {'old':>9}")
    print(f"{'':<72} {'':>9} {'':>9} {'':>9} {'':>9} {'n (ms)':>9} {'n (ms)':>9}")
    print("-" * 132)
    accuracy, answers, kept = [], [], []
    for row in rows:
        if row[0] == "__accuracy__":
            accuracy.append(row[1:])
            continue
        if row[0] == "__answers__":
            answers.append(row[1:])
            continue
        if row[0] == "__kept__":
            kept.append(row[1:])
            continue
        name, p50, p99, cpu50, cpu99, young, old = row
        print(f"{name:<72} {p50:>9.2f} {p99:>9.2f} {cpu50:>9.2f} {cpu99:>9.2f} {young:>9} {old:>9}")
    print()
    print("answer size (the time of an exact answer grows with it), and how much is certain:")
    for name, median, most, sure, overlaps, sure_conflicts, conflicts in answers:
        print(
            f"  {name}: median {median:,}, most {most:,}; certain: "
            f"{sure:,} of {overlaps:,} overlaps ({100 * sure / max(overlaps, 1):.0f}%), "
            f"{sure_conflicts:,} of {conflicts:,} conflicts "
            f"({100 * sure_conflicts / max(conflicts, 1):.0f}%)"
        )
    print()
    print(
        "kept answers at the end of the steady rows "
        f"(budget: {KEEP_PER_PATTERN} overlaps per distinct live pattern):"
    )
    for name, count, entries, live_patterns in kept:
        print(
            f"  {name}: {count} answers, {entries:,} overlaps, "
            f"{live_patterns:,} distinct live patterns"
        )
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
    title = "adversarial pair (cold, worst of 5)"
    print(f"{title:<56} {'compile ms':>10} {'decide ms':>9} {'verdict':>9}")
    print("-" * 86)
    for name, prepare_ms, decide_ms, verdict in adversarial_rows():
        print(f"{name:<56} {prepare_ms:>10.3f} {decide_ms:>9.3f} {verdict:>9}")
    print()
    load_after = os.getloadavg()
    print(f"total run time {time.perf_counter() - started:.0f} s")
    print(
        "load average (1, 5, 15 min) at start "
        + ", ".join(f"{x:.2f}" for x in load_before)
        + "; at end "
        + ", ".join(f"{x:.2f}" for x in load_after)
    )


if __name__ == "__main__":
    main()
