"""Line grading against real git merges: does `grade_file` predict what `git merge` does?

Run: .venv/bin/python bench/merge_agreement.py   (--pairs 1000 --seed 27 --real-merges 20)

A base file of 60 lines, committed once. For each generated pair of edits (agent A's and
agent B's: one to three replace / insert / delete hunks each, B's hunks drawn near A's
more often than not so that the margin-0 boundary is crossed often), each side is
committed on its own branch off the base, its ranges are read from real
``git diff -U0 <base> <side> -- FILE`` and ``parse_unified_zero``, ``grade_file`` predicts
``lines`` (a merge conflict ahead) or ``file`` (a clean merge), and
``git merge-tree --write-tree`` (git 2.38+: a real merge, without a work tree) says what
git does. A few pairs also go through a real ``git merge`` in a work tree, with the agent
side's own ``git diff -U0 -- FILE``, to show that both agree. The table also grades each
pair with ``line_margin`` 1..3: a margin only turns clean merges into predicted
conflicts, never the reverse.

Three bases: numbered lines (every line unique; the new lines are unique to their agent
and pair), the same without a final newline, and code-like lines (blank lines, braces and
a few statements repeat, in the base and among the new lines; each new hunk holds one
line of its own). On the code-like base the reading matters: plain ``git diff -U0`` slides
an ambiguous hunk with its indent heuristic, which the merge does not use, while
``git diff -U0 --histogram --no-indent-heuristic`` (``READING_AS_MERGE``: the flags of
``edits.GIT_DIFF_ARGS``) reads the changes as merge-ort does (histogram diff, no indent
heuristic).

Left out of the generated pairs: both sides deleting exactly the same lines (git's
zealous merge takes one identical change without a conflict; ranges alone cannot tell a
deletion from a replacement). The run shows what git does with the ones it left out, and
how they are graded with the digests of each range's new text (SPEC ``digests``: the
same lines with the same digest do not meet) and without.

Real pairs (``--cooperbench DIR --upstream DIR``, or ``--sample`` for the pairs checked
in under ``bench/data/cooperbench/``): two features of one CooperBench task, each applied
to the task's upstream base commit, graded and merged the same way (``bench/real_pairs.py``);
the table gives agreement and missed conflicts per ``line_margin``, digests on and off.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.real_pairs

from agentlanes.domain.digests import diff_digests
from agentlanes.domain.edits import (
    GIT_DIFF_ARGS,
    LINES,
    FileEdit,
    Range,
    grade_file,
    parse_unified_zero,
)

BASE_LINES = 60
FILE = "file.txt"
MARGINS = (0, 1, 2, 3)
# How the agent side reads its ranges: plain `git diff -U0`, or as merge-ort diffs (it
# hardcodes the histogram algorithm and does not use the indent heuristic).
READING_PLAIN: tuple[str, ...] = ()
READING_AS_MERGE = GIT_DIFF_ARGS[2:]
# Lines that repeat in code, in a code-like base and among an agent's new lines.
REPEATED = ("}", "", "    return x", "    x += 1")


@dataclass(frozen=True, slots=True)
class Hunk:
    """One change to the base: the base lines it replaces, ``[start, end]`` (1-based,
    inclusive; an insertion after line ``a`` is ``[a+1, a]``), and how many new lines
    take their place (0: a deletion)."""

    start: int
    end: int
    new: int

    @property
    def deletes(self) -> bool:
        return self.new == 0


Edit = tuple[Hunk, ...]


@dataclass(frozen=True, slots=True)
class Pair:
    index: int
    a: Edit
    b: Edit


@dataclass(frozen=True, slots=True)
class Base:
    """The base file of a run: its lines, whether its last line ends with a newline, and
    whether the agents' new lines mix in lines that repeat (``REPEATED``)."""

    name: str
    lines: tuple[str, ...]
    eol: bool = True
    code: bool = False

    def text(self, lines: Sequence[str]) -> str:
        """A version of the file; without ``eol`` its last line has no newline (a line
        added after it changes it, in ``git diff`` and in the merge alike)."""
        return "\n".join(lines) + ("\n" if self.eol and lines else "")


