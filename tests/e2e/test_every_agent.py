"""Every coding agent's hooks (SPEC "Every coding agent"), each fed its documented event
JSON (tests/fixtures/agent_hooks/<agent>.json, with the reference each came from) through
the exact command the config written by ``lanes init --agent NAME`` names, in a real git
repository against a real server. For each agent:

- a session start checks in (as ``<agent>-<its session id>``);
- an edit of a file another agent holds for certain, in a ``block`` project, gets that
  agent's own refusal shape;
- a read of that file passes;
- a shell write to it is checked (refused) through the agent's shell event.

OpenCode's plugin is loaded in node and its ``tool.execute.before`` called.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentlanes.domain.words import FENCE_CLOSE
from tests.support.agents import (
    ADMIN,
    git,
    isolated_env,
    lanes,
    lanes_json,
    make_repo,
    new_project,
    no_traceback,
    write_files,
)
from tests.support.server import ServerProcess
from tests.support.services import unavailable

pytestmark = pytest.mark.e2e

FIXTURES = Path(__file__).parent.parent / "fixtures" / "agent_hooks"
HELD = "src/app.py"
HOOK_AGENTS = ["codex", "cursor", "gemini", "copilot", "cline", "windsurf"]
ALICE_TOKENS: dict[str, str] = {}  # project key -> alice's session token
SLUGS: dict[str, str] = {}  # project key -> its slug


def fixture(agent: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{agent}.json").read_text())  # type: ignore[no-any-return]


def fill(value: Any, repo: Path, sid: str) -> Any:
    """The documented event with this test's repository, session id and file."""
    if isinstance(value, str):
        return (
            value.replace("$REPO", str(repo))
            .replace("$SID", sid)
            .replace("$FILE", str(repo / HELD))
            .replace("$REL", HELD)
        )
    if isinstance(value, list):
        return [fill(v, repo, sid) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, repo, sid) for k, v in value.items()}
    return value


def presence(url: str, key: str) -> dict[str, dict[str, Any]]:
    r = httpx.get(f"{url}/api/v1/presence", headers={"X-API-Key": key}, timeout=10)
    assert r.status_code == 200, r.text
    return {s["agent_name"]: s for s in r.json()["sessions"]}


def setup_repo(
    server: ServerProcess, tmp_path: Path, agent: str
) -> tuple[Path, dict[str, str], str]:
    """A block-mode project where alice holds src/**, and a repository set up for
    ``agent`` by ``lanes init --agent``."""
    url = server.url
    project = new_project(url, conflict_mode="block")
    key = project["api_key"]
    SLUGS[key] = project["slug"]
    env = isolated_env(tmp_path / "home", url, key)
    repo = make_repo(tmp_path / "repo", env)
    write_files(repo, HELD, "docs/free.md")
    git(repo, env, "add", ".")
    git(repo, env, "commit", "-q", "--no-verify", "-m", "files")
    alice = make_repo(tmp_path / "alice", env)
    alice_session = lanes_json(alice, env, "checkin", "--agent", "alice", "--files", "src/**")
    ALICE_TOKENS[key] = alice_session["session_token"]
    done = lanes(repo, env, "init", "--agent", agent)
    assert done.returncode == 0, done.stderr + done.stdout
    return repo, env, key


def commands(repo: Path, agent: str) -> dict[str, str]:
    """event -> the exact command the written config runs for it (ours only)."""
    if agent == "cline":
        return {p.name: str(p) for p in (repo / ".clinerules/hooks").iterdir()}
    path = {
        "codex": ".codex/hooks.json",
        "gemini": ".gemini/settings.json",
        "cursor": ".cursor/hooks.json",
        "copilot": ".github/hooks/agentlanes.json",
        "windsurf": ".windsurf/hooks.json",
    }[agent]
    hooks = json.loads((repo / path).read_text())["hooks"]
    out = {}
    for event, entries in hooks.items():
        for entry in entries:
            if agent in ("codex", "gemini"):
                command = entry["hooks"][0]["command"]
            else:
                command = entry["bash" if agent == "copilot" else "command"]
            if "guard --agent" in command:
                out[event] = command
    return out


def run_hook(repo: Path, env: dict[str, str], command: str, payload: Any) -> Any:
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=repo,
        env=env,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
    )
    no_traceback(done)
    return done


