"""The guard's view of an edit before it is made (hooks/coming_edit.py): the same ranges and
base as git reports once the edit is made, and the conflicts it would meet."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentlanes.domain.edits import GIT_DIFF_ARGS, FileEdit, parse_unified_zero
from agentlanes.hooks.coming_edit import after_tool, coming_edit, meeting

LINES = "".join(f"line {n}\n" for n in range(1, 41))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    (tmp_path / "app.py").write_text(LINES)
    git(tmp_path, "add", "app.py")
    git(tmp_path, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    return tmp_path


EDITS: list[dict[str, Any]] = [
    {"tool_name": "Edit", "tool_input": {"old_string": "line 7\n", "new_string": "seven\n"}},
    {"tool_name": "Edit", "tool_input": {"old_string": "line 9\n", "new_string": ""}},
    {
        "tool_name": "Edit",
        "tool_input": {"old_string": "line 12\n", "new_string": "line 12\nnew a\nnew b\n"},
    },
    {
        "tool_name": "MultiEdit",
        "tool_input": {
            "edits": [
                {"old_string": "line 1\n", "new_string": "one\n"},
                {"old_string": "line 30\nline 31\n", "new_string": "x\n"},
            ]
        },
    },
    {"tool_name": "Write", "tool_input": {"content": LINES + "tail\n"}},
]


@pytest.mark.parametrize("payload", EDITS)
def test_the_coming_edit_is_what_git_reports_once_it_is_made(
    repo: Path, payload: dict[str, Any]
) -> None:
    text = after_tool(payload, str(repo / "app.py"))
    assert text is not None
    predicted = coming_edit(str(repo), "app.py", text)
    (repo / "app.py").write_text(text)
    made = parse_unified_zero(git(repo, *GIT_DIFF_ARGS, "--", "app.py"))["app.py"]
    assert predicted == FileEdit(git(repo, "rev-parse", "HEAD:app.py").strip(), tuple(made))


def test_a_new_file_and_an_edit_that_cannot_be_told(repo: Path) -> None:
    assert coming_edit(str(repo), "new.py", "x\n") == FileEdit(None, ((1, 0),))
    missing = {"tool_name": "Edit", "tool_input": {"old_string": "nope", "new_string": "x"}}
    assert after_tool(missing, str(repo / "app.py")) is None
    assert after_tool({"tool_name": "Bash", "tool_input": {}}, str(repo / "app.py")) is None


def test_meeting_refuses_only_where_their_edits_meet_the_coming_lines(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD:app.py").strip()

    def conflict(ranges: list[list[int]], edited_by: str = "them") -> dict[str, Any]:
        entry = {"path": "app.py", "edited_by": edited_by, "base": base, "ranges": ranges}
        return {"agent_name": "alice", "edits": [entry]}

    edit = EDITS[0]  # line 7
    near, far, other_base = conflict([[8, 9]]), conflict([[20, 21]]), conflict([[30, 30]])
    other_base["edits"][0]["base"] = "f" * 40
    refusing, coming, why = meeting(edit, str(repo), ["app.py"], [near, far, other_base], 0)
    assert refusing == [near, other_base]
    assert coming == {"app.py": FileEdit(base, ((7, 7),))}
    assert why[0] == (
        "your edit of app.py (lines 7) meets their lines: alice's edits (lines 8-9) and "
        "yours would conflict at merge"
    )
    assert "another base" in why[1]
    # The margin widens what meets; an edit that cannot be told meets every edit there.
    refusing, _, _ = meeting(edit, str(repo), ["app.py"], [far], 12)
    assert refusing == [far]
    blind = {"tool_name": "Edit", "tool_input": {"old_string": "zzz", "new_string": "y"}}
    assert meeting(blind, str(repo), ["app.py"], [far], 0)[0] == [far]
