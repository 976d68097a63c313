"""The edits an agent reports after each edit (SPEC "Line-level claims"), from the real
hook commands as `lanes init` writes them, against a real server and real git.

Claude Code's ``PostToolUse`` follows its hooks reference
(https://code.claude.com/docs/en/hooks): the ``PreToolUse`` fields (``tool_name``,
``tool_input``, ``tool_use_id``) plus ``tool_response``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentlanes.hooks.edits import DEBOUNCE_SECONDS
from tests.e2e.test_claude_hooks import event, events, hook, presence
from tests.e2e.test_every_agent import HOOK_AGENTS, commands, fill, fixture, run_hook, setup_repo
from tests.support.agents import git, isolated_env, lanes, lanes_json, make_repo, new_project
from tests.support.server import ServerProcess
from tests.support.services import unavailable

pytestmark = pytest.mark.e2e

PLUGIN = ".opencode/plugins/agentlanes.js"
LINES = "".join(f"line {i}\n" for i in range(1, 31))


def post_edit(repo: Path, sid: str, path: Path) -> dict[str, Any]:
    return event(
        repo, sid, "PostToolUse", tool_name="Edit", tool_use_id="toolu_02",
        tool_input={"file_path": str(path), "old_string": "a", "new_string": "b"},
        tool_response={"filePath": str(path), "success": True},
    )  # fmt: skip


def change(path: Path, *numbers: int) -> None:
    lines = path.read_text().splitlines()
    for n in numbers:
        lines[n - 1] = f"changed {n}"
    path.write_text("\n".join(lines) + "\n")


def wait_for(probe: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def statuses(url: str, key: str, me: str) -> list[dict[str, Any]]:
    return [
        e["data"]["session"]
        for e in events(url, key)
        if e["type"] == "agent.status" and e["data"]["session"]["agent_name"] == me
    ]


def shapes(edits: Any) -> Any:
    """The edits without their digests (SPEC "Range claims": one per range, the hash of the
    range's new text, checked here for count only)."""
    if not edits:
        return edits
    out = []
    for edit in edits:
        edit = dict(edit)
        digests = edit.pop("digests", None)
        if digests is not None:
            assert len(digests) == len(edit["ranges"]), edit
        out.append(edit)
    return out


def blob(repo: Path, env: dict[str, str], path: str) -> str:
    return git(repo, env, "rev-parse", f"HEAD:{path}").stdout.strip()


def test_claude_code_reports_its_edits_once_per_burst(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    url = agent_server.url
    key = new_project(url)["api_key"]
    env = isolated_env(tmp_path / "home", url, key)
    repo = make_repo(tmp_path / "repo", env)
    names = [f"src/m{i}.py" for i in range(5)] + ["docs/a b.md"]
    for name in names:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(LINES)
    git(repo, env, "add", ".")
    git(repo, env, "commit", "-q", "--no-verify", "-m", "files")
    sid = "7d1e9a2c-2222-4c2e-9a53-0d1c5b6a7e81"
    me = f"claude-{sid}"
    hook(repo, env, event(repo, sid, "SessionStart", source="startup"))

    # One Edit: its changed lines against HEAD reach presence within the debounce.
    change(repo / "docs/a b.md", 3, 10, 11)
    assert hook(repo, env, post_edit(repo, sid, repo / "docs/a b.md")) is None  # no news
    expected = {"path": "docs/a b.md", "base": blob(repo, env, "docs/a b.md"),
                "ranges": [[3, 3], [10, 11]]}  # fmt: skip
    shown = wait_for(lambda: presence(url, key)[me].get("edits"))
    assert shapes(shown) == [expected]
    assert "docs/a b.md" in presence(url, key)[me]["declared_files"]  # edits join claims
    before = len(statuses(url, key, me))

    # A burst: five PostToolUse calls within a second send one status with all five.
    for i, name in enumerate(names[:5]):
        change(repo / name, i + 1)
    started = time.monotonic()
    guard = [sys.executable, "-m", "agentlanes", "guard"]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    calls = [subprocess.Popen(guard, cwd=repo, env=env, text=True, **pipes) for _ in range(5)]
    for call, name in zip(calls, names[:5], strict=True):
        assert call.stdin is not None
        call.stdin.write(json.dumps(post_edit(repo, sid, repo / name)))
        call.stdin.close()
    for call in calls:
        assert call.wait(timeout=60) == 0
        assert call.stderr is not None and "Traceback" not in call.stderr.read()
    took = time.monotonic() - started
    assert took < DEBOUNCE_SECONDS, f"the burst took {took:.2f} s: not one burst"
    sent = wait_for(lambda: statuses(url, key, me)[before:])
    time.sleep(DEBOUNCE_SECONDS + 1.0)  # a second send, if any, would be in by now
    sent = statuses(url, key, me)[before:]
    assert len(sent) == 1, [s.get("edits") for s in sent]
    paths = {e["path"]: e["ranges"] for e in sent[0]["edits"]}
    assert {n: paths[n] for n in names[:5]} == {
        n: [[i + 1, i + 1]] for i, n in enumerate(names[:5])
    }
    assert paths["docs/a b.md"] == [[3, 3], [10, 11]]  # kept: not listed again

    # An unchanged file noted again sends nothing.
    hook(repo, env, post_edit(repo, sid, repo / names[0]))
    time.sleep(DEBOUNCE_SECONDS + 1.0)
    assert len(statuses(url, key, me)) == before + 1

    # Stop sends the last burst at once; an edit undone is dropped.
    (repo / "docs/a b.md").write_text(LINES)
    change(repo / names[1], 20)
    hook(repo, env, post_edit(repo, sid, repo / "docs/a b.md"))
    hook(repo, env, post_edit(repo, sid, repo / names[1]))
    hook(repo, env, event(repo, sid, "Stop", stop_hook_active=False))
    now = {e["path"]: e["ranges"] for e in presence(url, key)[me]["edits"]}
    assert "docs/a b.md" not in now
    assert now[names[1]] == [[2, 2], [20, 20]]
    time.sleep(DEBOUNCE_SECONDS + 1.0)
    assert len(statuses(url, key, me)) == before + 2  # the sender found nothing left

    # SessionEnd: what is still waiting goes before the check-out; the state goes.
    change(repo / names[2], 30)
    hook(repo, env, post_edit(repo, sid, repo / names[2]))
    hook(repo, env, event(repo, sid, "SessionEnd", reason="prompt_input_exit"))
    last = statuses(url, key, me)[-1]
    assert {e["path"]: e["ranges"] for e in last["edits"]}[names[2]] == [[3, 3], [30, 30]]
    assert me not in presence(url, key)
    assert not (repo / ".git/agentlanes/sessions" / f"{me}.edits.json").exists()


@pytest.mark.parametrize("agent", HOOK_AGENTS)
def test_each_agents_after_edit_event_reports_the_edit(
    agent_server: ServerProcess, tmp_path: Path, agent: str
) -> None:
    """Each agent's documented after-edit event, through the command its config written by
    `lanes init --agent` names (tests/fixtures/agent_hooks/<agent>.json, "after_edit")."""
    events = fixture(agent)["events"]
    repo, env, key = setup_repo(agent_server, tmp_path, agent)
    sid = "edits-1"
    me = f"{agent}-{sid}"
    cmds = commands(repo, agent)

    def send(step: str) -> None:
        event = events[step]["event"]
        assert event in cmds, (event, sorted(cmds))
        done = run_hook(repo, env, cmds[event], fill(events[step]["input"], repo, sid))
        assert done.returncode == 0, done.stderr

    send("start")  # Windsurf: its first pre_write_code (of docs/free.md) checks in
    (repo / "docs/free.md").write_text("changed\n")
    send("after_edit")
    expected = {"path": "docs/free.md", "base": blob(repo, env, "docs/free.md"),
                "ranges": [[1, 1]]}  # fmt: skip
    shown = wait_for(lambda: presence(agent_server.url, key)[me].get("edits"))
    assert shapes(shown) == [expected]


OPENCODE_DRIVER = """
import { pathToFileURL } from "node:url";
const [plugin, stepsJson] = process.argv.slice(2);
const mod = await import(pathToFileURL(plugin).href);
const hooks = await mod.AgentLanes({ directory: process.cwd(), worktree: process.cwd() });
for (const step of JSON.parse(stepsJson)) {
  if (step.event.startsWith("tool.execute.")) {
    await hooks[step.event](step.input, step.output);
  } else {
    await hooks.event({ event: step.input });
  }
}
"""


def test_the_opencode_plugin_reports_edits_after_the_tool(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    """OpenCode's plugin in node: tool.execute.after (whose input may lack the args: the
    plugin kept them from tool.execute.before by callID) notes the edit; session.idle
    sends it at once."""
    if shutil.which("node") is None:
        unavailable("node", "not installed; `make test` installs Debian's nodejs")
    events = fixture("opencode")["events"]
    repo, env, key = setup_repo(agent_server, tmp_path, "opencode")
    # OpenCode's process outlives this node driver: the keepalive checks the session out
    # when the agent's process ends (SPEC "Every coding agent"), not when the driver does.
    env["AGENTLANES_AGENT_PID"] = agent_process()
    sid = "ses_edits1"
    after = fill(events["after_edit"], repo, sid)
    before = {"event": "tool.execute.before", "input": after["input"], "output": after["before"]}
    idle = {"event": "session.idle",
            "input": {"type": "session.idle", "properties": {"sessionID": sid}}}  # fmt: skip
    steps = [fill(events["start"], repo, sid), before, after, idle]
    driver = tmp_path / "driver.mjs"
    driver.write_text(OPENCODE_DRIVER)

    def run(part: list[dict[str, Any]]) -> None:
        done = subprocess.run(
            ["node", "--experimental-default-type=module", str(driver), str(repo / PLUGIN),
             json.dumps(part)],
            cwd=repo, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr

    # One plugin instance throughout (the args it keeps live in it); the tool's own change
    # is made up front.
    (repo / "docs/free.md").write_text("changed\n")
    run(steps)
    me = f"opencode-{sid}"
    expected = {"path": "docs/free.md", "base": blob(repo, env, "docs/free.md"),
                "ranges": [[1, 1]]}  # fmt: skip
    assert shapes(presence(agent_server.url, key)[me].get("edits")) == [expected]  # idle sent it


def test_lanes_status_edits_sends_them_by_hand(agent_server: ServerProcess, tmp_path: Path) -> None:
    url = agent_server.url
    key = new_project(url)["api_key"]
    env = isolated_env(tmp_path / "home", url, key)
    repo = make_repo(tmp_path / "repo", env)
    for name in ("src/a.py", "src/b.py", "docs/x.md"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(LINES)
    git(repo, env, "add", ".")
    git(repo, env, "commit", "-q", "--no-verify", "-m", "files")
    lanes_json(repo, env, "checkin", "--agent", "bob", "--files", "src/**")
    change(repo / "src/a.py", 5)
    change(repo / "docs/x.md", 1)
    (repo / "src/new.py").write_text("x\n")

    # Default: the changed files the session claims (docs/x.md is not claimed).
    sent = lanes_json(repo, env, "status", "--agent", "bob", "--edits")
    assert {e["path"]: e["ranges"] for e in sent["edits_sent"]} == {
        "src/a.py": [[5, 5]], "src/new.py": [[1, 0]]}  # fmt: skip
    shown = {e["path"]: e for e in presence(url, key)["bob"]["edits"]}
    assert shown["src/a.py"]["base"] == blob(repo, env, "src/a.py")
    assert shown["src/new.py"]["base"] is None

    # Named files, relative to where it runs; the human output says what went.
    done = lanes(repo / "docs", env, "status", "--agent", "bob", "--edits", "x.md")
    assert done.returncode == 0, done.stderr
    assert "docs/x.md: lines 1" in done.stdout
    assert "docs/x.md" in presence(url, key)["bob"]["declared_files"]  # an edit claims

    # An edit undone: the next default send drops it.
    (repo / "src/a.py").write_text(LINES)
    sent = lanes_json(repo, env, "status", "--agent", "bob", "--edits")
    assert {"path": "src/a.py", "base": blob(repo, env, "src/a.py"), "ranges": []} in shapes(
        sent["edits_sent"]
    )
    assert "src/a.py" not in {e["path"] for e in presence(url, key)["bob"]["edits"]}