def refused(agent: str, done: subprocess.CompletedProcess[str]) -> str | None:
    """The reason, when the answer is the agent's own refusal; None when it passes."""
    if agent == "windsurf":
        assert done.returncode in (0, 2), done.stderr
        return done.stderr if done.returncode == 2 else None
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    if agent == "codex":
        hso = out.get("hookSpecificOutput") or {}
        if hso.get("permissionDecision") == "deny":
            return hso["permissionDecisionReason"]  # type: ignore[no-any-return]
        return None
    if agent == "cursor":
        if out.get("permission") == "deny":
            return out["agent_message"]  # type: ignore[no-any-return]
        return None
    if agent == "gemini":
        return out["reason"] if out.get("decision") == "deny" else None
    if agent == "copilot":
        assert done.stdout.strip(), "Copilot CLI always gets JSON"
        if out.get("permissionDecision") == "deny":
            return out["permissionDecisionReason"]  # type: ignore[no-any-return]
        return None
    if agent == "cline":
        assert "cancel" in out, out
        return out["errorMessage"] if out["cancel"] else None
    raise AssertionError(agent)


@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_each_agents_hooks_check_in_refuse_and_let_reads_pass(
    agent_server: ServerProcess, tmp_path: Path, agent: str
) -> None:
    spec = fixture(agent)
    assert spec["reference"].startswith("https://")
    repo, env, key = setup_repo(agent_server, tmp_path, agent)
    sid = "3f2c9b1e-aaaa-4bbb-8ccc-0123456789ab"
    me = f"{agent}-{sid}"
    cmds = commands(repo, agent)
    events = spec["events"]

    def send(step: str) -> subprocess.CompletedProcess[str]:
        event = events[step]["event"]
        assert event in cmds or agent == "windsurf", (event, cmds)
        command = cmds.get(event) or cmds["pre_write_code"]
        return run_hook(repo, env, command, fill(events[step]["input"], repo, sid))

    # Session start: checked in under the agent's own session id.
    started = send("start")
    assert refused(agent, started) is None
    live = presence(agent_server.url, key)
    assert me in live, (list(live), started.stdout, started.stderr)
    if agent != "windsurf":  # its first edit checks in, as the Claude Code guard does
        assert live[me]["meta"]["tool"] == agent

    # An edit of alice's file, in block mode: the agent's own refusal, naming alice.
    reason = refused(agent, send("edit"))
    assert reason and f"{HELD} is claimed by alice" in reason and "block mode" in reason

    # A read of it passes.
    assert refused(agent, send("read")) is None

    # A shell write to it is checked through the agent's shell event.
    reason = refused(agent, send("shell"))
    assert reason and f"{HELD} is claimed by alice" in reason
    assert HELD not in presence(agent_server.url, key)[me]["declared_files"]


DRIVER = """
import { pathToFileURL } from "node:url";
const [plugin, stepsJson] = process.argv.slice(2);
const mod = await import(pathToFileURL(plugin).href);
const hooks = await mod.AgentLanes({ directory: process.cwd(), worktree: process.cwd() });
const results = [];
for (const step of JSON.parse(stepsJson)) {
  try {
    if (step.event === "tool.execute.before") {
      await hooks["tool.execute.before"](step.input, step.output);
    } else if (step.event === "message") {
      const [url, key, token, to] = process.argv.slice(4);
      const r = await fetch(`${url}/api/v1/messages`, {
        method: "POST",
        headers: { "X-API-Key": key, "X-Session-Token": token, "Content-Type": "application/json" },
        body: JSON.stringify({ to, body: "please rebase on main" }),
      });
      if (r.status !== 201) throw new Error(`message: ${r.status}`);
    } else if (step.event === "wait") {
      // The keepalive writes the agent's news file within ~200 ms of an event (SPEC p99
      // bound); the hook reads that file while a keepalive runs.
      await new Promise((done) => setTimeout(done, step.ms));
    } else if (step.event === "tool.execute.after") {
      const output = { title: "README", output: "the file's text", metadata: {} };
      await hooks[step.event](step.input, output);
      results.push({ ok: true, output: output.output });
      continue;
    } else {
      await hooks.event({ event: step.input });
    }
    results.push({ ok: true });
  } catch (err) {
    results.push({ ok: false, error: String(err && err.message) });
  }
}
console.log(JSON.stringify(results));
"""


