"""Several agents in one checkout, each its own process tree, as with Claude Code.

Each agent is a long-lived process (tests/support/claude_agent.py) that runs, as its own
children, the hook commands exactly as ``lanes init`` wrote them into
``.claude/settings.json`` (with Claude Code's documented JSON on stdin: the shapes are in
tests/fixtures/claude_code_hooks.json), its shell commands (``git commit``, and with it
the git hook) and the stdio MCP server of ``.mcp.json``, all with a PATH that lacks the
virtual environment. A real server process, real git repositories.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.agents import ADMIN, git, isolated_env, lanes, make_repo, new_project
from tests.support.server import ServerProcess
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

HARNESS = Path(__file__).parent.parent / "support" / "claude_agent.py"
FIXTURES = Path(__file__).parent.parent / "fixtures"
SHAPES = json.loads((FIXTURES / "claude_code_hooks.json").read_text())
# PostToolUse, Stop and UserPromptSubmit: the shapes of the news hooks' fixture.
NEWS_SHAPES = json.loads((FIXTURES / "claude_code_news_hooks.json").read_text())["input"]
BARE_PATH = "/usr/local/bin:/usr/bin:/bin"  # no virtual environment on it


class Agent:
    """One Claude Code stand-in: its own process, running its own hooks and commands."""

    def __init__(self, repo: Path, env: dict[str, str], session_id: str) -> None:
        self.repo = repo
        self.sid = session_id
        self.name = f"claude-{session_id}"
        self.proc = subprocess.Popen(
            [sys.executable, str(HARNESS), str(repo)],
            env={**env, "PATH": BARE_PATH},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _ask(self, command: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def hook(self, event: str, **fields: Any) -> list[dict[str, Any]]:
        payload = copy.deepcopy(SHAPES["input"].get(event) or NEWS_SHAPES[event])
        payload.update(
            session_id=self.sid,
            transcript_path=f"/home/dev/.claude/projects/repo/{self.sid}.jsonl",
            cwd=str(self.repo),
            **fields,
        )
        runs = self._ask({"hook": event, "payload": payload})["runs"]
        for run in runs:
            assert run["rc"] == 0, run  # never 2, never 127 (no lanes on PATH)
            assert "Traceback" not in run["stderr"], run["stderr"]
        return [json.loads(r["stdout"]) if r["stdout"].strip() else None for r in runs]

    def edit(self, rel: str) -> Any:
        [answer] = self.hook(
            "PreToolUse",
            tool_name="Write",
            tool_input={"file_path": str(self.repo / rel), "content": "x"},
        )
        return answer

    def bash(self, command: str, source_env: bool = True) -> dict[str, Any]:
        return self._ask({"bash": command, "source_env": source_env})  # type: ignore[no-any-return]

    def mcp(self, tool: str, **arguments: Any) -> Any:
        return self._ask({"mcp": tool, "arguments": arguments})

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def presence(url: str, key: str) -> dict[str, dict[str, Any]]:
    r = httpx.get(f"{url}/api/v1/presence", headers={"X-API-Key": key}, timeout=10)
    assert r.status_code == 200, r.text
    return {s["agent_name"]: s for s in r.json()["sessions"]}


def events(url: str, key: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{url}/api/v1/events/log?since=0", headers={"X-API-Key": key}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["events"]  # type: ignore[no-any-return]


def set_project(url: str, project_id: Any, **body: Any) -> None:
    r = httpx.patch(f"{url}/api/v1/projects/{project_id}", json=body, headers=ADMIN, timeout=10)
    assert r.status_code == 200, r.text


def shared_checkout(tmp_path: Path, url: str, key: str) -> tuple[Path, dict[str, str]]:
    """A repository set up by `lanes init` (as its README says), and the agents' env."""
    env = isolated_env(tmp_path / "home", url, key)
    repo = make_repo(tmp_path / "repo", env)
    done = lanes(repo, env, "init")
    assert done.returncode == 0, done.stderr
    git(repo, env, "add", ".")
    git(repo, env, "commit", "-q", "--no-verify", "-m", "agentlanes")
    return repo, env


@pytest.fixture
def agents() -> Any:
    started: list[Agent] = []

    def start(repo: Path, env: dict[str, str], sid: str) -> Agent:
        agent = Agent(repo, env, sid)
        started.append(agent)
        return agent

    yield start
    for agent in started:
        agent.close()


