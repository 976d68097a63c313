"""The guard's pure parts: which files a tool call changes and who the agent is (when an
overlap is certain enough to deny: tests/unit/test_conflict_report.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agentlanes.hooks.agent_name import agent_for
from agentlanes.hooks.guard import _scope, run, tool_targets


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
