"""The guard's pure parts: which files a tool call changes, who the agent is, and when an
overlap is certain enough to deny (SPEC: File patterns; a missing `certain` counts)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agentlanes.hooks.agent_name import agent_for
from agentlanes.hooks.guard import _certain, _scope, overlap_lines, run, tool_targets


def test_agent_is_named_after_claude_codes_session_or_the_environment() -> None:
    assert agent_for({"session_id": "abc-123"}, env={}) == "claude-abc-123"
    assert agent_for({"session_id": "a/b c"}, env={}) == "claude-a-b-c"
    assert len(agent_for({"session_id": "x" * 100}, env={}) or "") == 64
    assert agent_for({}, env={}) is None
    assert agent_for({"session_id": "s"}, env={"AGENTLANES_AGENT_NAME": "alice"}) == "alice"


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("Edit", {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"}, ["/r/a.py"]),
        ("Write", {"file_path": "b.py", "content": ""}, ["/r/b.py"]),
        ("MultiEdit", {"file_path": "/r/c.py", "edits": []}, ["/r/c.py"]),
        ("NotebookEdit", {"notebook_path": "/r/n.ipynb", "new_source": ""}, ["/r/n.ipynb"]),
        ("Bash", {"command": "sed -i s/a/b/ d.py"}, ["/r/d.py"]),
        ("Read", {"file_path": "/r/a.py"}, []),
        ("Grep", {"pattern": "x"}, []),
        ("mcp__other__write", {"file_path": "/r/a.py"}, []),
        (["not", "a", "name"], {"file_path": "/r/a.py"}, []),
    ],
)
def test_tool_targets(tool: object, tool_input: dict[str, object], expected: list[str]) -> None:
    payload = {"tool_name": tool, "tool_input": tool_input, "cwd": "/r"}
    targets, base = tool_targets(payload)
    assert [path for path, _ in targets] == expected and base == "/r"


def test_scope_sends_directories_and_globs_as_patterns(tmp_path: Path) -> None:
    (tmp_path / "src" / "old").mkdir(parents=True)
    root = str(tmp_path)
    targets = [
        (f"{root}/src/a.py", False),
        (f"{root}/src/old", False),
        (f"{root}/src/*.py", True),
        (f"{root}/.git/index", False),
        ("/elsewhere/x", False),
        (f"{root}/src/a.py", False),
    ]
    assert _scope(targets, root) == (["src/a.py"], ["src/old/", "src/*.py"])


def test_only_certain_overlaps_deny_and_uncertain_ones_say_why() -> None:
    sure = {"agent_name": "alice", "overlapping_files": [{"example": "a", "their_pattern": "a"}]}
    maybe = {
        "agent_name": "bob",
        "overlapping_files": [
            {
                "pattern": "package.json/x.py",
                "their_pattern": "package.json",
                "example": "package.json/x.py",
                "certain": False,
                "if_directory": "package.json",
            }
        ],
    }
    assert _certain([sure]) is True  # a server without the field: every overlap is certain
    assert _certain([maybe]) is False
    assert _certain([{"agent_name": "c", "overlapping_area": True, "declared_area": "x"}])
    [line] = overlap_lines([maybe])
    assert line.endswith("only if package.json is a directory")


@pytest.mark.parametrize("stdin", ["", "{", "[]", '{"tool_name": "Edit", "tool_input": 3}'])
def test_unreadable_input_never_exits_2(stdin: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert run(io.StringIO(stdin), out) == 0
    assert out.getvalue() == ""
    assert capsys.readouterr().err.startswith("agentlanes guard:")


def test_reads_get_no_answer_even_with_allow() -> None:
    out = io.StringIO()
    event = {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}, "cwd": "/"}
    assert run(io.StringIO(json.dumps(event)), out, allow=True) == 0
    assert out.getvalue() == ""