def test_each_agent_acts_as_itself_in_a_shared_checkout(
    agent_server: ServerProcess, tmp_path: Path, agents: Any
) -> None:
    url = agent_server.url
    key = new_project(url, conflict_mode="block")["api_key"]
    repo, env = shared_checkout(tmp_path, url, key)
    alice = agents(repo, env, "aaaa-1111")
    bob = agents(repo, env, "bbbb-2222")
    # Claude Code starts the MCP server before the SessionStart hook has run.
    alice._ask({"mcp_start": True})
    for agent in (alice, bob):
        [started] = agent.hook("SessionStart", source="startup")
        assert f"checked in as {agent.name}" in started["hookSpecificOutput"]["additionalContext"]
    assert alice.edit("src/a.py") is None
    assert bob.edit("src/b.py") is None
    live = presence(url, key)
    assert live[alice.name]["declared_files"] == ["src/a.py"]
    assert live[bob.name]["declared_files"] == ["src/b.py"]

    # Each agent's own commit passes the git hook as that agent: by its process (the
    # shell's environment left out), and by the name its SessionStart exported.
    (repo / "src").mkdir()
    (repo / "src/a.py").write_text("a\n")
    mine = alice.bash("git add src/a.py && git commit -q -m a", source_env=False)
    assert mine["rc"] == 0, mine
    assert "claimed by" not in mine["stderr"] and "no active session" not in mine["stderr"]
    # Committed, with none of alice's lines left: the claim her edit brought ends (the
    # post-commit hook); she takes it again with her next edit.
    assert presence(url, key)[alice.name]["declared_files"] == []
    assert alice.edit("src/a.py") is None
    (repo / "src/b.py").write_text("b\n")
    mine = bob.bash("git add src/b.py && git commit -q -m b")
    assert mine["rc"] == 0, mine
    assert bob.bash("echo $AGENTLANES_AGENT_NAME")["stdout"].strip() == bob.name

    # Another agent's file: refused in block mode, naming the holder and how to reach it.
    (repo / "src/a.py").write_text("bob was here\n")
    theirs = bob.bash("git commit -q -am 'b edits a'", source_env=False)
    assert theirs["rc"] != 0
    assert f"src/a.py is claimed by {alice.name}" in theirs["stderr"]
    assert f"lanes message send {alice.name}" in theirs["stderr"]
    # And the guard denies bob's edit of it, saying how to coordinate.
    [denied] = bob.hook(
        "PreToolUse", tool_name="Edit", tool_input={"file_path": str(repo / "src/a.py")}
    )
    reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
    assert f"you are {bob.name}" in reason and f"lanes ask {alice.name} src/a.py" in reason
    # SPEC "Context budget": at most 600 characters, ending with the next step.
    assert len(reason) <= 600 and reason.endswith("Next step: lanes wait src/a.py"), reason
    git(repo, env, "checkout", "--", "src/a.py")

    # Someone who is neither (this test's own process): told how to name the agent.
    (repo / "src/c.py").write_text("c\n")
    git(repo, env, "add", "src/c.py")
    nobody = git(repo, env, "commit", "-q", "-m", "c", check=False)
    assert "no active session" not in nobody.stderr
    assert "name the agent with AGENTLANES_AGENT_NAME=NAME" in nobody.stderr
    assert f"`AGENTLANES_AGENT_NAME={alice.name} git commit ...`" in nobody.stderr
    git(repo, env, "reset", "-q")

    # The stdio MCP server alice's process started acts as alice: same session.
    result = alice.mcp("status", status_text="writing a.py")
    assert not result.get("isError"), result
    assert presence(url, key)[alice.name]["status_text"] == "writing a.py"
    pid_file = repo / f".git/agentlanes/sessions/{alice.name}.keepalive.pid"
    old_keepalive = int(pid_file.read_text())
    checked = alice.mcp("checkin", declared_files=["src/a.py"])
    assert not checked.get("isError"), checked
    assert json.loads(checked["content"][0]["text"])["agent_name"] == alice.name
    assert sorted(presence(url, key)) == sorted([alice.name, bob.name])  # no agent-*-42
    # A new session for alice: her keepalive now holds that one, still watching her.
    new_keepalive = int(pid_file.read_text())
    assert new_keepalive != old_keepalive
    cmdline = Path(f"/proc/{new_keepalive}/cmdline").read_bytes().split(b"\0")
    assert b"--watch-pid" in cmdline and str(alice.proc.pid).encode() in cmdline

    # `lanes` run by an agent's shell acts as that agent (PATH has no lanes: absolute).
    program = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["agentlanes"]["command"]
    shown = bob.bash(f"{program} status --json", source_env=False)
    assert shown["rc"] == 0, shown
    assert json.loads(shown["stdout"])["agent_name"] == bob.name
    # ... and so does `lanes message`: bob asks alice, as his deny reason suggested.
    sent = bob.bash(f"{program} message send {alice.name} may I edit src/a.py?")
    assert sent["rc"] == 0, sent
    box = json.loads(alice.bash(f"{program} message inbox --json", source_env=False)["stdout"])
    [message] = box["messages"]
    assert message["from"] == bob.name and message["body"] == "may I edit src/a.py?"
    shown = alice.bash(f"{program} message read {message['message_id']} --ack")
    assert shown["rc"] == 0 and "may I edit src/a.py?" in shown["stdout"], shown
    box = json.loads(alice.bash(f"{program} message inbox --unread --json")["stdout"])
    assert box["messages"] == []
    # `lanes checkin` from bob's shell, his name not exported: checked in as bob again.
    again = bob.bash(f"{program} checkin --files src/b.py --json", source_env=False)
    assert again["rc"] == 0, again
    assert json.loads(again["stdout"])["agent_name"] == bob.name
    assert sorted(presence(url, key)) == sorted([alice.name, bob.name])


