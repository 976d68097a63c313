"""Claude Code's hooks, replayed as Claude Code sends them, against a real server and git.

The events follow Claude Code's hooks reference (https://code.claude.com/docs/en/hooks):
every event carries ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name``;
``SessionStart`` adds ``source``, ``PreToolUse`` adds ``tool_name``, ``tool_input`` and
``tool_use_id``, ``SessionEnd`` adds ``reason``. The answer to ``PreToolUse`` is
``hookSpecificOutput`` with ``hookEventName``, ``permissionDecision`` and
``permissionDecisionReason``; exit code 2 would block the tool call, so the hook never
uses it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.agents import (
    git,
    isolated_env,
    lanes,
    lanes_json,
    make_repo,
    new_project,
    no_traceback,
    write_files,
)
from tests.support.server import ServerProcess, free_port

pytestmark = pytest.mark.e2e


def event(repo: Path, sid: str, name: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": sid,
        "transcript_path": f"/home/dev/.claude/projects/repo/{sid}.jsonl",
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": name,
        **fields,
    }


def tool(repo: Path, sid: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return event(
        repo, sid, "PreToolUse", tool_name=name, tool_input=tool_input, tool_use_id="toolu_01"
    )


def hook(repo: Path, env: dict[str, str], payload: dict[str, Any]) -> Any:
    """Run the hook command as .claude/settings.json names it; its JSON answer or None."""
    done = lanes(repo, env, "guard", stdin=json.dumps(payload))
    no_traceback(done)
    assert done.returncode == 0, done.stderr  # never 2: that would block the tool call
    return json.loads(done.stdout) if done.stdout.strip() else None


def presence(url: str, key: str) -> dict[str, dict[str, Any]]:
    r = httpx.get(f"{url}/api/v1/presence", headers={"X-API-Key": key}, timeout=10)
    assert r.status_code == 200, r.text
    return {s["agent_name"]: s for s in r.json()["sessions"]}


def events(url: str, key: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{url}/api/v1/events/log?since=0", headers={"X-API-Key": key}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["events"]  # type: ignore[no-any-return]


def test_a_claude_code_session_from_start_to_end(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    url = agent_server.url
    key = new_project(url, conflict_mode="block")["api_key"]
    env = isolated_env(tmp_path / "home", url, key, AGENTLANES_AGENT_PID=agent_process())
    repo = make_repo(tmp_path / "repo", env)
    write_files(repo, "src/api/app.py", "docs/guide.md", "docs/old/a.md", "docs/old/b.md")
    git(repo, env, "add", ".")
    git(repo, env, "commit", "-q", "--no-verify", "-m", "files")
    alice_repo = make_repo(tmp_path / "alice", env)
    lanes_json(alice_repo, env, "checkin", "--agent", "alice", "--files", "src/api/**")
    sid = "4f0c2a6e-1111-4c2e-9a53-0d1c5b6a7e80"
    me = f"claude-{sid}"

    # SessionStart: checked in under Claude Code's own session id, told who else is live.
    started = hook(repo, env, event(repo, sid, "SessionStart", source="startup", model="x"))
    assert set(started) == {"hookSpecificOutput"}
    out = started["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert f"checked in as {me}" in out["additionalContext"]
    assert "alice: src/api/**" in out["additionalContext"]
    saved = json.loads((repo / ".git/agentlanes/sessions" / f"{me}.json").read_text())
    assert saved["agent_name"] == me and len(saved["session_token"]) == 64
    live = presence(url, key)
    assert live[me]["declared_files"] == [] and live[me]["meta"]["tool"] == "claude-code"

    # PreToolUse Edit on a free file: no decision, no output; the file joins the claims.
    assert hook(repo, env, tool(repo, sid, "Edit", {
        "file_path": str(repo / "docs/guide.md"), "old_string": "a", "new_string": "b",
    })) is None  # fmt: skip
    assert presence(url, key)[me]["declared_files"] == ["docs/guide.md"]
    status_events = [e for e in events(url, key) if e["type"] == "agent.status"]
    assert status_events[-1]["data"]["session"]["declared_files"] == ["docs/guide.md"]

    # PreToolUse Bash `sed -i` on a file alice holds, in block mode: denied, with who.
    denied = hook(repo, env, tool(repo, sid, "Bash", {
        "command": "cd src && sed -i 's/x/y/' api/app.py 2>/tmp/sed.err",
        "description": "rename x",
    }))  # fmt: skip
    assert set(denied) == {"hookSpecificOutput"}
    decision = denied["hookSpecificOutput"]
    assert decision["hookEventName"] == "PreToolUse"
    assert decision["permissionDecision"] == "deny"
    reason = decision["permissionDecisionReason"]
    assert "src/api/app.py is claimed by alice for certain (their pattern src/api/**)" in reason
    assert "block mode" in reason
    assert presence(url, key)[me]["declared_files"] == ["docs/guide.md"]  # not claimed

    # PreToolUse Read of that same file: never denied, not even mentioned.
    assert (
        hook(repo, env, tool(repo, sid, "Read", {"file_path": str(repo / "src/api/app.py")}))
        is None
    )
    assert hook(repo, env, tool(repo, sid, "Grep", {"pattern": "x", "path": "src"})) is None

    # Bash that removes a directory: claimed as a directory (trailing '/'); Write a new file.
    assert hook(repo, env, tool(repo, sid, "Bash", {"command": "rm -r docs/old"})) is None
    new = str(repo / "docs/new.md")
    assert hook(repo, env, tool(repo, sid, "Write", {"file_path": new, "content": "x"})) is None
    claims = presence(url, key)[me]["declared_files"]
    # docs/old was sent as docs/old/ (a directory here); a server that predates trailing
    # '/' patterns stores it without.
    assert [c if c.endswith(".md") else c.rstrip("/") + "/" for c in claims] == [
        "docs/guide.md",
        "docs/old/",
        "docs/new.md",
    ]

    # The agent's work, as git will see it (and one change that is not this session's).
    (repo / "docs/guide.md").write_text("changed\n")
    git(repo, env, "rm", "-q", "-r", "docs/old")
    write_files(repo, "docs/new.md", "notes.txt")

    # SessionEnd: checked out with the changed files this session claims.
    assert hook(repo, env, event(repo, sid, "SessionEnd", reason="prompt_input_exit")) is None
    assert me not in presence(url, key)
    assert not (repo / ".git/agentlanes/sessions" / f"{me}.json").exists()
    [checkout] = [e for e in events(url, key) if e["type"] == "agent.checkout"]
    data = checkout["data"]
    assert data["session"]["agent_name"] == me if "session" in data else data["agent_name"] == me
    flat = json.dumps(data)
    assert "prompt_input_exit" in flat
    touched = data.get("files_touched") or data.get("session", {}).get("files_touched")
    assert touched == ["docs/guide.md", "docs/new.md", "docs/old/a.md", "docs/old/b.md"]


def test_two_claude_sessions_in_one_checkout_keep_two_sessions(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    url = agent_server.url
    key = new_project(url)["api_key"]
    env = isolated_env(tmp_path / "home", url, key, AGENTLANES_AGENT_PID=agent_process())
    repo = make_repo(tmp_path / "repo", env)
    for sid in ("aaaa-1", "bbbb-2"):
        hook(repo, env, event(repo, sid, "SessionStart", source="startup"))
    hook(repo, env, tool(repo, "aaaa-1", "Write", {"file_path": "a.py", "content": ""}))
    hook(repo, env, tool(repo, "bbbb-2", "Write", {"file_path": "b.py", "content": ""}))
    live = presence(url, key)
    assert live["claude-aaaa-1"]["declared_files"] == ["a.py"]
    assert live["claude-bbbb-2"]["declared_files"] == ["b.py"]
    # A resumed session keeps its session (a heartbeat, not a new check-in).
    before = live["claude-aaaa-1"]["session_id"]
    hook(repo, env, event(repo, "aaaa-1", "SessionStart", source="resume"))
    assert presence(url, key)["claude-aaaa-1"]["session_id"] == before
    # `lanes status` lists the local sessions when it cannot tell whose to show.
    shown = lanes_json(repo, env, "status")
    names = [s["agent_name"] for s in shown["local_sessions"]]
    assert names == ["claude-aaaa-1", "claude-bbbb-2"]
    text = lanes(repo, env, "status").stdout
    assert "2 agents keep sessions in this working tree" in text and "claude-bbbb-2" in text
    hook(repo, env, event(repo, "aaaa-1", "SessionEnd", reason="clear"))
    assert list(presence(url, key)) == ["claude-bbbb-2"]


def test_the_hook_fails_open(agent_server: ServerProcess, tmp_path: Path) -> None:
    key = new_project(agent_server.url)["api_key"]
    down = isolated_env(tmp_path / "home", f"http://127.0.0.1:{free_port()}", key)
    repo = make_repo(tmp_path / "repo", down)
    answer = hook(repo, down, tool(repo, "s1", "Edit", {"file_path": "x.py"}))
    assert "permissionDecision" not in answer["hookSpecificOutput"]
    assert "server unreachable" in answer["hookSpecificOutput"]["additionalContext"]
    closed = {**down, "AGENTLANES_FAIL_CLOSED": "1"}
    answer = hook(repo, closed, tool(repo, "s1", "Edit", {"file_path": "x.py"}))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    bad_url = {**down, "AGENTLANES_URL": "localhost:8787"}
    answer = hook(repo, bad_url, tool(repo, "s1", "Edit", {"file_path": "x.py"}))
    assert "is not a server URL" in answer["hookSpecificOutput"]["additionalContext"]


def test_edits_keep_the_session_alive_and_bring_back_an_ended_one(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    import os

    url = agent_server.url
    key = new_project(url)["api_key"]
    env = isolated_env(tmp_path / "home", url, key, AGENTLANES_AGENT_PID=agent_process())
    repo = make_repo(tmp_path / "repo", env)
    hook(repo, env, event(repo, "s-9", "SessionStart", source="startup"))
    hook(repo, env, tool(repo, "s-9", "Write", {"file_path": "a.py", "content": ""}))
    saved = repo / ".git/agentlanes/sessions/claude-s-9.json"
    first = presence(url, key)["claude-s-9"]
    # Half an interval after the last heartbeat (the file's mtime), an edit sends one.
    os.utime(saved, (1_000_000_000, 1_000_000_000))
    hook(repo, env, tool(repo, "s-9", "Edit", {"file_path": "a.py"}))
    again = presence(url, key)["claude-s-9"]
    assert again["session_id"] == first["session_id"]
    assert again["last_heartbeat_at"] > first["last_heartbeat_at"]
    # The session ended behind the agent's back (here: checked out by hand): the next edit
    # checks in again under the same name, with the claims it had and the new file.
    token = json.loads(saved.read_text())["session_token"]
    r = httpx.post(
        f"{url}/api/v1/checkout",
        headers={"X-API-Key": key, "X-Session-Token": token},
        json={},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    hook(repo, env, tool(repo, "s-9", "Write", {"file_path": "b.py", "content": ""}))
    back = presence(url, key)["claude-s-9"]
    assert back["session_id"] != first["session_id"]
    assert back["declared_files"] == ["a.py", "b.py"]


def test_a_new_session_replaces_the_keepalive_of_the_ended_one(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    import os
    import time

    url = agent_server.url
    key = new_project(url)["api_key"]
    env = isolated_env(tmp_path / "home", url, key, AGENTLANES_AGENT_PID=agent_process())
    repo = make_repo(tmp_path / "repo", env)
    hook(repo, env, event(repo, "s-5", "SessionStart", source="startup"))
    saved = repo / ".git/agentlanes/sessions/claude-s-5.json"
    pid_file = repo / ".git/agentlanes/sessions/claude-s-5.keepalive.pid"
    first = presence(url, key)["claude-s-5"]
    token = json.loads(saved.read_text())["session_token"]
    r = httpx.post(
        f"{url}/api/v1/checkout",
        headers={"X-API-Key": key, "X-Session-Token": token},
        json={},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    # A keepalive that still holds the ended session (it has not noticed yet).
    stale = agent_process("keepalive", "--agent", "claude-s-5", "--socket")
    pid_file.write_text(stale)
    hook(repo, env, event(repo, "s-5", "SessionStart", source="resume"))
    assert presence(url, key)["claude-s-5"]["session_id"] != first["session_id"]
    new = pid_file.read_text().strip()
    assert new != stale  # the new session has its own keepalive
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(int(stale), 0)
        except OSError:
            break
        if Path(f"/proc/{stale}/stat").read_text().split()[2] == "Z":
            break  # stopped (a zombie until the fixture reaps it)
        time.sleep(0.05)
    else:
        raise AssertionError("the keepalive of the ended session was not stopped")


def test_an_adapter_agents_ended_session_is_recorded_under_its_own_tool(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    from agentlanes.hooks.adapters import core

    url = agent_server.url
    key = new_project(url)["api_key"]
    env = isolated_env(tmp_path / "home", url, key, AGENTLANES_AGENT_PID=agent_process())
    repo = make_repo(tmp_path / "repo", env)
    core.start("copilot", "c-1", str(repo), env)
    first = presence(url, key)["copilot-c-1"]
    assert first["meta"]["tool"] == "copilot"
    saved = repo / ".git/agentlanes/sessions/copilot-c-1.json"
    token = json.loads(saved.read_text())["session_token"]
    r = httpx.post(
        f"{url}/api/v1/checkout",
        headers={"X-API-Key": key, "X-Session-Token": token},
        json={},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    core.end("copilot", "c-1", str(repo), env)  # 410: recorded in a session of its own
    log = events(url, key)
    recorded = [e["data"]["session"] for e in log if e["type"] == "agent.checkin"][-1]
    assert recorded["meta"] == {"tool": "copilot", "ended_session_id": first["session_id"]}
    summary = [e["data"]["work_summary"] for e in log if e["type"] == "agent.checkout"][-1]
    assert summary == "Copilot CLI session ended (other)"