NUMBERED = Base("numbered lines", tuple(f"line {n:02d}" for n in range(1, BASE_LINES + 1)))
NO_FINAL_NEWLINE = Base("numbered lines, no final newline", NUMBERED.lines, eol=False)
CODE_LIKE = Base(
    "code-like lines",
    tuple(
        f"    stmt {n}" if n % 3 == 0 else REPEATED[n % len(REPEATED)]
        for n in range(1, BASE_LINES + 1)
    ),
    code=True,
)


def new_lines(base: Base, agent: str, pair: int, hunk: int, count: int) -> list[str]:
    """The lines a hunk puts in: each names its agent, pair and hunk, so that no change
    of one side equals one of the other; on a code-like base all but one of them are
    drawn from ``REPEATED`` instead."""
    own = [f"    {agent} pair {pair} hunk {hunk} new {i}" for i in range(count)]
    if not base.code or not count:
        return own
    rng = random.Random(f"{agent}/{pair}/{hunk}")
    keep = rng.randrange(count)
    return [own[i] if i == keep else rng.choice(REPEATED) for i in range(count)]


def apply(edit: Edit, agent: str, pair: int, base: Base = NUMBERED) -> str:
    """The file after ``edit``."""
    out: list[str] = []
    line = 1
    for h, hunk in enumerate(edit):
        out.extend(base.lines[line - 1 : hunk.start - 1])
        out.extend(new_lines(base, agent, pair, h, hunk.new))
        line = hunk.end + 1
    out.extend(base.lines[line - 1 :])
    return base.text(out)


def valid(edit: Sequence[Hunk], lines: int = BASE_LINES) -> bool:
    """Sorted hunks inside the file with at least one unchanged line between any two, as
    ``git diff -U0`` prints them (closer changes would be one hunk)."""
    if any(h.start < 1 or h.end > lines or h.end < h.start - 1 for h in edit):
        return False
    if any(h.end < h.start and h.new == 0 for h in edit):  # an empty change
        return False
    return all(b.start - 1 > a.end for a, b in itertools.pairwise(edit))


def random_hunk(rng: random.Random, anchor: int, lines: int = BASE_LINES) -> Hunk:
    kind = rng.choices(("replace", "insert", "delete"), (45, 30, 25))[0]
    if kind == "insert":
        after = min(max(anchor, 0), lines)
        return Hunk(after + 1, after, rng.randint(1, 3))
    start = min(max(anchor, 1), lines)
    end = min(start + rng.randint(0, 3), lines)
    return Hunk(start, end, 0 if kind == "delete" else rng.randint(1, 3))


def random_edit(rng: random.Random, near: Sequence[Hunk] = (), lines: int = BASE_LINES) -> Edit:
    """One to three hunks; with ``near``, each anchored within four lines of one of
    ``near``'s hunk ends."""
    while True:
        count = rng.choice((1, 1, 2, 3))
        hunks = []
        for _ in range(count):
            if near:
                other = rng.choice(near)
                anchor = rng.choice((other.start, other.end)) + rng.randint(-4, 4)
            else:
                anchor = rng.randint(0, lines)
            hunks.append(random_hunk(rng, anchor, lines))
        edit = tuple(sorted(hunks, key=lambda h: (h.start, h.end)))
        if valid(edit, lines):
            return edit


def identical_deletion(a: Edit, b: Edit) -> bool:
    """Both sides delete exactly the same lines: the one pair shape git's zealous merge
    resolves without a conflict although the ranges meet."""
    return any(h.deletes and h in b for h in a if h.deletes)


def generate(seed: int, count: int, lines: int = BASE_LINES) -> tuple[list[Pair], list[Pair]]:
    """``count`` pairs, the same for the same seed (B's edit is near A's in 60 % of them),
    and the pairs drawn on the way that were left out (an identical deletion)."""
    rng = random.Random(seed)
    pairs: list[Pair] = []
    left_out: list[Pair] = []
    while len(pairs) < count:
        a = random_edit(rng, lines=lines)
        b = random_edit(rng, a if rng.random() < 0.6 else (), lines)
        if identical_deletion(a, b):
            left_out.append(Pair(count + len(left_out), a, b))
        else:
            pairs.append(Pair(len(pairs), a, b))
    return pairs, left_out


