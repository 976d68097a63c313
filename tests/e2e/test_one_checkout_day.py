"""A day of three agents of three vendors in one checkout (SPEC "Many agents, one working
tree"; issue 35): Claude Code, Codex and Gemini CLI, each its own long-lived process tree
(tests/support/claude_agent.py) running the hooks exactly as ``lanes init --agent claude
codex gemini`` wrote them, with the JSON its program sends (tests/fixtures/), its shell
commands (``git commit`` and ``git push`` with the git hooks) as its own children. A real
server process, real git, a local bare remote.
"""

from __future__ import annotations

import copy
import json
import os
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
CLAUDE = {
    **json.loads((FIXTURES / "claude_code_news_hooks.json").read_text())["input"],
    **json.loads((FIXTURES / "claude_code_hooks.json").read_text())["input"],
}
BARE_PATH = "/usr/local/bin:/usr/bin:/bin"  # no virtual environment on it
CART = "".join(f"cart line {n}\n" for n in range(1, 21))
API = "".join(f"api line {n}\n" for n in range(1, 11))


def fill(value: Any, repo: Path, sid: str) -> Any:
    if isinstance(value, str):
        return value.replace("$REPO", str(repo)).replace("$SID", sid)
    if isinstance(value, list):
        return [fill(v, repo, sid) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, repo, sid) for k, v in value.items()}
    return value


