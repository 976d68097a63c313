"""Real pairs for ``bench/merge_agreement.py``: line grades against ``git merge-tree`` on
feature patches of public projects.

The pairs are CooperBench's (github.com/cooperbench/CooperBench, MIT): each task is one
upstream commit of a public repository and several features written against it, each a
``feature*/feature.patch``. Two features of one task are two agents' work on one base:
each is applied to the base commit (``git apply --cached``) and committed; each side's
edits are read as the agent side reads them (the merge's own diff, ``edits.GIT_DIFF_ARGS``,
``read_hunks``: ranges, and digests of their new text), ``grade_file`` grades every file
both changed, and ``git merge-tree --write-tree`` merges the two commits. A pair is
predicted to conflict when some file both changed is graded ``lines``.

Two sources of tasks:
* a CooperBench checkout and clones of the upstream repositories (``--cooperbench DIR
  --upstream DIR``: the base commit is read from the clone, which the scratch repository
  borrows objects from, nothing copied);
* the sample checked in under ``bench/data/cooperbench/`` (derived from both, source named
  in its README): for each task, the files the features change as they are at the base
  commit, and the features' patches; the base commit is rebuilt from those files.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentlanes.domain.digests import digest
from agentlanes.domain.edits import GIT_DIFF_ARGS, LINES, FileEdit, grade_file, read_hunks

SAMPLE = Path(__file__).resolve().parent / "data" / "cooperbench"
MARGINS = (0, 1, 2, 3)


@dataclass(frozen=True)
class Task:
    """One CooperBench task: its name (``family/taskN``), its upstream repository
    (``owner/name``) and base commit, and its features' patches (``featureN`` → text)."""

    name: str
    repo: str
    base: str
    patches: dict[str, bytes]
    # The files the features change, as at the base commit (the checked-in sample), or
    # None: read the base commit from a clone of the upstream repository.
    files: dict[str, bytes] | None = None