def test_the_opencode_plugin_in_node(agent_server: ServerProcess, tmp_path: Path) -> None:
    if shutil.which("node") is None:
        unavailable("node", "not installed; `make test` installs Debian's nodejs")
    spec = fixture("opencode")
    repo, env, key = setup_repo(agent_server, tmp_path, "opencode")
    plugin = repo / ".opencode/plugins/agentlanes.js"
    assert "node:child_process" in plugin.read_text()
    sid = "ses_4b2f0c1d"
    steps = [fill(spec["events"][s], repo, sid) for s in ("start", "edit", "read", "shell")]
    steps += [{"event": "message"}, {"event": "wait", "ms": 500}]
    after_read = {"tool": "read", "sessionID": sid, "callID": "c9", "args": {"filePath": "README"}}
    steps += [{"event": "tool.execute.after", "input": after_read}]
    steps += [fill(spec["events"]["end"], repo, sid)]
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    done = subprocess.run(
        [
            "node",
            "--experimental-default-type=module",
            str(driver),
            str(plugin),
            json.dumps(steps),
            agent_server.url,
            key,
            ALICE_TOKENS[key],
            f"opencode-{sid}",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    started, edit, read, shell, _, _, after, _ = json.loads(done.stdout.strip().splitlines()[-1])
    assert started == {"ok": True}
    r = httpx.get(
        f"{agent_server.url}/api/v1/events/log?since=0", headers={"X-API-Key": key}, timeout=10
    )
    kinds = [e["type"] for e in r.json()["events"] if f"opencode-{sid}" in json.dumps(e["data"])]
    assert kinds[0] == "agent.checkin" and kinds[-1] == "agent.checkout", kinds
    assert not edit["ok"] and f"{HELD} is claimed by alice" in edit["error"]
    assert read == {"ok": True}
    assert not shell["ok"] and f"{HELD} is claimed by alice" in shell["error"]
    # The news joins the tool's result (it stays in the conversation); session.deleted
    # checks out.
    text = after["output"] if after["ok"] else ""
    assert text.startswith("the file's text\n\n"), (after, done.stderr)
    assert text.endswith(f"please rebase on main\n{FENCE_CLOSE}"), (after, done.stderr)
    assert f"opencode-{sid}" not in presence(agent_server.url, key)


def test_aider_commits_run_the_git_hook(agent_server: ServerProcess, tmp_path: Path) -> None:
    """Aider has no hooks: `lanes init --agent aider` makes its commits verified, and the
    git pre-commit hook refuses a commit of a file alice holds (block mode)."""
    repo, env, _ = setup_repo(agent_server, tmp_path, "aider")
    conf = (repo / ".aider.conf.yml").read_text()
    assert "git-commit-verify: true" in conf.splitlines()
    assert (repo / ".git/hooks/pre-commit").exists()
    (repo / HELD).write_text("changed by aider\n")
    git(repo, env, "add", HELD)
    done = git(repo, env, "commit", "-m", "aider: change", check=False)  # as Aider commits
    assert done.returncode != 0, done.stdout
    assert "alice" in done.stdout + done.stderr


def test_two_agents_in_one_checkout_keep_two_sessions(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    repo, env, key = setup_repo(agent_server, tmp_path, "codex")
    assert lanes(repo, env, "init", "--agent", "gemini").returncode == 0
    codex, gemini = fixture("codex")["events"]["start"], fixture("gemini")["events"]["start"]
    run_hook(repo, env, commands(repo, "codex")["SessionStart"], fill(codex["input"], repo, "s1"))
    run_hook(repo, env, commands(repo, "gemini")["SessionStart"], fill(gemini["input"], repo, "s1"))
    live = presence(agent_server.url, key)
    assert {"codex-s1", "gemini-s1"} <= set(live)
    assert live["codex-s1"]["session_id"] != live["gemini-s1"]["session_id"]


# Where each agent's answer carries context into the agent (news, warnings).
CONTEXT = {
    "codex": lambda out: (out.get("hookSpecificOutput") or {}).get("additionalContext"),
    "cursor": lambda out: out.get("additional_context"),
    "gemini": lambda out: (out.get("hookSpecificOutput") or {}).get("additionalContext"),
    "copilot": lambda out: out.get("additionalContext"),
    "cline": lambda out: out.get("contextModification"),
}


@pytest.mark.parametrize("agent", list(CONTEXT))
def test_a_message_reaches_the_agents_context_once(
    agent_server: ServerProcess, tmp_path: Path, agent: str
) -> None:
    spec = fixture(agent)
    repo, env, key = setup_repo(agent_server, tmp_path, agent)
    sid = "news-1"
    cmds = commands(repo, agent)
    events = spec["events"]

    def send(step: str) -> Any:
        done = run_hook(
            repo, env, cmds[events[step]["event"]], fill(events[step]["input"], repo, sid)
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else {}

    send("start")
    r = httpx.post(
        f"{agent_server.url}/api/v1/messages",
        json={"to": f"{agent}-{sid}", "body": "please rebase on main"},
        headers={"X-API-Key": key, "X-Session-Token": ALICE_TOKENS[key]},
        timeout=10,
    )
    assert r.status_code == 201, r.text
    text = CONTEXT[agent](send("news"))
    assert text and text.endswith(f"please rebase on main\n{FENCE_CLOSE}") and "alice" in text
    assert not CONTEXT[agent](send("news"))  # once


@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_each_agents_hook_fails_open_unless_fail_closed(tmp_path: Path, agent: str) -> None:
    """Bad input and an unreachable server let the tool call go on; fail_closed turns an
    unreachable server into the agent's own refusal."""
    from tests.support.server import free_port

    down = isolated_env(tmp_path / "home", f"http://127.0.0.1:{free_port()}", "alk_x" * 8)
    repo = make_repo(tmp_path / "repo", down)
    assert lanes(repo, down, "init", "--agent", agent).returncode == 0
    cmds = commands(repo, agent)
    edit = fixture(agent)["events"]["edit"]
    command = cmds[edit["event"]]
    garbled = subprocess.run(
        ["sh", "-c", command], cwd=repo, env=down, input="{not json", capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    no_traceback(garbled)
    assert refused(agent, garbled) is None and "not checked" in garbled.stderr
    payload = fill(edit["input"], repo, "s-down")
    assert refused(agent, run_hook(repo, down, command, payload)) is None
    closed = {**down, "AGENTLANES_FAIL_CLOSED": "1"}
    reason = refused(agent, run_hook(repo, closed, command, payload))
    assert reason and "fail_closed" in reason


def test_a_copilot_tool_event_without_session_id_acts_for_its_session(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    """Copilot CLI's tool payloads may carry no sessionId: the hook acts for the session
    whose recorded agent process is its ancestor (the sessionStart hook recorded it)."""
    repo, env, key = setup_repo(agent_server, tmp_path, "copilot")
    cmds = commands(repo, "copilot")
    events = fixture("copilot")["events"]
    run_hook(repo, env, cmds["sessionStart"], fill(events["start"]["input"], repo, "c-1"))
    edit = fill(events["edit"]["input"], repo, "c-1")
    del edit["sessionId"]
    edit["toolArgs"] = json.dumps(
        {"path": str(repo / "docs/free.md"), "old_str": "", "new_str": "x"}
    )
    assert refused("copilot", run_hook(repo, env, cmds["preToolUse"], edit)) is None
    live = presence(agent_server.url, key)
    assert live["copilot-c-1"]["declared_files"] == ["docs/free.md"]
    assert not [name for name in live if name.startswith("copilot-pid")]


@pytest.mark.parametrize("agent", ["cursor", "gemini", "copilot", "cline"])
def test_a_session_end_checks_out(agent_server: ServerProcess, tmp_path: Path, agent: str) -> None:
    repo, env, key = setup_repo(agent_server, tmp_path, agent)
    cmds = commands(repo, agent)
    events = fixture(agent)["events"]
    for step in ("start", "end"):
        done = run_hook(
            repo, env, cmds[events[step]["event"]], fill(events[step]["input"], repo, "e-1")
        )
        assert refused(agent, done) is None
        live = presence(agent_server.url, key)
        assert (f"{agent}-e-1" in live) == (step == "start")


def test_cursor_stop_follows_up_only_for_a_message(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    repo, env, key = setup_repo(agent_server, tmp_path, "cursor")
    cmds = commands(repo, "cursor")
    events = fixture("cursor")["events"]

    def send(step: str) -> Any:
        done = run_hook(
            repo, env, cmds[events[step]["event"]], fill(events[step]["input"], repo, "k")
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    send("start")
    # News that does not need the agent (the project's mode changed): it stops.
    r = httpx.patch(
        f"{agent_server.url}/api/v1/projects/{SLUGS[key]}",
        json={"conflict_mode": "warn"},
        headers=ADMIN,
        timeout=10,
    )
    assert r.status_code == 200, r.text
    assert send("stop") == {}
    r = httpx.post(
        f"{agent_server.url}/api/v1/messages",
        json={"to": "cursor-k", "body": "hold on, I am in src/"},
        headers={"X-API-Key": key, "X-Session-Token": ALICE_TOKENS[key]},
        timeout=10,
    )
    assert r.status_code == 201, r.text
    follow = send("stop")["followup_message"]
    assert follow.endswith(f"hold on, I am in src/\n{FENCE_CLOSE}")
    assert send("stop") == {}  # once
