"""Line grading against real git merges: does `grade_file` predict what `git merge` does?

Run: .venv/bin/python bench/merge_agreement.py   (--pairs 1000 --seed 27 --real-merges 20)

One base file of 60 numbered lines, committed once. For each generated pair of edits
(agent A's and agent B's: one to three replace / insert / delete hunks each, the new
lines unique to their agent and pair, B's hunks drawn near A's more often than not so
that the margin-0 boundary is crossed often), each side is committed on its own branch
off the base, its ranges are read from real ``git diff -U0 <base> <side> -- FILE`` and
``parse_unified_zero``, ``grade_file`` predicts ``lines`` (a merge conflict ahead) or
``file`` (a clean merge), and ``git merge-tree --write-tree`` (git 2.38+: a real merge,
without a work tree) says what git does. A few pairs also go through a real ``git merge``
in a work tree, with the agent side's own ``git diff -U0 -- FILE``, to show that both
agree. The table also grades each pair with ``line_margin`` 1..3: a margin only turns
clean merges into predicted conflicts, never the reverse.

Outside the SPEC's rule, and left out of the generated pairs: both sides deleting exactly
the same lines (git's zealous merge takes one identical change without a conflict; ranges
cannot tell a deletion from a replacement, so the grade stays ``lines``, the cautious
side). The table shows that case on its own.
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

from agentlanes.domain.edits import LINES, FileEdit, Range, grade_file, parse_unified_zero

BASE_LINES = 60
FILE = "numbers.txt"
MARGINS = (0, 1, 2, 3)


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


def text(lines: Sequence[str], eol: bool) -> str:
    """The file's text; without ``eol`` its last line has no newline (git diff then says
    ``\\ No newline at end of file``, and a line added after it changes it)."""
    return "\n".join(lines) + ("\n" if eol and lines else "")


def base_text(lines: int = BASE_LINES, eol: bool = True) -> str:
    return text([f"line {n:02d}" for n in range(1, lines + 1)], eol)


def apply(edit: Edit, agent: str, pair: int, lines: int = BASE_LINES, eol: bool = True) -> str:
    """The file after ``edit``: every new line names its agent, pair and hunk, so no line
    of one side equals a line of the other or of the base."""
    out: list[str] = []
    line = 1
    for h, hunk in enumerate(edit):
        out.extend(f"line {n:02d}" for n in range(line, hunk.start))
        out.extend(f"{agent} pair {pair} hunk {h} new {i}" for i in range(hunk.new))
        line = hunk.end + 1
    out.extend(f"line {n:02d}" for n in range(line, lines + 1))
    return text(out, eol)


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
    return min(max(s2 - 1 - e1, s1 - 1 - e2) for s1, e1 in mine for s2, e2 in theirs)


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

    def __init__(self, root: Path, lines: int = BASE_LINES, eol: bool = True) -> None:
        self.lines = lines
        self.eol = eol
        self.env = isolated_git_env(root / "home")
        self.repo = Path(tempfile.mkdtemp(prefix="lab-", dir=root))
        self.git("init", "-q", "-b", "main")
        self.base = self.commit(base_text(lines, eol), parent=None)

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
        commit = self.commit(apply(edit, agent, pair, self.lines, self.eol), self.base)
        diff = self.git("diff", "-U0", self.base, commit, "--", FILE)
        return commit, parse_unified_zero(diff).get(FILE, [])

    def merges_cleanly(self, a: str, b: str) -> bool:
        code = self.git("merge-tree", "--write-tree", "--no-messages", a, b, ok=(0, 1))
        return code == "0"


class WorkTreeLab:
    """A repository with a work tree, for real ``git merge`` of two branches; each side's
    ranges come from ``git diff -U0 -- FILE`` in the work tree, as an agent reads them."""

    def __init__(self, root: Path, lines: int = BASE_LINES, eol: bool = True) -> None:
        self.lines = lines
        self.eol = eol
        self.env = isolated_git_env(root / "home")
        self.repo = Path(tempfile.mkdtemp(prefix="worktree-", dir=root))
        self.git("init", "-q", "-b", "main")
        (self.repo / FILE).write_text(base_text(lines, eol))
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
        (self.repo / FILE).write_text(apply(edit, agent, pair, self.lines, self.eol))
        ranges = parse_unified_zero(self.git("diff", "-U0", "--", FILE).stdout).get(FILE, [])
        self.git("commit", "-q", "-am", f"{agent} {pair}")
        return ranges

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

    def predicted(self, margin: int = 0) -> str:
        return grade_file(
            FileEdit("b", tuple(self.mine)), FileEdit("b", tuple(self.theirs)), margin
        )[0]

    def agrees(self, margin: int = 0) -> bool:
        return (self.predicted(margin) == LINES) != self.clean


def run_pairs(lab: MergeLab, pairs: Sequence[Pair]) -> list[Outcome]:
    outcomes = []
    for pair in pairs:
        a, mine = lab.side(pair.a, "A", pair.index)
        b, theirs = lab.side(pair.b, "B", pair.index)
        outcomes.append(Outcome(pair, mine, theirs, lab.merges_cleanly(a, b)))
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000, help="pairs per base")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--real-merges", type=int, default=20, help="pairs per base")
    args = parser.parse_args()
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    failures = 0
    for eol in (True, False):
        pairs, left_out = generate(args.seed + (not eol), args.pairs)
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            lab = MergeLab(Path(tmp), eol=eol)
            outcomes = run_pairs(lab, pairs)
            took = time.perf_counter() - started
            outside = run_pairs(lab, left_out)
            real = WorkTreeLab(Path(tmp), eol=eol)
            checked = outcomes[: args.real_merges]
            same = sum(real.merge(o.pair) == (o.mine, o.theirs, o.clean) for o in checked)
        failures += sum(not o.agrees() for o in outcomes) + len(checked) - same
        ending = "ends with a newline" if eol else "has no newline at its end"
        print(
            f"\n{BASE_LINES}-line base that {ending}; seed {args.seed + (not eol)}; "
            f"{version.strip()}; merge-tree of {len(outcomes)} pairs in {took:.1f} s\n"
        )
        print_tables(outcomes)
        print(
            f"\nReal `git merge` of two branches in a work tree, ranges from "
            f"`git diff -U0 -- {FILE}`: {same} of {len(checked)} pairs give the same ranges "
            "and outcome as merge-tree."
        )
        print(
            f"Left out on the way: {len(left_out)} pairs with an identical deletion "
            f"(graded lines): git merged {sum(o.clean for o in outside)} of them cleanly, "
            f"{sum(o.predicted() != LINES for o in outside)} graded file."
        )
    with tempfile.TemporaryDirectory() as tmp:
        both_delete = Pair(0, (Hunk(10, 12, 0),), (Hunk(10, 12, 0), Hunk(40, 40, 1)))
        (outcome,) = run_pairs(MergeLab(Path(tmp)), [both_delete])
    print(
        "\nOutside the rule (left out above): both sides delete lines 10-12: predicted "
        f"{outcome.predicted()}, git {'clean' if outcome.clean else 'conflict'}."
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