def generate_pairs(seed: int, count: int, lines: int = BASE_LINES) -> list[Pair]:
    return generate(seed, count, lines)[0]


def gap(mine: Sequence[Range], theirs: Sequence[Range]) -> int:
    """The fewest unchanged base lines between a range of ``mine`` and one of ``theirs``
    (negative: they share lines)."""
    pairs = [max(s2 - 1 - e1, s1 - 1 - e2) for s1, e1 in mine for s2, e2 in theirs]
    return min(pairs, default=BASE_LINES)


def isolated_git_env(home: Path) -> dict[str, str]:
    """No system or user git configuration (a ``diff.algorithm`` or ``merge.conflictStyle``
    of the machine's owner must not change the outcome), fixed dates and identity."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="Agent",
        GIT_AUTHOR_EMAIL="agent@example.com",
        GIT_COMMITTER_NAME="Agent",
        GIT_COMMITTER_EMAIL="agent@example.com",
        GIT_AUTHOR_DATE="2026-11-25T12:00:00Z",
        GIT_COMMITTER_DATE="2026-11-25T12:00:00Z",
    )
    return env


class MergeLab:
    """One repository holding the base commit; each side becomes a commit off it, built
    with plumbing (no work tree), and two sides are merged with ``git merge-tree``."""

    def __init__(
        self, root: Path, base: Base = NUMBERED, reading: Sequence[str] = READING_PLAIN
    ) -> None:
        self.file = base
        self.reading = tuple(reading)
        self.env = isolated_git_env(root / "home")
        self.repo = Path(tempfile.mkdtemp(prefix="lab-", dir=root))
        self.git("init", "-q", "-b", "main")
        self.base = self.commit(base.text(base.lines), parent=None)
        self.digests: dict[str, tuple[str | None, ...]] = {}

    def git(self, *args: str, stdin: str | None = None, ok: Sequence[int] = (0,)) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=self.repo,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode not in ok:
            raise RuntimeError(f"git {' '.join(args)}: {done.returncode} {done.stderr}")
        return done.stdout if len(ok) == 1 else str(done.returncode)

    def commit(self, text: str, parent: str | None) -> str:
        blob = self.git("hash-object", "-w", "--stdin", stdin=text).strip()
        tree = self.git("mktree", stdin=f"100644 blob {blob}\t{FILE}\n").strip()
        parents = ["-p", parent] if parent else []
        return self.git("commit-tree", tree, *parents, "-m", "edit").strip()

    def side(self, edit: Edit, agent: str, pair: int) -> tuple[str, list[Range]]:
        """The side's commit and its ranges as the agent side reads them."""
        return self.side_of_text(apply(edit, agent, pair, self.file))

    def side_of_text(self, text: str) -> tuple[str, list[Range]]:
        commit = self.commit(text, self.base)
        diff = self.git("diff", "-U0", *self.reading, self.base, commit, "--", FILE)
        # Each range's digest, as the agent side sends it (kept by commit).
        self.digests[commit] = tuple(diff_digests(diff).get(FILE, []))
        return commit, parse_unified_zero(diff).get(FILE, [])

    def merges_cleanly(self, a: str, b: str) -> bool:
        code = self.git("merge-tree", "--write-tree", "--no-messages", a, b, ok=(0, 1))
        return code == "0"


