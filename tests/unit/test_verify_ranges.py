"""``lanes verify`` without a server: which commits and files a range or a push means, what
the pre-push hook reads (git's documented stdin, kept in tests/fixtures/git_pre_push.json),
and how a conflicts answer becomes refusals and warnings."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from agentlanes.client.report import conflict_lines
from agentlanes.hooks.verify import (
    UsageError,
    _holders,
    changed_files,
    default_range,
    describe_ranges,
    edit_line,
    given_range,
    pushed_ranges,
)

FIXTURE = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "git_pre_push.json").read_text(encoding="utf-8")
)
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True
    ).stdout.strip()


def commit(repo: Path, *paths: str, message: str = "change") -> str:
    for rel in paths:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(f"{rel} {message}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone of a bare remote holding one commit (README, src/a.py); cwd is the clone."""
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(key)
    for key, value in ENV.items():
        if key.startswith("GIT_"):
            monkeypatch.setenv(key, value)
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    commit(seed, "README", "src/a.py", message="initial")
    git(tmp_path, "clone", "-q", "--bare", str(seed), "remote.git")
    git(tmp_path, "clone", "-q", "remote.git", "work")
    work = tmp_path / "work"
    monkeypatch.chdir(work)
    return work


def test_a_range_lists_both_sides_of_a_rename_and_deletions(clone: Path) -> None:
    commit(clone, "src/b.py", message="one")
    (clone / "lib").mkdir()
    git(clone, "mv", "src/a.py", "lib/a.py")
    git(clone, "rm", "-q", "README")
    git(clone, "commit", "-q", "-m", "move")
    commits, paths = changed_files(default_range())
    assert commits == 2
    assert sorted(paths) == ["README", "lib/a.py", "src/a.py", "src/b.py"]


def test_the_default_range_is_what_head_has_over_its_upstream(clone: Path) -> None:
    rng = default_range()
    assert rng.revs == ["@{upstream}..HEAD"] and rng.label == "origin/main..HEAD"
    assert rng.note is None
    assert changed_files(rng) == (0, [])
    commit(clone, "src/new.py")
    assert changed_files(default_range()) == (1, ["src/new.py"])


def test_without_an_upstream_the_default_is_the_commits_on_no_remote(clone: Path) -> None:
    git(clone, "checkout", "-q", "-b", "topic")  # no upstream
    commit(clone, "docs/x.md")
    rng = default_range()
    assert rng.revs == ["HEAD", "--not", "--remotes"]
    assert rng.note and "HEAD --not --remotes" in rng.note and "no upstream" in rng.note
    assert changed_files(rng) == (1, ["docs/x.md"])


def test_a_bad_range_is_a_usage_error_naming_it(clone: Path) -> None:
    with pytest.raises(UsageError, match=re.escape("bad revision range 'nosuch..HEAD'")):
        changed_files(given_range("nosuch..HEAD"))
    for text in ("-p", "--output=/tmp/x", " "):
        with pytest.raises(UsageError, match="is not a revision range"):
            given_range(text)
    assert changed_files(given_range("HEAD~0..HEAD")) == (0, [])


def test_the_fixture_is_what_git_really_sends_a_pre_push_hook(clone: Path) -> None:
    """A recording hook on a real push: new branch, update and deletion lines have the
    documented shape (four fields; all zeros for a missing side; ``(delete)``)."""
    log = clone.parent / "pushed.txt"
    hook = clone / ".git" / "hooks" / "pre-push"
    hook.write_text(f'#!/bin/sh\necho "$1 $2" >> {log}\ncat >> {log}\n')
    hook.chmod(0o755)
    before = git(clone, "rev-parse", "HEAD")
    local = commit(clone, "src/new.py")
    git(clone, "branch", "topic")
    git(clone, "push", "-q", "origin", "main", "topic")
    git(clone, "push", "-q", "origin", ":topic")
    lines = log.read_text().splitlines()
    url = str(clone.parent / "remote.git")
    zero = FIXTURE["zero"]
    assert lines[0] == f"origin {url}"
    assert sorted(lines[1:3]) == sorted(
        [
            FIXTURE["lines"]["update"].format(local=local, remote=before).rstrip("\n"),
            FIXTURE["lines"]["new_branch"].format(local=local).rstrip("\n"),
        ]
    )
    assert lines[3] == f"origin {url}"
    assert lines[4] == FIXTURE["lines"]["delete"].format(remote=local).rstrip("\n")
    assert len(zero) == 40 and set(zero) == {"0"}
    example = FIXTURE["documented_example"]["line"]
    assert len(example.split(" ")) == 4 and example.endswith("\n")