def test_an_idle_agent_keeps_its_session_until_its_process_ends(
    agent_server: ServerProcess, tmp_path: Path, agents: Any
) -> None:
    url = agent_server.url
    project = new_project(url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=2)
    key = project["api_key"]
    repo, env = shared_checkout(tmp_path, url, key)
    idle = agents(repo, env, "idle-1")
    idle.hook("SessionStart", source="startup")
    assert idle.edit("notes.md") is None
    first = presence(url, key)[idle.name]["session_id"]
    time.sleep(3 * 2)  # 3x the TTL without a tool call: the keepalive holds the session
    assert presence(url, key).get(idle.name, {}).get("session_id") == first
    idle.kill()
    died = time.monotonic()
    gone = wait_for(lambda: idle.name not in presence(url, key), timeout=15)
    took = time.monotonic() - died
    assert gone, "the session outlived its agent"
    # The TTL (2 s) runs from the socket's close: 1 s for the keepalive to see the agent
    # gone, the expiry job's interval (0.2 s here), and slack for a loaded machine.
    assert took < 2 + 1 + 2, took


def test_session_end_after_a_timeout_still_records_the_work(
    agent_server: ServerProcess, tmp_path: Path, agents: Any
) -> None:
    url = agent_server.url
    key = new_project(url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=2)["api_key"]
    repo, env = shared_checkout(tmp_path, url, key)
    agent = agents(repo, env, "late-1")
    agent.hook("SessionStart", source="startup")
    assert agent.edit("docs/guide.md") is None
    (repo / "docs").mkdir()
    (repo / "docs/guide.md").write_text("guide\n")
    # The keepalive is gone (say it was killed): the session times out.
    pid_file = repo / f".git/agentlanes/sessions/{agent.name}.keepalive.pid"
    os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert wait_for(lambda: agent.name not in presence(url, key), timeout=15)
    agent.hook("SessionEnd", reason="prompt_input_exit")
    checkouts = [e for e in events(url, key) if e["type"] == "agent.checkout"]
    flat = json.dumps(checkouts)
    assert "prompt_input_exit" in flat and "docs/guide.md" in flat, flat
    assert not (repo / f".git/agentlanes/sessions/{agent.name}.json").exists()