class WorkTreeLab:
    """A repository with a work tree, for real ``git merge`` of two branches; each side's
    ranges come from ``git diff -U0 -- FILE`` in the work tree, as an agent reads them."""

    def __init__(
        self, root: Path, base: Base = NUMBERED, reading: Sequence[str] = READING_PLAIN
    ) -> None:
        self.file = base
        self.reading = tuple(reading)
        self.env = isolated_git_env(root / "home")
        self.repo = Path(tempfile.mkdtemp(prefix="worktree-", dir=root))
        self.git("init", "-q", "-b", "main")
        (self.repo / FILE).write_text(base.text(base.lines))
        self.git("add", FILE)
        self.git("commit", "-q", "-m", "base")

    def git(self, *args: str, ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", *args], cwd=self.repo, env=self.env, capture_output=True, text=True, timeout=60
        )
        if done.returncode not in ok:
            raise RuntimeError(f"git {' '.join(args)}: {done.returncode} {done.stderr}")
        return done

    def side(self, branch: str, edit: Edit, agent: str, pair: int) -> list[Range]:
        self.git("checkout", "-q", "-B", branch, "main")
        (self.repo / FILE).write_text(apply(edit, agent, pair, self.file))
        diff = self.git("diff", "-U0", *self.reading, "--", FILE).stdout
        self.git("commit", "-q", "-am", f"{agent} {pair}")
        return parse_unified_zero(diff).get(FILE, [])

    def merge(self, pair: Pair) -> tuple[list[Range], list[Range], bool]:
        """(A's ranges, B's ranges, whether ``git merge`` of A into B was clean)."""
        mine = self.side("agent-a", pair.a, "A", pair.index)
        theirs = self.side("agent-b", pair.b, "B", pair.index)
        done = self.git("merge", "--no-edit", "-q", "agent-a", ok=(0, 1))
        if done.returncode:
            self.git("merge", "--abort")
        self.git("checkout", "-q", "main")
        return mine, theirs, done.returncode == 0


@dataclass(slots=True)
class Outcome:
    pair: Pair
    mine: list[Range]
    theirs: list[Range]
    clean: bool
    # Each range's digest (SPEC digests), when graded with them.
    my_digests: tuple[str | None, ...] | None = None
    their_digests: tuple[str | None, ...] | None = None

    def predicted(self, margin: int = 0, digests: bool = False) -> str:
        mine = FileEdit("b", tuple(self.mine), self.my_digests if digests else None)
        theirs = FileEdit("b", tuple(self.theirs), self.their_digests if digests else None)
        return grade_file(mine, theirs, margin)[0]

    def agrees(self, margin: int = 0) -> bool:
        return (self.predicted(margin) == LINES) != self.clean


def run_pairs(lab: MergeLab, pairs: Sequence[Pair]) -> list[Outcome]:
    outcomes = []
    for pair in pairs:
        a, mine = lab.side(pair.a, "A", pair.index)
        b, theirs = lab.side(pair.b, "B", pair.index)
        clean = lab.merges_cleanly(a, b)
        outcomes.append(Outcome(pair, mine, theirs, clean, lab.digests[a], lab.digests[b]))
    return outcomes


BANDS = (
    "share lines",
    "touch (0 lines between)",
    "1 line between",
    "2-3 lines between",
    "4+ lines between",
)


def band(lines_between: int) -> str:
    """Where the nearest hunks of a pair lie (``gap``), in the table's words."""
    if lines_between < 0:
        return BANDS[0]
    return BANDS[min(lines_between, 2) + 1] if lines_between <= 3 else BANDS[4]


