"""Names people can read, from a shell against a real server: ``lanes message send`` takes
a display name, refuses a name nobody answers to (naming the live agents), and ``--as``
lets a person speak with the project key alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.agents import isolated_env, lanes, lanes_json, make_repo, new_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e

AGENT = "claude-18a375cf-5025-4c86-a3f9-6fd9b6c6f5e5"


def test_messages_by_display_name_by_a_person_and_to_nobody(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    key = new_project(agent_server.url)["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    checked = lanes_json(repo, env, "checkin", "--agent", AGENT, "--files", "src/app.py")
    assert checked["display_name"] == "claude-1"
    lanes_json(repo, env, "checkin", "--agent", "codex-77aa")

    sent = lanes(
        repo, env, "message", "send", "claude-1", "rebase", "please", "--agent", "codex-77aa"
    )
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.strip().startswith("sent message ") and f"claude-1 ({AGENT})" in sent.stdout

    # A person: the key alone, no local session needed (run from outside any checkout).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    person = lanes(elsewhere, env, "message", "send", "--as", "ann", "claude-1", "stop", "now")
    assert person.returncode == 0, person.stderr
    assert "as a person" in person.stdout

    inbox = lanes_json(repo, env, "message", "inbox", "--agent", AGENT)
    got = [(m["from"], m["from_kind"], m["body"]) for m in inbox["messages"]]
    assert got == [("codex-77aa", "agent", "rebase please"), ("ann", "human", "stop now")]

    wrong = lanes(repo, env, "message", "send", "codex", "hello?", "--agent", AGENT)
    assert wrong.returncode != 0
    assert "AGENT_NOT_FOUND" in wrong.stderr
    assert "live agents: claude-1, codex-1" in wrong.stderr
    assert "Traceback" not in wrong.stderr
