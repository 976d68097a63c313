"""Cursor runs Claude Code's hooks from ``.claude/settings.json`` as well as its own
(https://cursor.com/docs/reference/third-party-hooks): one tool call is checked once,
whichever configs are present (SPEC "Every coding agent").

Cursor is not on npm, so its documented events (``tests/fixtures/agent_hooks/cursor.json``)
go through both hooks as Cursor runs them: ``lanes guard`` (the Claude Code hook, by
``agentlanes.hooks.guard.run``) and ``lanes guard --agent cursor``; the guard core's
``check`` is counted.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentlanes.hooks import guard
from agentlanes.hooks.adapters import claude, core, cursor

FIXTURE = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "agent_hooks" / "cursor.json").read_text()
)


def event(name: str, repo: Path, **extra: Any) -> dict[str, Any]:
    text = json.dumps(FIXTURE["events"][name]["input"])
    text = text.replace("$REPO", str(repo)).replace("$SID", "conv-1")
    text = text.replace("$FILE", str(repo / "src/app.py")).replace("$REL", "src/app.py")
    return {**json.loads(text), **extra}


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[Any, ...]]:
    """Every check the guard core is asked for (each refused, as a held file is)."""
    seen: list[tuple[Any, ...]] = []

    def check(*args: Any, **kwargs: Any) -> core.Verdict:
        seen.append(args)
        return core.Verdict(deny="agentlanes: src/app.py is claimed by alice")

    monkeypatch.setattr(core, "check", check)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("CURSOR_VERSION", raising=False)
    monkeypatch.delenv("CURSOR_PROJECT_DIR", raising=False)
    return seen


def cursor_config(repo: Path) -> None:
    """What ``lanes init --agent cursor`` writes (the command is all that matters here)."""
    (repo / ".cursor").mkdir(parents=True)
    entry = [{"command": "/opt/agentlanes/bin/lanes guard --agent cursor"}]
    hooks = {e: entry for e in ("preToolUse", "beforeShellExecution", "postToolUse")}
    (repo / ".cursor" / "hooks.json").write_text(json.dumps({"version": 1, "hooks": hooks}))


def claude_hook(payload: dict[str, Any]) -> Any:
    """``lanes guard`` (Claude Code's hook) on this event: its JSON answer, or None."""
    out = io.StringIO()
    assert claude.run(io.StringIO(json.dumps(payload)), out) == 0
    return json.loads(out.getvalue()) if out.getvalue().strip() else None


def test_an_edit_is_checked_once_when_cursor_runs_both_configs(
    checks: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    cursor_config(tmp_path)
    edit = event("edit", tmp_path)
    assert claude_hook(edit) is None  # the Claude Code hook stands aside
    assert checks == []
    answer = cursor.answer(edit, None).out  # .cursor/hooks.json's hook checks it
    assert answer["permission"] == "deny"
    assert len(checks) == 1


def test_a_shell_command_is_checked_once_when_cursor_runs_both_configs(
    checks: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    cursor_config(tmp_path)
    command = "echo x > src/app.py"
    pre = event("edit", tmp_path, tool_name="Shell", tool_input={"command": command})
    shell = event("shell", tmp_path, command=command)
    # One shell call: preToolUse (Shell) and beforeShellExecution from Cursor's config,
    # and preToolUse again from Claude Code's (Bash mapped to Shell).
    assert claude_hook(pre) is None
    assert cursor.answer(pre, None).out == {}
    assert cursor.answer(shell, None).out["permission"] == "deny"
    assert [c[3:] for c in checks] == [("Bash", {"command": command})]


def test_the_claude_hook_checks_cursors_calls_when_cursor_has_no_config_of_ours(
    checks: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    edit = event("edit", tmp_path)
    answer = claude_hook(edit)
    assert answer == {
        "permission": "deny",
        "agent_message": "agentlanes: src/app.py is claimed by alice",
        "user_message": "agentlanes: src/app.py is claimed by alice",
    }
    assert [c[0] for c in checks] == ["cursor"]
    # The shell too: no beforeShellExecution hook of ours runs without .cursor/hooks.json.
    claude_hook(event("edit", tmp_path, tool_name="Shell", tool_input={"command": "rm src/x"}))
    assert len(checks) == 2
    # Cursor may name the event as Claude Code does: the same answer.
    assert claude_hook({**edit, "hook_event_name": "PreToolUse"})["permission"] == "deny"


def test_claude_code_started_in_cursors_terminal_stays_claude_code(
    checks: list[tuple[Any, ...]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cursor_config(tmp_path)
    monkeypatch.setenv("CURSOR_VERSION", "2.1.0")  # inherited from Cursor's terminal
    monkeypatch.setenv("CLAUDECODE", "1")  # Claude Code sets it for its hooks
    handled: list[Any] = []
    monkeypatch.setattr(guard, "handle", lambda payload, **kw: handled.append(payload) or {})
    claude_event = {
        "session_id": "abc",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(tmp_path / "src/app.py"), "content": "x"},
    }
    claude_hook(claude_event)
    assert handled == [claude_event]  # the Claude Code guard's own path
    assert checks == []


def test_cursors_environment_alone_tells_it_runs_the_hook(tmp_path: Path) -> None:
    bare = {"hook_event_name": "preToolUse", "tool_name": "Write"}
    assert cursor.runs_under_cursor(bare, {"CURSOR_VERSION": "2.1.0"})
    assert not cursor.runs_under_cursor(bare, {"CURSOR_VERSION": "2.1.0", "CLAUDECODE": "1"})
    assert not cursor.runs_under_cursor(bare, {})
    assert cursor.runs_under_cursor({**bare, "cursor_version": "2.1.0"}, {"CLAUDECODE": "1"})