def print_tables(outcomes: Sequence[Outcome]) -> None:
    total = len(outcomes)
    conflicts = sum(not o.clean for o in outcomes)
    print(
        "| margin | pairs | predicted lines | predicted file | git conflict | git clean "
        "| agreement | clean, predicted lines | conflict, predicted file |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for margin in MARGINS:
        lines = sum(o.predicted(margin) == LINES for o in outcomes)
        agree = sum(o.agrees(margin) for o in outcomes)
        over = sum(o.clean and o.predicted(margin) == LINES for o in outcomes)
        under = sum(not o.clean and o.predicted(margin) != LINES for o in outcomes)
        print(
            f"| {margin} | {total} | {lines} | {total - lines} | {conflicts} "
            f"| {total - conflicts} | {100 * agree / total:.1f} % | {over} | {under} |"
        )
    print()
    print("| nearest hunks of the pair | pairs | git conflict | predicted lines (margin 0) |")
    print("| --- | ---: | ---: | ---: |")
    for name in BANDS:
        mine = [o for o in outcomes if band(gap(o.mine, o.theirs)) == name]
        lines = sum(o.predicted() == LINES for o in mine)
        print(f"| {name} | {len(mine)} | {sum(not o.clean for o in mine)} | {lines} |")


RUNS = (
    (NUMBERED, READING_PLAIN),
    (NO_FINAL_NEWLINE, READING_PLAIN),
    (CODE_LIKE, READING_PLAIN),
    (CODE_LIKE, READING_AS_MERGE),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000, help="pairs per base")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--real-merges", type=int, default=20, help="pairs per base")
    real = parser.add_argument_group("real pairs (CooperBench feature patches)")
    real.add_argument("--sample", action="store_true", help="the pairs checked in (bench/data)")
    real.add_argument("--cooperbench", type=Path, help="a CooperBench checkout")
    real.add_argument(
        "--upstream", type=Path, help="clones of the tasks' repositories: DIR/OWNER/NAME"
    )
    real.add_argument("--export-sample", nargs="+", metavar="TASK", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sample or args.cooperbench:
        if args.cooperbench and not args.upstream:
            parser.error("--cooperbench needs --upstream (the clones of the tasks' repositories)")
        return main_real(args)
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    print(f"{version.strip()}; seed {args.seed}")
    failures = 0
    for base, reading in RUNS:
        pairs, left_out = generate(args.seed, args.pairs)
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            lab = MergeLab(Path(tmp), base, reading)
            outcomes = run_pairs(lab, pairs)
            took = time.perf_counter() - started
            outside = run_pairs(lab, left_out)
            real = WorkTreeLab(Path(tmp), base, reading)
            checked = outcomes[: args.real_merges]
            same = sum(real.merge(o.pair) == (o.mine, o.theirs, o.clean) for o in checked)
        command = " ".join(("git diff -U0", *reading))
        if base.code and not reading:  # the reading this run shows to be wrong
            expected = "may disagree"
        else:
            expected = "must agree"
            failures += sum(not o.agrees() for o in outcomes) + len(checked) - same
        print(
            f"\n{BASE_LINES} {base.name}, ranges from `{command}` ({expected}): "
            f"merge-tree of {len(outcomes)} pairs in {took:.1f} s\n"
        )
        print_tables(outcomes)
        print(
            f"\nReal `git merge` of two branches in a work tree, ranges from "
            f"`{command} -- {FILE}`: {same} of {len(checked)} pairs give the same ranges "
            "and outcome as merge-tree."
        )
        print(
            f"Left out on the way: {len(left_out)} pairs with an identical deletion: git "
            f"merged {sum(o.clean for o in outside)} of them cleanly; graded file "
            f"{sum(o.predicted(digests=True) != LINES for o in outside)} with digests, "
            f"{sum(o.predicted() != LINES for o in outside)} without."
        )
    return 1 if failures else 0


def main_real(args: argparse.Namespace) -> int:
    """The real pairs: the checked-in sample, or a CooperBench checkout and upstream
    clones; exits 1 on a missed conflict at margin 0 (digests on)."""
    from bench import real_pairs

    if args.sample:
        tasks = real_pairs.sample_tasks()
        clones: dict[str, Path | None] = {t.name: None for t in tasks}
    else:
        tasks = real_pairs.cooperbench_tasks(args.cooperbench)
        clones = {}
        for task in tasks:
            clones[task.name] = real_pairs.upstream_clone(args.upstream, task.repo)
    skipped = sorted({t.repo for t in tasks if t.files is None and clones[t.name] is None})
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    print(f"{version.strip()}; {len(tasks)} tasks")
    if skipped:
        print(f"no clone under {args.upstream} of: {', '.join(skipped)} (their tasks left out)")
    outcomes: list[real_pairs.PairOutcome] = []
    failed: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            if task.files is None and clones[task.name] is None:
                continue
            if args.export_sample and task.name in args.export_sample:
                clone = clones[task.name]
                assert clone is not None
                real_pairs.export_sample(task, clone, real_pairs.SAMPLE)
            found, bad = real_pairs.run_task(Path(tmp), task, clones[task.name])
            outcomes += found
            failed += [f"{task.name}/{f}" for f in bad]
    print(f"merge-tree of {len(outcomes)} pairs in {time.perf_counter() - started:.0f} s")
    if failed:
        print(f"patches that do not apply to their base (left out): {', '.join(failed)}")
    print()
    real_pairs.print_real_tables(outcomes)
    wrong = real_pairs.disagreements(outcomes)
    if wrong:
        print("\nDisagreements at margin 0, digests on:")
        print("\n".join(f"- {line}" for line in wrong))
    missed = [o for o in outcomes if not o.clean and o.predicted() != LINES]
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