class Agent:
    """One agent's process: its hooks as its program runs them, its shell."""

    def __init__(self, vendor: str, repo: Path, env: dict[str, str], sid: str) -> None:
        self.vendor, self.repo, self.sid = vendor, repo, sid
        self.name = f"{vendor}-{sid}"
        self.proc = subprocess.Popen(
            [sys.executable, str(HARNESS), str(repo), vendor],
            env={**env, "PATH": BARE_PATH},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if vendor != "claude":
            self.shapes = json.loads((FIXTURES / f"agent_hooks/{vendor}.json").read_text())

    def _ask(self, command: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def _payload(self, event: str, **fields: Any) -> dict[str, Any]:
        if self.vendor == "claude":
            payload = copy.deepcopy(CLAUDE[event])
            payload.update(session_id=self.sid, cwd=str(self.repo), hook_event_name=event)
        else:  # the fixture's event of that name (its first), else its start's fields
            events = self.shapes["events"]
            found = [e["input"] for e in events.values() if e["event"] == event]
            shape = found[0] if found else {**events["start"]["input"], "hook_event_name": event}
            payload = fill(copy.deepcopy(shape), self.repo, self.sid)
            if event != "SessionStart":
                payload.pop("source", None)
        payload.update(fields)
        return payload

    def hook(self, event: str, **fields: Any) -> Any:
        """Run the agent's hooks for one event; the answer of the (one) agentlanes hook."""
        runs = self._ask({"hook": event, "payload": self._payload(event, **fields)})["runs"]
        for run in runs:
            assert run["rc"] == 0, run  # never 2, never 127 (no lanes on PATH)
            assert "Traceback" not in run["stderr"], run["stderr"]
        outs = [json.loads(r["stdout"]) for r in runs if r["stdout"].strip()]
        return outs[0] if outs else None

    def tool(
        self, pre: str, post: str, name: str, args: dict[str, Any], change: Any
    ) -> tuple[Any, Any]:
        """One tool call: the before-hook, the change (unless refused), the after-hook.
        Their answers."""
        before = self.hook(pre, tool_name=name, tool_input=args)
        if refusal(before) is not None:
            return before, None
        change()
        return before, self.hook(post, tool_name=name, tool_input=args, tool_response={})

    def bash(self, command: str) -> dict[str, Any]:
        return self._ask({"bash": command, "source_env": False})  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def refusal(answer: Any) -> str | None:
    """The refusal of a before-tool answer, in the agent's own shape; None for a pass."""
    if not answer:
        return None
    if answer.get("decision") == "deny":  # Gemini CLI
        return str(answer.get("reason"))
    out = answer.get("hookSpecificOutput") or {}
    if out.get("permissionDecision") == "deny":  # Claude Code, Codex
        return str(out.get("permissionDecisionReason"))
    return None


def context(answer: Any) -> str:
    return str(((answer or {}).get("hookSpecificOutput") or {}).get("additionalContext") or "")


def replace_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[number - 1] = text + "\n"
    path.write_text("".join(lines))


def presence(url: str, key: str) -> dict[str, dict[str, Any]]:
    r = httpx.get(f"{url}/api/v1/presence", headers={"X-API-Key": key}, timeout=10)
    assert r.status_code == 200, r.text
    return {s["agent_name"]: s for s in r.json()["sessions"]}


def edits_of(url: str, key: str, agent: str) -> dict[str, list[list[int]]]:
    return {e["path"]: e["ranges"] for e in presence(url, key)[agent].get("edits") or []}


def checkouts(url: str, key: str) -> dict[str, dict[str, Any]]:
    r = httpx.get(f"{url}/api/v1/events/log?since=0", headers={"X-API-Key": key}, timeout=10)
    assert r.status_code == 200, r.text
    return {
        e["data"].get("agent_name") or e.get("agent_name") or "?": e["data"]
        for e in r.json()["events"]
        if e["type"] == "agent.checkout"
    }


def screenshot(url: str, key: str, name: str) -> None:
    """The dashboard as a person sees it now, for docs/agents.md (only when
    AGENTLANES_TEST_SCREENSHOTS names a folder: Debian's chromium through Playwright)."""
    folder = os.environ.get("AGENTLANES_TEST_SCREENSHOTS")
    if not folder:
        return
    from playwright.sync_api import expect, sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP

    Path(folder).mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=DESKTOP)
        page.goto(url)
        page.locator("#api-key").fill(key)
        page.keyboard.press("Enter")
        expect(page.locator("#agents-count")).to_have_text("3", timeout=10_000)
        page.wait_for_timeout(1500)  # the cards' fade-in ends
        page.screenshot(path=str(Path(folder) / name), full_page=True)
        browser.close()


@pytest.fixture
def day(agent_server: ServerProcess, tmp_path: Path) -> Any:
    url = agent_server.url
    project = new_project(url)  # warn mode: stale writes are refused in every mode
    env = isolated_env(tmp_path / "home", url, project["api_key"])
    repo = make_repo(tmp_path / "repo", env)
    done = lanes(repo, env, "init", "--agent", "claude", "codex", "gemini")
    assert done.returncode == 0, done.stderr
    (repo / "src").mkdir()
    (repo / "src/cart.py").write_text(CART)
    (repo / "src/api.py").write_text(API)
    git(repo, env, "add", ".")
    git(repo, env, "commit", "-q", "--no-verify", "-m", "the shop")
    remote = tmp_path / "remote.git"
    git(tmp_path, env, "init", "-q", "--bare", str(remote))
    git(repo, env, "remote", "add", "origin", str(remote))
    git(repo, env, "push", "-q", "--no-verify", "-u", "origin", "main")
    started: list[Agent] = []

    def agent(vendor: str, sid: str) -> Agent:
        started.append(Agent(vendor, repo, env, sid))
        return started[-1]

    yield url, project, repo, env, agent
    for a in started:
        a.close()


def test_three_agents_of_three_vendors_share_one_checkout_for_a_day(day: Any) -> None:
    url, project, repo, env, agent = day
    key = project["api_key"]
    claude, codex, gemini = agent("claude", "c-1"), agent("codex", "x-2"), agent("gemini", "g-3")
    for a in (claude, codex, gemini):
        started = a.hook("SessionStart", source="startup")
        assert f"checked in as {a.name}" in context(started), started
    cart, api, new = repo / "src/cart.py", repo / "src/api.py", repo / "src/new.py"

    # Each edits: Claude an Edit of cart.py, Codex an apply_patch of api.py and a new file
    # through its shell, Gemini a `replace` in cart.py, the file Claude edited.
    claude.tool(
        "PreToolUse",
        "PostToolUse",
        "Edit",
        {"file_path": str(cart), "old_string": "cart line 2\n", "new_string": "claude 2\n"},
        lambda: replace_line(cart, 2, "claude 2"),
    )
    patch = (
        "*** Begin Patch\n*** Update File: src/api.py\n@@\n-api line 5\n+codex 5\n*** End Patch\n"
    )
    codex.tool(
        "PreToolUse",
        "PostToolUse",
        "apply_patch",
        {"command": patch},
        lambda: replace_line(api, 5, "codex 5"),
    )
    codex.tool(
        "PreToolUse",
        "PostToolUse",
        "Bash",
        {"command": "cat > src/new.py <<'EOF'\nnew = 1\nEOF"},
        lambda: new.write_text("new = 1\n"),
    )
    passed, told = gemini.tool(
        "BeforeTool",
        "AfterTool",
        "replace",
        {"file_path": str(cart), "old_string": "cart line 15\n", "new_string": "gemini 15\n"},
        lambda: replace_line(cart, 15, "gemini 15"),
    )
    # Warn mode speaks to Gemini too: its BeforeTool has no context channel (it answers
    # {}), so the overlap with Claude's claim comes with the AfterTool of that call.
    assert passed == {}, passed
    assert f"src/cart.py is claimed by {claude.name}" in context(told), told

    # Claude's stale whole-file write of cart.py (Gemini changed it since Claude last
    # wrote it): refused though the project is in warn mode, Gemini's line intact.
    write = {"file_path": str(cart), "content": CART}
    denied, _ = claude.tool(
        "PreToolUse", "PostToolUse", "Write", write, lambda: cart.write_text(CART)
    )
    reason = refusal(denied)
    assert reason is not None, denied
    assert f"src/cart.py: {gemini.name} changed it (line 15" in reason, reason
    assert "Read the file again" in reason, reason
    assert "gemini 15" in cart.read_text()
    # Anchored edits pass; a read makes the whole-file write fresh again.
    anchored = claude.hook("PreToolUse", tool_name="Edit", tool_input={"file_path": str(cart)})
    assert refusal(anchored) is None, anchored
    claude.hook("PreToolUse", tool_name="Read", tool_input={"file_path": str(cart)})
    assert refusal(claude.hook("PreToolUse", tool_name="Write", tool_input=write)) is None

    # Presence: each agent with only its own lines and files.
    def settled() -> bool:
        return (
            edits_of(url, key, claude.name) == {"src/cart.py": [[2, 2]]}
            and edits_of(url, key, gemini.name) == {"src/cart.py": [[15, 15]]}
            and edits_of(url, key, codex.name) == {"src/api.py": [[5, 5]], "src/new.py": [[1, 0]]}
        )

    assert wait_for(settled, timeout=15), {
        a.name: edits_of(url, key, a.name) for a in (claude, codex, gemini)
    }
    screenshot(url, key, "one-checkout-day.png")

    # Messages by display name from an agent's shell reach the other's next hook; a name
    # nobody answers to is refused naming the live agents.
    lanes_bin = Path(sys.executable).parent / "lanes"
    shown = presence(url, key)[gemini.name]["display_name"]
    sent = claude.bash(f"{lanes_bin} message send {shown} 'I keep to the top of cart.py'")
    assert sent["rc"] == 0 and f"{shown} ({gemini.name})" in sent["stdout"], sent
    wrong = claude.bash(f"{lanes_bin} message send codex 'anyone there?'")
    assert wrong["rc"] != 0 and "AGENT_NOT_FOUND" in wrong["stderr"], wrong
    assert "live agents: " in wrong["stderr"] and shown in wrong["stderr"], wrong
    heard = gemini.hook("BeforeAgent", prompt="go on")
    assert "I keep to the top of cart.py" in context(heard), heard

    # A mode change reaches the next hook of every live agent within 2 s (the keepalive
    # holds the socket and writes the news locally).
    r = httpx.patch(
        f"{url}/api/v1/projects/{project['slug']}", json={"conflict_mode": "block"}, headers=ADMIN
    )
    assert r.status_code == 200, r.text
    changed = time.monotonic()
    heard = gemini.hook("BeforeAgent", prompt="go on")
    assert "conflict mode is now block" in context(heard), heard
    assert time.monotonic() - changed < 2
    r = httpx.patch(
        f"{url}/api/v1/projects/{project['slug']}", json={"conflict_mode": "warn"}, headers=ADMIN
    )
    assert r.status_code == 200, r.text

    # Gemini stages everything: refused, naming the others' files and lines.
    swept = gemini.bash("git add -A && git commit -q -m everything")
    assert swept["rc"] != 0, swept
    out = swept["stderr"]
    assert f"src/api.py: line 5 of the staged copy are {codex.name}'s" in out, out
    assert f"src/cart.py: line 2 of the staged copy are {claude.name}'s" in out, out
    assert "git add -p" in out and "git commit -- " in out, out
    assert git(repo, env, "log", "--oneline").stdout.count("\n") == 2  # no commit made
    git(repo, env, "reset", "-q")

    # Each commits its own work: Codex its two files, Claude its hunk of cart.py
    # (`git add -p`), then Gemini the rest of cart.py.
    mine = codex.bash("git add src/api.py src/new.py && git commit -q -m codex")
    assert mine["rc"] == 0, mine
    mine = claude.bash("printf 'y\\nn\\n' | git add -p src/cart.py && git commit -q -m claude")
    assert mine["rc"] == 0, mine
    mine = gemini.bash("git commit -q -m gemini -- src/cart.py")
    assert mine["rc"] == 0, mine
    log = git(repo, env, "log", "--format=%s", "-3").stdout.split()
    assert log == ["gemini", "claude", "codex"]
    assert git(repo, env, "status", "--porcelain").stdout == ""

    # The post-commit hooks took the committed lines out of each agent's edits, and the
    # files out of the claims their edits had brought.
    def committed() -> bool:
        live = presence(url, key)
        return all(not live[a.name].get("edits") for a in (claude, codex, gemini)) and all(
            not live[a.name]["declared_files"] for a in (claude, codex, gemini)
        )

    assert wait_for(committed, timeout=15), presence(url, key)
    pushed = codex.bash("git push -q origin main")
    assert pushed["rc"] == 0, pushed

    # Each session ends: Claude and Gemini by their session-end hooks, Codex (no such
    # event) by its process's end. files_touched: each agent's own, committed or not.
    claude.hook("SessionEnd", reason="prompt_input_exit")
    gemini.hook("SessionEnd", reason="exit")
    codex.close()
    assert wait_for(lambda: len(checkouts(url, key)) == 3, timeout=15), checkouts(url, key)
    ended = checkouts(url, key)
    assert ended[claude.name]["files_touched"] == ["src/cart.py"]
    assert ended[gemini.name]["files_touched"] == ["src/cart.py"]
    assert sorted(ended[codex.name]["files_touched"]) == ["src/api.py", "src/new.py"]


def test_block_on_lines_in_one_checkout_weighs_each_agents_own_lines(day: Any) -> None:
    """Under block_on = lines the guard diffs the file as the edit will leave it against
    HEAD; in a shared tree that diff holds the other agents' lines too, and Gemini's edit
    of line 15 was refused for meeting Claude's line 2. Only the agent's own hunks count."""
    url, project, repo, _env, agent = day
    key = project["api_key"]
    r = httpx.patch(
        f"{url}/api/v1/projects/{project['slug']}",
        json={"conflict_mode": "block", "block_on": "lines"},
        headers=ADMIN,
    )
    assert r.status_code == 200, r.text
    claude, gemini = agent("claude", "c-1"), agent("gemini", "g-3")
    for a in (claude, gemini):
        a.hook("SessionStart", source="startup")
    cart = repo / "src/cart.py"
    claude.tool(
        "PreToolUse",
        "PostToolUse",
        "Edit",
        {"file_path": str(cart), "old_string": "cart line 2\n", "new_string": "claude 2\n"},
        lambda: replace_line(cart, 2, "claude 2"),
    )
    assert wait_for(lambda: edits_of(url, key, claude.name) == {"src/cart.py": [[2, 2]]}, 15)

    # Gemini's lines apart from Claude's: its own hunk only, graded file: it goes ahead.
    apart, _ = gemini.tool(
        "BeforeTool",
        "AfterTool",
        "replace",
        {"file_path": str(cart), "old_string": "cart line 15\n", "new_string": "gemini 15\n"},
        lambda: replace_line(cart, 15, "gemini 15"),
    )
    assert refusal(apart) is None, apart
    # Claude's own line: those meet, refused naming whose lines.
    met = gemini.hook(
        "BeforeTool",
        tool_name="replace",
        tool_input={"file_path": str(cart), "old_string": "claude 2\n", "new_string": "g 2\n"},
    )
    reason = refusal(met)
    assert reason is not None and f"{claude.name}'s edits (lines 2)" in reason, met