def _git(cwd: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None,
         ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
    done = subprocess.run(
        ["git", *args], cwd=cwd, input=stdin, capture_output=True, env=env, timeout=300
    )
    if done.returncode not in ok:
        raise RuntimeError(f"git {' '.join(args[:3])}: {done.stderr.decode(errors='replace')}")
    return done


# -- reading tasks ---------------------------------------------------------------------------


def cooperbench_tasks(root: Path) -> list[Task]:
    """The tasks of a CooperBench checkout (``dataset/<family>/<task>/``), their repository
    and base commit read from each task's ``setup.sh`` and ``Dockerfile``."""
    out = []
    for task_dir in sorted((root / "dataset").glob("*/task*")):
        setup = (task_dir / "setup.sh").read_text(errors="replace")
        docker = (task_dir / "Dockerfile").read_text(errors="replace")
        base = re.search(r'BASE_COMMIT="([0-9a-f]{40})"', setup)
        repo = re.search(r"github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?[\s/]", docker)
        if base is None or repo is None:
            continue
        patches = {
            p.parent.name: p.read_bytes()
            for p in sorted(task_dir.glob("feature*/feature.patch"), key=_feature_order)
        }
        name = f"{task_dir.parent.name}/{task_dir.name}"
        out.append(Task(name, repo[1], base[1], patches))
    return out


def _feature_order(path: Path) -> int:
    return int(re.sub(r"\D", "", path.parent.name) or 0)


def sample_tasks(root: Path = SAMPLE) -> list[Task]:
    """The checked-in sample: ``<family>/<task>/TASK`` (repo and base), ``base/`` (the
    changed files at the base commit) and ``featureN.patch``."""
    out = []
    for info in sorted(root.glob("*/task*/TASK")):
        task_dir = info.parent
        fields = dict(line.split("=", 1) for line in info.read_text().split() if "=" in line)
        base_dir = task_dir / "base"
        files = {
            str(p.relative_to(base_dir)): p.read_bytes() for p in base_dir.rglob("*") if p.is_file()
        }
        patches = {
            p.stem: p.read_bytes()
            for p in sorted(task_dir.glob("feature*.patch"), key=lambda p: int(p.stem[7:]))
        }
        name = f"{task_dir.parent.name}/{task_dir.name}"
        out.append(Task(name, fields["repo"], fields["base"], patches, files))
    return out


def changed_paths(patch: bytes) -> list[str]:
    """The files a patch changes (their old names; new files too)."""
    found = re.findall(rb"^diff --git a/(\S+) b/(\S+)$", patch, re.M)
    return list(dict.fromkeys(a.decode() for a, _ in found))


def upstream_clone(root: Path, repo: str) -> Path | None:
    """A clone of ``owner/name`` under ``root``: ``root/owner/name`` or ``root/name``
    (bare or not)."""
    owner, name = repo.split("/")
    for path in (root / owner / name, root / name, root / f"{owner}+{name}"):
        if path.exists():
            return path
    return None


def export_sample(task: Task, clone: Path, out: Path) -> None:
    """Write a task to the sample's layout, the changed files read at its base commit."""
    task_dir = out / task.name
    if task_dir.exists():
        shutil.rmtree(task_dir)
    (task_dir / "base").mkdir(parents=True)
    (task_dir / "TASK").write_text(f"repo={task.repo}\nbase={task.base}\n")
    paths = sorted({p for patch in task.patches.values() for p in changed_paths(patch)})
    for path in paths:
        shown = _git(clone, "cat-file", "blob", f"{task.base}:{path}", ok=(0, 128))
        if shown.returncode == 0:
            target = task_dir / "base" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(shown.stdout)
    for feature, patch in task.patches.items():
        (task_dir / f"{feature}.patch").write_bytes(patch)


# -- one task's lab --------------------------------------------------------------------------


@dataclass
class Side:
    """One feature applied: its commit and its edits (per file: base blob, ranges and
    digests)."""

    feature: str
    commit: str
    edits: dict[str, FileEdit]


@dataclass
class PairOutcome:
    task: str
    a: str
    b: str
    clean: bool  # git merge-tree
    shared: list[str]  # files both changed
    mine: dict[str, FileEdit] = field(repr=False, default_factory=dict)
    theirs: dict[str, FileEdit] = field(repr=False, default_factory=dict)

    def predicted(self, margin: int = 0, digests: bool = True) -> str:
        """``lines`` when some file both changed meets, else ``file`` (or ``claims`` when
        they share no file: they never meet)."""
        if not self.shared:
            return "claims"
        for path in self.shared:
            m, t = self.mine[path], self.theirs[path]
            if not digests:
                m, t = m._replace(digests=None), t._replace(digests=None)
            if grade_file(m, t, margin)[0] == LINES:
                return LINES
        return "file"

    def agrees(self, margin: int = 0, digests: bool = True) -> bool:
        return (self.predicted(margin, digests) == LINES) != self.clean


class TaskLab:
    """A scratch repository for one task: the base commit (borrowed from a clone's
    objects, or rebuilt from the sample's files), each feature applied as a commit."""

    def __init__(self, root: Path, task: Task, clone: Path | None) -> None:
        self.task = task
        self.repo = Path(tempfile.mkdtemp(prefix="task-", dir=root))
        self.env = {
            "HOME": str(root),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_AUTHOR_NAME": "Agent",
            "GIT_AUTHOR_EMAIL": "agent@example.com",
            "GIT_COMMITTER_NAME": "Agent",
            "GIT_COMMITTER_EMAIL": "agent@example.com",
            "GIT_AUTHOR_DATE": "2026-11-27T12:00:00Z",
            "GIT_COMMITTER_DATE": "2026-11-27T12:00:00Z",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
        }
        self.git("init", "-q", "--bare")
        if task.files is None:
            assert clone is not None
            objects = _git(clone, "rev-parse", "--git-path", "objects").stdout.decode().strip()
            path = Path(objects) if Path(objects).is_absolute() else clone / objects
            (self.repo / "objects" / "info" / "alternates").write_text(f"{path.resolve()}\n")
            self.base = task.base
        else:
            self.base = self._rebuild(task.files)

    def git(self, *args: str, stdin: bytes | None = None, index: Path | None = None,
            ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
        env = dict(self.env)
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return _git(self.repo, *args, stdin=stdin, env=env, ok=ok)

    def _rebuild(self, files: dict[str, bytes]) -> str:
        index = self.repo / "base.index"
        for path, content in sorted(files.items()):
            blob = self.git("hash-object", "-w", "--stdin", stdin=content).stdout.decode().strip()
            self.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", index=index)
        tree = self.git("write-tree", index=index).stdout.decode().strip()
        return self.git("commit-tree", tree, "-m", "base").stdout.decode().strip()

    def side(self, feature: str) -> Side | None:
        """The feature applied to the base as a commit, and its edits; None when its patch
        does not apply."""
        index = self.repo / f"{feature}.index"
        self.git("read-tree", self.base, index=index)
        applied = self.git(
            "apply", "--cached", "--whitespace=nowarn", "-",
            stdin=self.task.patches[feature], index=index, ok=(0, 1, 128),
        )  # fmt: skip
        if applied.returncode:
            return None
        tree = self.git("write-tree", index=index).stdout.decode().strip()
        commit = self.git("commit-tree", tree, "-p", self.base, "-m", feature)
        sha = commit.stdout.decode().strip()
        return Side(feature, sha, self.edits(sha))

    def edits(self, commit: str) -> dict[str, FileEdit]:
        """What a side changed, read as the agent side reads it: the merge's diff, each
        hunk's base lines and a digest of its new text; the base blob of each file."""
        diff = self.git(*GIT_DIFF_ARGS, "--no-renames", self.base, commit).stdout
        hunks = read_hunks(diff.decode("utf-8", "surrogateescape"))
        bases = self._blobs(list(hunks))
        return {
            path: FileEdit(
                bases.get(path),
                tuple(r for r, _ in found),
                tuple(None if new is None else digest(new) for _, new in found),
            )
            for path, found in hunks.items()
        }

    def _blobs(self, paths: list[str]) -> dict[str, str]:
        if not paths:
            return {}
        listed = self.git("ls-tree", "-z", self.base, "--", *paths).stdout.decode()
        out = {}
        for entry in filter(None, listed.split("\0")):
            meta, _, path = entry.partition("\t")
            out[path] = meta.split()[2]
        return out

    def merge(self, a: Side, b: Side) -> bool:
        done = self.git(
            "merge-tree", "--write-tree", "--no-messages", a.commit, b.commit, ok=(0, 1)
        )
        return done.returncode == 0


def run_task(root: Path, task: Task, clone: Path | None) -> tuple[list[PairOutcome], list[str]]:
    """Every pair of the task's features that apply, and the features that did not."""
    lab = TaskLab(root, task, clone)
    sides, failed = [], []
    for feature in task.patches:
        side = lab.side(feature)
        if side is None:
            failed.append(feature)
        else:
            sides.append(side)
    out = []
    for a, b in itertools.combinations(sides, 2):
        shared = sorted(a.edits.keys() & b.edits.keys())
        out.append(
            PairOutcome(task.name, a.feature, b.feature, lab.merge(a, b), shared, a.edits, b.edits)
        )
    return out, failed


# -- the tables -------------------------------------------------------------------------------


def print_real_tables(outcomes: Sequence[PairOutcome]) -> None:
    total = len(outcomes)
    shared = [o for o in outcomes if o.shared]
    conflicts = sum(not o.clean for o in outcomes)
    print(f"{total} pairs ({len(shared)} change a file in common), {conflicts} git conflicts\n")
    print(
        "| digests | margin | predicted lines | agreement | conflicts missed "
        "| clean, predicted lines | shared a file, graded file (parallel) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for digests in (True, False):
        for margin in MARGINS:
            lines = sum(o.predicted(margin, digests) == LINES for o in outcomes)
            agree = sum(o.agrees(margin, digests) for o in outcomes)
            missed = sum(not o.clean and o.predicted(margin, digests) != LINES for o in outcomes)
            over = sum(o.clean and o.predicted(margin, digests) == LINES for o in outcomes)
            parallel = sum(o.predicted(margin, digests) == "file" for o in shared)
            print(
                f"| {'on' if digests else 'off'} | {margin} | {lines} "
                f"| {100 * agree / max(total, 1):.1f} % | {missed} | {over} "
                f"| {parallel} ({100 * parallel / max(len(shared), 1):.0f} %) |"
            )
    print()
    print("| repository | tasks | pairs | git conflicts | agreement (margin 0, digests on) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for family, group in itertools.groupby(outcomes, key=lambda o: o.task.split("/")[0]):
        mine = list(group)
        agree = sum(o.agrees() for o in mine)
        tasks = len({o.task for o in mine})
        print(
            f"| {family} | {tasks} | {len(mine)} | {sum(not o.clean for o in mine)} "
            f"| {100 * agree / len(mine):.1f} % |"
        )


def disagreements(outcomes: Iterable[PairOutcome], margin: int = 0) -> list[str]:
    return [
        f"{o.task} {o.a}+{o.b}: git {'clean' if o.clean else 'conflict'}, "
        f"predicted {o.predicted(margin)}"
        for o in outcomes
        if not o.agrees(margin)
    ]
