"""The agent adapters' pure parts: patch files, names, options, and their import budget."""

from __future__ import annotations

import json

import pytest

from agentlanes.hooks.adapters import ADAPTERS, parse
from agentlanes.hooks.adapters.core import agent_name, patch_paths
from agentlanes.hooks.guard import tool_targets
from tests.unit.test_hook_http import AVOIDED, HEAVY, loaded_by

PATCH = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    return 1
+    return 2
*** Add File: docs/new.md
+hello
*** Delete File: old/gone.py
*** Update File: src/a.py
*** Move to: src/b.py
@@
-x
+y
  *** Update File: src/indented.py
*** End Patch
"""


def test_the_files_of_an_apply_patch() -> None:
    assert patch_paths(PATCH) == [
        "src/app.py",
        "docs/new.md",
        "old/gone.py",
        "src/a.py",
        "src/b.py",
        "src/indented.py",
    ]
    assert patch_paths(None) == [] and patch_paths("*** Update File:   \n") == []


def test_the_claude_guard_reads_codex_apply_patch() -> None:
    payload = {"tool_name": "apply_patch", "cwd": "/repo", "tool_input": {"command": PATCH}}
    targets, base = tool_targets(payload)
    assert base == "/repo"
    assert ("/repo/src/app.py", False) in targets and ("/repo/src/b.py", False) in targets
    assert len(targets) == 6


def test_an_agent_is_named_after_its_own_session() -> None:
    assert agent_name("cursor", "conv-1", {}) == "cursor-conv-1"
    assert agent_name("cline", "task 1/2", {}) == "cline-task-1-2"
    assert len(agent_name("codex", "x" * 100, {})) == 64
    assert agent_name("codex", "s1", {"AGENTLANES_AGENT_NAME": "alice"}) == "alice"
    assert agent_name("copilot", None, {"AGENTLANES_AGENT_PID": "1"}) == "copilot-pid1"


def test_guard_options() -> None:
    assert parse(["--agent", "copilot", "--event", "preToolUse"]) == (
        "copilot",
        "preToolUse",
        None,
    )
    assert parse(["--agent=cline"]) == ("cline", None, None)
    assert parse(["--agent", "cursor", "--bogus"])[2] == "unknown option --bogus"


def test_every_adapter_keeps_the_guards_import_budget() -> None:
    modules = ", ".join(f"agentlanes.hooks.adapters.{m}" for m in ADAPTERS.values())
    loaded = loaded_by(f"agentlanes.cli.main, agentlanes.hooks.guard, {modules}")
    unwanted = HEAVY | AVOIDED | {"argparse", "tomllib"}
    assert not loaded & unwanted, loaded & unwanted


def test_copilot_never_checks_a_view(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentlanes.hooks.adapters import copilot, core

    checked: list[tuple[str, dict[str, object]]] = []

    def check(
        agent: str, sid: object, cwd: object, tool: str, args: dict[str, object], **kw: object
    ) -> object:
        checked.append((tool, args))
        return core.Verdict(deny="agentlanes: refused")

    monkeypatch.setattr(core, "check", check)
    monkeypatch.setattr(core, "news", lambda *a, **kw: None)

    def pre(args: dict[str, object]) -> object:
        payload = {"sessionId": "s1", "cwd": "/repo", "toolName": "str_replace_editor"}
        return copilot.answer({**payload, "toolArgs": json.dumps(args)}, "preToolUse")

    assert pre({"command": "view", "path": "/repo/a.py"}).out == {}
    assert checked == []  # a read is never refused, never claimed
    edit = pre({"command": "str_replace", "path": "/repo/a.py", "old_str": "a", "new_str": "b"})
    assert edit.out["permissionDecision"] == "deny"
    assert checked == [("Edit", {"file_path": "/repo/a.py"})]


def test_guard_allow_reaches_claudes_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from agentlanes.hooks.adapters import main

    assert parse(["--agent", "claude", "--allow"]) == ("claude", None, None)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["--agent", "claude", "--allow"]) == 0  # not "unknown option --allow"
    assert main(["--agent", "copilot", "--allow"]) == 1  # Claude Code's option only


CALLS = [
    # (adapter, payload, the call in Claude Code's terms)
    # Anchored edits are Edit; whole-file writes Write, with their content (SPEC "Many
    # agents, one working tree": a stale one is refused); reads Read (noted, never refused).
    ("cursor", {"tool_name": "Edit", "tool_input": {"path": "a.py"}},
     ("Edit", {"file_path": "a.py"})),
    ("cursor", {"tool_name": "Write", "tool_input": {"path": "a.py", "content": "x"}},
     ("Write", {"file_path": "a.py", "content": "x"})),
    ("cursor", {"tool_name": "Shell", "tool_input": {"command": "ls"}},
     ("Bash", {"command": "ls"})),
    ("cursor", {"tool_name": "Read", "tool_input": {"file_path": "a.py"}},
     ("Read", {"file_path": "a.py"})),
    ("cursor", {"tool_name": "Grep", "tool_input": {"file_path": "a.py"}}, None),
    ("gemini", {"tool_name": "replace", "tool_input": {"file_path": "a.py", "path": "b"}},
     ("Edit", {"file_path": "a.py"})),
    ("gemini", {"tool_name": "write_file", "tool_input": {"file_path": "a.py", "content": "x"}},
     ("Write", {"file_path": "a.py", "content": "x"})),
    ("gemini", {"tool_name": "read_file", "tool_input": {"file_path": "a.py"}},
     ("Read", {"file_path": "a.py"})),
    ("gemini", {"tool_name": "run_shell_command", "tool_input": {"command": 3}}, None),
    ("cline", {"toolName": "write_to_file", "parameters": {"path": "a.py", "file_path": "b"}},
     ("Write", {"file_path": "a.py"})),
    ("cline", {"toolName": "apply_patch", "parameters": {"input": "P"}},
     ("apply_patch", {"command": "P"})),
    # Cline 3 (@cline/core 0.0.86): editor, run_commands (a list), read_files
    ("cline", {"toolName": "editor", "parameters": {"path": "a.py", "new_text": "x\n"}},
     ("Write", {"file_path": "a.py", "content": "x\n"})),
    ("cline", {"toolName": "editor",
               "parameters": {"path": "a.py", "old_text": "x", "new_text": "y"}},
     ("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"})),
    ("cline", {"toolName": "editor",
               "parameters": {"path": "a.py", "insert_line": 3, "new_text": "y"}},
     ("Edit", {"file_path": "a.py"})),
    ("cline", {"toolName": "run_commands", "parameters": {"commands": ["ls", "echo > b"]}},
     ("Bash", {"command": "ls\necho > b"})),
    ("cline", {"toolName": "run_commands", "parameters": {"commands": '["ls"]'}},
     ("Bash", {"command": "ls"})),
    ("cline", {"toolName": "read_files", "parameters": {"files": [{"path": "r.md"}]}},
     ("Read", {"file_path": "r.md"})),
    ("copilot", {"toolName": "apply_patch", "toolArgs": {"input": "", "patch": "P"}},
     ("apply_patch", {"command": "P"})),
    ("copilot", {"toolName": "apply_patch", "toolArgs": {}}, ("apply_patch", {"command": None})),
    # Copilot CLI 1.0.102 sends a custom (freeform) tool's input as it is: the patch text
    ("copilot", {"toolName": "apply_patch", "toolArgs": "*** Begin Patch\n*** End Patch\n"},
     ("apply_patch", {"command": "*** Begin Patch\n*** End Patch\n"})),
    ("copilot", {"toolName": "bash", "toolArgs": "not json"}, None),
    ("copilot", {"toolName": "str_replace_editor", "toolArgs": {"command": "view", "path": "a"}},
     None),
    ("opencode", {"tool": "write", "args": {"filePath": "a.py", "path": "b"}},
     ("Write", {"file_path": "a.py"})),
    ("opencode", {"tool": "patch", "args": {"patchText": "P", "input": "Q"}},
     ("apply_patch", {"command": "P"})),
    ("opencode", {"tool": "bash", "args": {"command": "ls"}}, ("Bash", {"command": "ls"})),
    ("opencode", {"tool": "edit", "args": {"filePath": ""}}, None),
]  # fmt: skip


@pytest.mark.parametrize(("adapter", "payload", "expected"), CALLS)
def test_each_adapter_reads_its_tool_calls_by_the_one_rule(
    adapter: str, payload: dict[str, object], expected: object
) -> None:
    import importlib

    module = importlib.import_module(f"agentlanes.hooks.adapters.{adapter}")
    # Cline's ``_call`` takes the hook's own object (``preToolUse``), the others the event.
    assert module._call(payload) == expected


def test_file_call_takes_the_first_key_that_is_set() -> None:
    from agentlanes.hooks.adapters.core import file_call

    tools = {"file_tools": frozenset({"w", "write"}), "path_keys": ("a", "b")}
    assert file_call("w", {"a": "", "b": "x.py"}, **tools) == ("Edit", {"file_path": "x.py"})
    assert file_call("w", {"a": "y.py", "b": "x.py"}, **tools) == ("Edit", {"file_path": "y.py"})
    assert file_call("write", {"a": "y.py", "content": "c"}, **tools) == (
        "Write",
        {"file_path": "y.py", "content": "c"},
    )
    assert file_call("w", {"a": None, "b": ""}, **tools) is None
    assert file_call("w", "not an object", **tools) is None
    assert file_call("other", {"a": "y.py"}, **tools) is None
