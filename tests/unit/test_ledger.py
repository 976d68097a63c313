"""The working tree's ledger (agent/ledger.py): whose lines are whose when several agents
share one checkout, read against real git diffs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentlanes.agent.ledger import Content, Ledger, parse_hunks

GIT_ENV = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
BASE = "".join(f"line {n}\n" for n in range(1, 11))


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *GIT_ENV, *args], cwd=repo, capture_output=True, check=True)
    return done.stdout.decode()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text(BASE)
    git(tmp_path, "add", "a.py")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def ledger(repo: Path) -> Ledger:
    return Ledger(str(repo / ".git/agentlanes"), str(repo))


def change(repo: Path, edit: dict[int, str | None]) -> None:
    """Replace (text) or delete (None) 1-based lines of a.py."""
    lines = (repo / "a.py").read_text().splitlines(keepends=True)
    for n in sorted(edit, reverse=True):
        if edit[n] is None:
            del lines[n - 1]
        else:
            lines[n - 1] = f"{edit[n]}\n"
    (repo / "a.py").write_text("".join(lines))


def by(book: Ledger, repo: Path, agent: str, edit: dict[int, str | None]) -> None:
    """One tool call of ``agent``: its hooks before and after."""
    book.observe("a.py", None)
    change(repo, edit)
    assert book.observe("a.py", agent, wrote=True)


def hunks(repo: Path) -> list[tuple[int, int, int, int]]:
    diff = git(repo, "diff", "-U0", "--histogram", "--no-indent-heuristic", "HEAD", "--", "a.py")
    return parse_hunks(diff).get("a.py", [])


def test_each_agent_owns_only_the_hunks_its_own_calls_made(repo: Path) -> None:
    book = ledger(repo)
    by(book, repo, "claude-1", {3: "claude's line"})
    by(book, repo, "codex-2", {8: "codex's line"})
    by(book, repo, "codex-2", {5: None})  # a deletion: codex's tombstone
    change(repo, {1: "a person's editor"})  # no hook ran: nobody's
    found = hunks(repo)
    assert len(found) == 4
    assert book.owned_ranges("a.py", "claude-1", found, False) == [(3, 3)]
    assert book.owned_ranges("a.py", "codex-2", found, False) == [(5, 5), (8, 8)]
    assert book.owned_ranges("a.py", "gemini-3", found, False) == []


def test_committed_lines_are_nobodys_edits_any_more(repo: Path) -> None:
    book = ledger(repo)
    by(book, repo, "claude-1", {3: "claude's line"})
    by(book, repo, "codex-2", {8: "codex's line"})
    git(repo, "commit", "-q", "-am", "both")
    assert book.owned_ranges("a.py", "claude-1", hunks(repo), False) == []
    by(book, repo, "codex-2", {9: "more of codex"})
    assert book.owned_ranges("a.py", "claude-1", hunks(repo), False) == []
    assert book.owned_ranges("a.py", "codex-2", hunks(repo), False) == [(9, 9)]


def test_a_file_no_hook_saw_is_not_followed(repo: Path) -> None:
    assert ledger(repo).owned_ranges("a.py", "claude-1", hunks(repo), False) is None


def test_a_whole_file_write_is_stale_after_another_agents_change_until_read(
    repo: Path,
) -> None:
    book = ledger(repo)
    by(book, repo, "claude-1", {3: "claude's line"})  # claude last wrote it here
    by(book, repo, "codex-2", {8: "codex's line"})
    [(who, _, which)] = book.stale("a.py", "claude-1", {"codex-2"})
    assert (who, which) == ("codex-2", "line 8")
    assert book.stale("a.py", "claude-1", set()) == []  # codex no longer live
    assert book.stale("a.py", "codex-2", {"claude-1"}) == []  # claude changed it before
    book.read("a.py", "claude-1")
    assert book.stale("a.py", "claude-1", {"codex-2"}) == []


def test_a_change_read_before_its_after_hook_is_still_its_agents(repo: Path) -> None:
    """Between a tool call's change and its after-hook, other agents' hooks and their edit
    senders read the ledger (owned_ranges, stale, read, the git hook's owners_in). They
    once wrote the change back as nobody's, and then the after-hook found nothing new: the
    agent owned none of its lines and no whole-file write over them was stale (a day in
    one checkout failed this way, 1 run in 4 under load)."""
    book = ledger(repo)
    by(book, repo, "claude-1", {3: "claude's line"})
    book.observe("a.py", None)  # gemini's before-hook
    change(repo, {8: "gemini's line"})  # gemini's tool writes
    # Before gemini's after-hook: claude's edit sender, its guard, a read, the git hook.
    assert book.owned_ranges("a.py", "claude-1", hunks(repo), False) == [(3, 3)]
    assert book.stale("a.py", "claude-1", {"gemini-3"}) == []
    book.read("a.py", "codex-2")
    staged = Content((repo / "a.py").read_bytes())
    assert book.owners_in("a.py", staged, hunks(repo)) == {"claude-1": [3]}
    assert book.observe("a.py", "gemini-3", wrote=True)  # gemini's after-hook
    assert book.owned_ranges("a.py", "gemini-3", hunks(repo), False) == [(8, 8)]
    [(who, _, which)] = book.stale("a.py", "claude-1", {"gemini-3"})
    assert (who, which) == ("gemini-3", "line 8")


def test_an_agents_lines_it_wrote_over_are_no_longer_the_others(repo: Path) -> None:
    book = ledger(repo)
    by(book, repo, "codex-2", {8: "codex's line"})
    by(book, repo, "claude-1", {8: "claude rewrote it"})
    found = hunks(repo)
    assert book.owned_ranges("a.py", "codex-2", found, False) == []
    assert book.owned_ranges("a.py", "claude-1", found, False) == [(8, 8)]


def test_the_staged_copy_names_whose_lines_it_holds(repo: Path) -> None:
    book = ledger(repo)
    by(book, repo, "claude-1", {3: "claude's line"})
    by(book, repo, "codex-2", {8: "codex's line"})
    git(repo, "add", "a.py")
    staged = Content(git(repo, "cat-file", "blob", ":a.py").encode())
    diff = git(repo, "diff", "--cached", "-U0", "--histogram", "--", "a.py")
    assert book.owners_in("a.py", staged, parse_hunks(diff)["a.py"]) == {
        "claude-1": [3],
        "codex-2": [8],
    }
    # Only claude's hunk staged: codex's lines are not in the staged copy.
    git(repo, "reset", "-q")
    only = BASE.replace("line 3\n", "claude's line\n")
    diff_only = "--- a/a.py\n+++ b/a.py\n@@ -3 +3 @@\n-line 3\n+claude's line\n"
    found = book.owners_in("a.py", Content(only.encode()), parse_hunks(diff_only)["a.py"])
    assert found == {"claude-1": [3]}


def test_a_new_file_is_its_creators(repo: Path) -> None:
    book = ledger(repo)
    book.observe("new.py", None)
    (repo / "new.py").write_text("x\n")
    assert book.observe("new.py", "gemini-3", wrote=True)
    assert book.owned_ranges("new.py", "gemini-3", [], True) == [(1, 0)]
    assert book.owned_ranges("new.py", "claude-1", [], True) == []


def test_hunk_bodies_that_look_like_headers_stay_bodies() -> None:
    diff = (
        "diff --git a/x.sql b/x.sql\n--- a/x.sql\n+++ b/x.sql\n"
        "@@ -2,2 +2,0 @@\n--- a comment\n-+++ not a header\n"
        "@@ -9 +7,2 @@\n-old\n+new\n++++ b/y\n"
    )
    assert parse_hunks(diff) == {"x.sql": [(2, 2, 2, 0), (9, 1, 7, 2)]}
