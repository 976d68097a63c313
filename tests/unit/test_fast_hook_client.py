"""The hooks' fast path client (``agentlanes.hooks.fastpath.client``) keeps its own copies
of a few rules, standard library only; they must agree with the guard's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentlanes.hooks.adapters.core import agent_name as adapter_name
from agentlanes.hooks.agent_name import agent_for
from agentlanes.hooks.fastpath import client

IDS = ["db8dab78-b8fc-4f98-9189-f0ab1ddacde2", "task 1/2", "conv_17958_é", "x" * 100, " s1 "]


@pytest.mark.parametrize("sid", IDS)
def test_the_agent_is_named_as_the_guard_names_it(sid: str) -> None:
    assert client.agent_name("claude", sid, {}) == agent_for({"session_id": sid}, {})
    for agent in ("codex", "gemini", "copilot", "cline", "opencode"):
        assert client.agent_name(agent, sid, {}) == adapter_name(agent, sid, {})
    named = {"AGENTLANES_AGENT_NAME": "alice"}
    assert client.agent_name("codex", sid, named) == adapter_name("codex", sid, named)


def test_the_state_dir_is_the_one_of_the_local_config(tmp_path: Path) -> None:
    from agentlanes.client.config import LocalConfig, find_repo_root

    (tmp_path / "main/.git").mkdir(parents=True)
    (tmp_path / "main/src").mkdir()
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt/.git").write_text(f"gitdir: {tmp_path}/main/.git/worktrees/wt\n")
    for start in (tmp_path / "main/src", tmp_path / "wt"):
        expected = LocalConfig(find_repo_root(start)).state_dir
        assert client.state_dir(str(start)) == expected
    assert client.state_dir("/") is None


def test_a_socket_folder_others_can_enter_is_not_used(tmp_path: Path) -> None:
    folder = tmp_path / "sockets"
    folder.mkdir(mode=0o700)
    assert client.private_dir_ok(str(folder))
    os.chmod(folder, 0o755)
    assert not client.private_dir_ok(str(folder))
    assert not client.private_dir_ok(str(tmp_path / "missing"))


def test_socket_paths_are_short_and_apart() -> None:
    a = client.socket_path("/repo/a/.git/agentlanes", "claude-" + "x" * 57)
    b = client.socket_path("/repo/b/.git/agentlanes", "claude-" + "x" * 57)
    assert a != b and len(a) < 108  # a unix socket's path


@pytest.mark.parametrize(
    "text", ['{"a": [1, 2.5, true, null, "\\u00e9\\n"], "b": {"c": -1e3}}', " [] ", '"x"']
)
def test_json_as_the_standard_library_reads_it(text: str) -> None:
    assert client.loads(text) == json.loads(text)


@pytest.mark.parametrize("text", ["", "{", "{} x", "nul", '{"a": "\n"}', "{not json"])
def test_bad_json_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        client.loads(text)


def test_the_request_is_json() -> None:
    value = {"argv": ["a", "b é"], "env": {"K": 'v"\\'}, "n": 3, "t": True, "z": None}
    assert json.loads(client.dumps(value)) == value


def test_only_tool_events_with_a_session_are_served(tmp_path: Path) -> None:
    env: dict[str, str] = {}
    event = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "PreToolUse"}
    argv = ["/x/lanes", "guard"]
    # No repository here: nothing serves it, whatever the event.
    assert client.served_by(argv, json.dumps(event).encode(), env) is None
    assert client.served_by(["/x/lanes", "--version"], b"{}", env) is None
    assert client.served_by(argv, b"{not json", env) is None