def test_a_push_checks_each_pushed_range(clone: Path) -> None:
    before = git(clone, "rev-parse", "HEAD")
    commit(clone, "src/one.py", message="one")
    local = commit(clone, "src/two.py", message="two")
    lines = FIXTURE["lines"]
    stdin = [
        lines["update"].format(local=local, remote=before),
        lines["new_branch"].format(local=local),
        lines["delete"].format(remote=before),
        "\n",
        "garbled line\n",
    ]
    ranges, unread = pushed_ranges(stdin, "origin")
    assert unread == ["garbled line"]
    assert [r.revs for r in ranges] == [
        [f"{before}..{local}"],
        [local, "--not", "--remotes=origin"],  # new branch: what the remote lacks
    ]
    for rng in ranges:
        assert changed_files(rng) == (2, ["src/two.py", "src/one.py"])
    # A push to a URL (no named remote): on no remote-tracking branch at all.
    [by_url], _ = pushed_ranges([lines["new_branch"].format(local=local)], "/some/url.git")
    assert by_url.revs == [local, "--not", "--remotes"]
    # The remote moved to a commit this clone has never seen (a force push): the commits
    # on no branch of the remote we know.
    unseen = "1234567890abcdef1234567890abcdef12345678"
    [forced], _ = pushed_ranges([lines["update"].format(local=local, remote=unseen)], "origin")
    assert forced.revs == [local, "--not", "--remotes=origin"]
    assert changed_files(forced)[1] == ["src/two.py", "src/one.py"]


def test_line_ranges_are_described_as_people_read_them() -> None:
    assert describe_ranges([[10, 14], [30, 30], [42, 41], [1, 0]]) == (
        "lines 10-14, line 30, new lines after 41, new lines at the top"
    )
    many = [[n, n] for n in range(1, 20, 2)]
    assert describe_ranges(many).endswith("line 11, and 4 more")
    assert describe_ranges([]) == "some lines"


def conflict(agent: str, sid: str, edits: list[dict], files: list[str]) -> dict:
    return {
        "session_id": sid,
        "agent_name": agent,
        "overlapping_area": False,
        "certain": True,
        "grade": "claims",
        "edits": edits,
        "overlapping_files": [
            {"pattern": f, "their_pattern": "src/**", "example": f, "certain": True} for f in files
        ],
    }


def test_their_edits_refuse_and_bare_claims_only_warn() -> None:
    answer = [
        conflict(
            "alice",
            "s-a",
            [
                {"path": "src/a.py", "edited_by": "them", "ranges": [[3, 5]]},
                {
                    "path": "src/b.py",
                    "edited_by": "both",
                    "grade": "lines",
                    "same_base": True,
                    "ranges": [[7, 7]],
                    "my_ranges": [[6, 8]],
                },
                {"path": "src/c.py", "edited_by": "me", "my_ranges": [[1, 2]]},
                {"path": "src/not-in-range.py", "edited_by": "them", "ranges": [[1, 1]]},
            ],
            ["src/a.py", "src/b.py", "src/c.py"],
        ),
        conflict("bob", "s-b", [], ["src/c.py"]),
    ]
    held, claimed = _holders(answer, {"src/a.py", "src/b.py", "src/c.py"})
    assert [(h["agent_name"], h["path"]) for h in held] == [
        ("alice", "src/a.py"),
        ("alice", "src/b.py"),
    ]
    assert edit_line(held[0]) == (
        "src/a.py: alice is editing lines 3-5 (not committed); "
        'ask them: lanes message send alice "..."'
    )
    assert "your session's edits meet theirs" in edit_line(held[1])
    # Only I edited src/c.py, bob only claims it: warnings, not refusals.
    assert [(c["agent_name"], [f["example"] for f in c["overlapping_files"]]) for c in claimed] == [
        ("alice", ["src/c.py"]),
        ("bob", ["src/c.py"]),
    ]
    # Their edits were said above (or lie outside the range): the warnings name claims only,
    # never "alice has edited it ..., with no edits of theirs reported".
    assert conflict_lines(claimed) == [
        "src/c.py is claimed by alice for certain (their pattern src/**)",
        "src/c.py is claimed by bob for certain (their pattern src/**)",
    ]


def test_an_older_server_a_cut_answer_and_an_error_answer(
    clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the server says shapes the verdict: conflicts without ``edits`` (a server
    before line-level claims) are claims, so warnings; a cut answer is said to be cut; an
    error answer follows fail_closed like an unreachable server."""
    from agentlanes.hooks import verify
    from agentlanes.hooks.http import LeanApiError

    commit(clone, "src/a.py", message="mine")
    old = conflict("alice", "s-a", [], ["src/a.py"])
    del old["edits"], old["grade"]
    answers: list = [{"conflicts": [old], "truncated": True}]
    monkeypatch.setattr(verify, "call_many", lambda cfg, requests: answers)
    env = {"AGENTLANES_API_KEY": "alk_x", "AGENTLANES_URL": "http://127.0.0.1:1"}
    done = verify.check_range([default_range()], env=env)
    assert done.exit_code == 0
    assert any("cut its answer short" in line for line in done.lines)
    assert any("reports no edits" in line for line in done.lines)
    assert any(line.startswith("warning: src/a.py is claimed by alice") for line in done.lines)

    answers[:] = [LeanApiError(401, {"error": {"code": "UNAUTHORIZED", "message": "bad key"}})]
    done = verify.check_range([default_range()], env=env)
    assert done.exit_code == 0 and done.lines[-1].endswith("; not verified")
    assert "UNAUTHORIZED" in done.lines[-1]
    done = verify.check_range([default_range()], env={**env, "AGENTLANES_FAIL_CLOSED": "1"})
    assert done.exit_code == 1 and done.lines[-1].endswith("; refused (fail_closed)")