def test_a_missing_key_says_coordination_is_off(tmp_path: Path, agents: Any) -> None:
    env = isolated_env(tmp_path / "home", "http://127.0.0.1:9", None)
    repo = make_repo(tmp_path / "repo", env)
    assert lanes(repo, env, "init").returncode == 0
    agent = agents(repo, env, "nokey-1")
    runs = agent._ask(
        {
            "hook": "SessionStart",
            "payload": {**SHAPES["input"]["SessionStart"], "cwd": str(repo)},
        }
    )["runs"]
    [run] = runs
    assert run["rc"] == 0
    assert run["stderr"].count("no API key") == 1
    context = json.loads(run["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert "coordination is off" in context


def test_warn_to_block_keeps_the_older_claimant_able_to_edit(
    agent_server: ServerProcess, tmp_path: Path, agents: Any
) -> None:
    url = agent_server.url
    project = new_project(url)  # warn
    key = project["api_key"]
    repo, env = shared_checkout(tmp_path, url, key)
    first = agents(repo, env, "first-1")
    later = agents(repo, env, "later-2")
    later.hook("SessionStart", source="startup")  # checked in first, claims nothing yet
    first.hook("SessionStart", source="startup")
    assert first.edit("src/x.py") is None
    warned = later.edit("src/x.py")  # warn: reported, and src/x.py joins its claims too
    assert f"claimed by {first.name}" in warned["hookSpecificOutput"]["additionalContext"]
    assert presence(url, key)[later.name]["declared_files"] == ["src/x.py"]
    set_project(url, project["slug"], conflict_mode="block")

    # The earlier claimant edits on; the later one is refused, its edit and its commit.
    kept = first.edit("src/x.py")
    assert kept is None or "permissionDecision" not in kept["hookSpecificOutput"], kept
    (repo / "src").mkdir()
    (repo / "src/x.py").write_text("x\n")
    denied = later.edit("src/x.py")
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert f"claimed by {first.name}" in denied["hookSpecificOutput"]["permissionDecisionReason"]
    refused = later.bash("git add src/x.py && git commit -q -m later", source_env=False)
    assert refused["rc"] != 0 and f"claimed by {first.name}" in refused["stderr"]
    # The earlier claimant commits; its claim on src/x.py, which its edit brought, ends
    # with none of its uncommitted lines left there (the post-commit hook).
    done = first.bash("git add src/x.py && git commit -q -m x", source_env=False)
    assert done["rc"] == 0, done
    assert "you claimed these paths before them" in done["stderr"]
    assert presence(url, key)[first.name]["declared_files"] == []


def test_a_sibling_worktree_is_the_same_repository_for_the_same_agent(
    agent_server: ServerProcess, tmp_path: Path, agents: Any
) -> None:
    url = agent_server.url
    key = new_project(url, conflict_mode="block")["api_key"]
    repo, env = shared_checkout(tmp_path, url, key)
    sibling = tmp_path / "repo-feature"
    git(repo, env, "worktree", "add", "-q", str(sibling), "-b", "feature")
    agent = agents(repo, env, "wt-1")
    agent.hook("SessionStart", source="startup")
    assert agent.edit("src/a.py") is None
    first = presence(url, key)[agent.name]["session_id"]
    # The same agent edits the same repository path in the sibling worktree: its own
    # session claims it (nothing superseded, no warning about itself).
    [answer] = agent.hook(
        "PreToolUse",
        tool_name="Write",
        tool_input={"file_path": str(sibling / "src/a.py"), "content": "x"},
    )
    assert answer is None, answer
    [answer] = agent.hook(
        "PreToolUse",
        tool_name="Write",
        tool_input={"file_path": str(sibling / "src/b.py"), "content": "x"},
    )
    assert answer is None, answer
    live = presence(url, key)
    assert list(live) == [agent.name] and live[agent.name]["session_id"] == first
    assert live[agent.name]["declared_files"] == ["src/a.py", "src/b.py"]
    assert not [e for e in events(url, key) if e["type"] == "agent.checkout"]


def test_an_agent_whose_process_ends_is_checked_out_within_5_s_with_its_files(
    agent_server: ServerProcess, tmp_path: Path, agents: Any
) -> None:
    url = agent_server.url
    # A long TTL: only the keepalive's check-out can end the session within 5 s.
    key = new_project(url, heartbeat_interval_seconds=30, heartbeat_ttl_seconds=120)["api_key"]
    repo, env = shared_checkout(tmp_path, url, key)
    agent = agents(repo, env, "ends-1")
    agent.hook("SessionStart", source="startup")
    assert agent.edit("src/done.py") is None
    (repo / "src").mkdir()
    (repo / "src/done.py").write_text("done\n")
    write = {"file_path": str(repo / "src/done.py"), "content": "done\n"}
    agent.hook("PostToolUse", tool_name="Write", tool_input=write, tool_response={})
    # The agent's process ends with no SessionEnd hook run (killed, or a program with no
    # such event), while its last edit may still wait for its debounced send.
    agent.kill()
    died = time.monotonic()

    def checked_out() -> list[dict[str, Any]]:
        return [e for e in events(url, key) if e["type"] == "agent.checkout"]

    assert wait_for(checked_out, timeout=15), "never checked out"
    took = time.monotonic() - died
    assert took < 5, took
    [ended] = checked_out()
    assert ended["data"]["outcome_status"] == "completed", ended
    assert ended["data"]["files_touched"] == ["src/done.py"], ended
    assert "process ended" in ended["data"]["work_summary"], ended
    assert agent.name not in presence(url, key)
    assert not (repo / f".git/agentlanes/sessions/{agent.name}.json").exists()
    pid_file = repo / f".git/agentlanes/sessions/{agent.name}.keepalive.pid"
    assert wait_for(lambda: not pid_file.exists(), timeout=5)
