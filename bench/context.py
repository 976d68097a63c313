"""What agentlanes puts into one agent's context in a day (SPEC "Context budget").

One command: ``.venv/bin/python bench/context.py [AGENT...]`` (default: claude, codex,
gemini, copilot, cline, opencode; no agent program needed: each adapter's hooks are run
as its program runs them, with the event shapes of tests/fixtures/agent_hooks/).

For each agent's adapter it starts from a real server (SQLite in a temp dir) and a
repository set up with ``lanes init --agent NAME``, and plays one agent's day among five:
its session start, 200 tool calls (a read, an edit, a shell command in turn, each with
its before- and after-tool hook), 20 messages to it from the other four, 10 overlaps
that begin and end (another agent claims a file it edited, then lets it go), and 3
refusals (the project switched to block mode for an edit of a file another agent holds).
Every hook's answer is read as the program reads it (``additionalContext``,
``contextModification``, a refusal's reason ...): the characters injected into the
agent's context per channel and in total, the largest single injection, and whether
each message was delivered exactly once. Beside it, the size of the MCP server's default
``tools/list``.

Goal (issue 37): the tools list at most 8 KB; the whole day's injections at most 20,000
characters, every message delivered once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.server import bench_server
from tests.support.agents import git, isolated_env, lanes, make_repo

ADMIN_TOKEN = "bench-admin-token-for-the-context-day-2026"
AGENTS = ("claude", "codex", "gemini", "copilot", "cline", "opencode")
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "agent_hooks"
# Where each program reads text for the model in a hook's answer.
INJECTED = frozenset(
    {
        "additionalContext",
        "additional_context",
        "permissionDecisionReason",
        "reason",
        "contextModification",
        "errorMessage",
        "context",
        "deny",
        "agent_message",
        "followup_message",
        "systemMessage",
    }
)
CALLS, MESSAGES, OVERLAPS, REFUSALS = 200, 20, 10, (60, 120, 180)


def claude_events() -> dict[str, dict[str, Any]]:
    """Claude Code's events (https://code.claude.com/docs/en/hooks), in the fixtures'
    form: ``{kind: {"event", "input"}}`` with ``$SID``, ``$REPO``, ``$REL``."""

    def ev(name: str, **fields: Any) -> dict[str, Any]:
        base = {"session_id": "$SID", "cwd": "$REPO", "hook_event_name": name}
        return {"event": name, "input": {**base, **fields}}

    return {
        "start": ev("SessionStart", source="startup"),
        "read": ev("PreToolUse", tool_name="Read", tool_input={"file_path": "$REPO/$REL"}),
        "edit": ev(
            "PreToolUse",
            tool_name="Edit",
            tool_input={"file_path": "$REPO/$REL", "old_string": "a", "new_string": "b"},
        ),
        "shell": ev("PreToolUse", tool_name="Bash", tool_input={"command": "echo b > $REL"}),
        "after_edit": ev(
            "PostToolUse",
            tool_name="Edit",
            tool_input={"file_path": "$REPO/docs/free.md", "old_string": "a", "new_string": "b"},
        ),
        "end": ev("SessionEnd", reason="exit"),
    }


def opencode_events() -> dict[str, dict[str, Any]]:
    """What the OpenCode plugin (``lanes init --agent opencode``) hands ``lanes guard
    --agent opencode`` for each of OpenCode's hooks: ``{event, session_id, cwd, tool,
    args}`` (the plugin's own shape, ``hooks/adapters/opencode.py``)."""

    def ev(name: str, **fields: Any) -> dict[str, Any]:
        return {
            "event": name,
            "input": {"event": name, "session_id": "$SID", "cwd": "$REPO", **fields},
        }

    return {
        "start": ev("session.created"),
        "read": ev("tool.execute.before", tool="read", args={"filePath": "$REPO/$REL"}),
        "edit": ev(
            "tool.execute.before",
            tool="edit",
            args={"filePath": "$REPO/$REL", "oldString": "a", "newString": "b"},
        ),
        "shell": ev("tool.execute.before", tool="bash", args={"command": "echo b > $REL"}),
        "after_edit": ev(
            "tool.execute.after",
            tool="edit",
            args={"filePath": "$REPO/docs/free.md", "oldString": "a", "newString": "b"},
        ),
        "end": ev("session.deleted"),
    }


def events_of(agent: str) -> dict[str, dict[str, Any]]:
    if agent == "claude":
        return claude_events()
    if agent == "opencode":
        return opencode_events()
    return dict(json.loads((FIXTURES / f"{agent}.json").read_text())["events"])


def fill(value: Any, repo: Path, sid: str, rel: str) -> Any:
    if isinstance(value, str):
        return (
            value.replace("$REPO", str(repo))
            .replace("$SID", sid)
            .replace("$FILE", str(repo / rel))
            .replace("$REL", rel)
        )
    if isinstance(value, list):
        return [fill(v, repo, sid, rel) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, repo, sid, rel) for k, v in value.items()}
    return value


def command_for(repo: Path, agent: str, event: str) -> str:
    """The command the written config runs for ``event``."""
    if agent == "claude":
        hooks = json.loads((repo / ".claude/settings.json").read_text())["hooks"]
        return str(hooks[event][-1]["hooks"][0]["command"])
    if agent == "cline":
        return str(repo / ".clinerules/hooks" / event)
    if agent == "opencode":  # the plugin's own spawn, as a command line
        text = (repo / ".opencode/plugins/agentlanes.js").read_text()
        program = json.loads(text.split("const LANES = ", 1)[1].split(";\n", 1)[0])
        return " ".join([*program, "guard", "--agent", "opencode"])
    path = {
        "codex": ".codex/hooks.json",
        "gemini": ".gemini/settings.json",
        "copilot": ".github/hooks/agentlanes.json",
    }[agent]
    for entry in json.loads((repo / path).read_text())["hooks"][event]:
        command = entry["hooks"][0]["command"] if agent != "copilot" else entry["bash"]
        if "guard --agent" in command:
            return str(command)
    raise KeyError(event)


def injected(stdout: str) -> str:
    """The text a hook's answer puts into the model's context."""
    try:
        answer = json.loads(stdout) if stdout.strip() else {}
    except ValueError:
        return ""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k in INJECTED and isinstance(v, str):
                    found.append(v)
                else:
                    walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(answer)
    return "\n".join(found)


class Day:
    """One agent's day against the server, in one repository."""

    def __init__(self, url: str, agent: str, work: Path) -> None:
        self.url, self.agent = url, agent
        r = httpx.post(
            f"{url}/api/v1/projects",
            json={"name": f"ctx-{agent}-{secrets.token_hex(3)}"},
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            timeout=30,
        )
        r.raise_for_status()
        self.slug, self.key = r.json()["slug"], r.json()["api_key"]
        self.sleeper = subprocess.Popen(  # the agent's process, which its keepalive watches
            [sys.executable, "-c", "import time; time.sleep(3600)"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.env = isolated_env(
            work / "home", url, self.key, AGENTLANES_AGENT_PID=str(self.sleeper.pid)
        )
        self.repo = make_repo(work / "repo", self.env)
        for rel in ("docs/free.md", "zone-1/held.py", *(f"work/f{i}.py" for i in range(8))):
            (self.repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / rel).write_text("a\n")
        git(self.repo, self.env, "add", ".")
        git(self.repo, self.env, "commit", "-q", "--no-verify", "-m", "files")
        done = lanes(self.repo, self.env, "init", "--agent", agent)
        assert done.returncode == 0, done.stderr
        self.events = events_of(agent)
        self.sid = f"ctx-{secrets.token_hex(3)}"
        self.others = [self.checkin(f"other-{k}", [f"zone-{k}/**"]) for k in range(1, 5)]
        self.by_channel: Counter[str] = Counter()
        self.largest = 0
        self.texts: list[str] = []

    def api(self, method: str, path: str, token: str | None = None, **kw: Any) -> Any:
        headers = {"X-API-Key": self.key, **({"X-Session-Token": token} if token else {})}
        r = httpx.request(method, f"{self.url}{path}", headers=headers, timeout=30, **kw)
        if r.status_code >= 400:
            raise RuntimeError(f"{self.agent}: {method} {path}: {r.status_code} {r.text}")
        return r.json()

    def checkin(self, name: str, files: list[str]) -> str:
        out = self.api(
            "POST", "/api/v1/checkin", json={"agent_name": name, "declared_files": files}
        )
        return str(out["session_token"])

    def mode(self, mode: str) -> None:
        r = httpx.patch(
            f"{self.url}/api/v1/projects/{self.slug}",
            json={"conflict_mode": mode},
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            timeout=30,
        )
        r.raise_for_status()

    def hook(self, kind: str, channel: str, rel: str = "docs/free.md") -> str:
        spec = self.events.get(kind)
        if spec is None:  # an event this adapter has none of (no session end)
            return ""
        command = command_for(self.repo, self.agent, spec["event"])
        payload = fill(spec["input"], self.repo, self.sid, rel)
        done = subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(payload),
            cwd=self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        text = injected(done.stdout)
        self.by_channel[channel] += len(text)
        self.largest = max(self.largest, len(text))
        self.texts.append(text)
        return text

    def run(self) -> dict[str, Any]:
        me = None
        self.hook("start", "start")
        nonces = []
        for i in range(CALLS):
            if i % 10 == 0:  # the other four stay live (they have no keepalive here)
                for token in self.others:
                    self.api("POST", "/api/v1/heartbeat", token, json={})
            if i % (CALLS // MESSAGES) == 5:
                nonce = f"msg-{secrets.token_hex(4)}"
                nonces.append(nonce)
                me = me or self.my_name()
                self.api(
                    "POST",
                    "/api/v1/messages",
                    self.others[i % 4],
                    json={"to": me, "body": f"{nonce}: a word about work/f{i % 8}.py"},
                )
            k = i // (CALLS // OVERLAPS)
            if i % (CALLS // OVERLAPS) == 3:  # another agent claims a file we edited
                self.api(
                    "POST",
                    "/api/v1/status",
                    self.others[k % 4],
                    json={"declared_files": [f"zone-{k % 4 + 1}/**", f"work/f{k % 8}.py"]},
                )
            if i % (CALLS // OVERLAPS) == 13:  # and lets it go
                self.api(
                    "POST",
                    "/api/v1/status",
                    self.others[k % 4],
                    json={"declared_files": [f"zone-{k % 4 + 1}/**"]},
                )
            if i in REFUSALS:
                self.mode("block")
                self.hook("edit", "refusal", "zone-1/held.py")
                self.mode("warn")
                continue
            kind = ("read", "edit", "shell")[i % 3]
            self.hook(kind, "before tool", f"work/f{i % 8}.py")
            self.hook("after_edit", "after tool")
        self.hook("end", "end")
        self.sleeper.kill()
        delivered = [sum(t.count(n) for t in self.texts) for n in nonces]
        return {
            "channels": dict(self.by_channel),
            "total": sum(self.by_channel.values()),
            "largest": self.largest,
            "messages once": sum(1 for d in delivered if d == 1),
            "messages": len(nonces),
        }

    def my_name(self) -> str:
        live = self.api("GET", "/api/v1/presence")["sessions"]
        mine = [s["agent_name"] for s in live if str(s["agent_name"]).startswith(self.agent)]
        return str(mine[0]) if mine else f"{self.agent}-{self.sid}"


def tools_list_bytes() -> int:
    from agentlanes.mcp import toolsets
    from agentlanes.mcp.server import new_server

    class Agent:
        tools = toolsets.DEFAULT

    async def resolve(_: Any) -> Any:
        return Agent

    async def listed() -> int:
        answer = await new_server(resolve)._handle_list_tools(None, None)
        return len(answer.model_dump_json(by_alias=True, exclude_none=True))

    return asyncio.run(listed())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agents", nargs="*", help=f"default: {' '.join(AGENTS)}")
    args = parser.parse_args()
    unknown = set(args.agents) - set(AGENTS)
    if unknown:
        parser.error(f"unknown agent(s) {', '.join(sorted(unknown))}: one of {', '.join(AGENTS)}")
    args.agents = args.agents or list(AGENTS)
    work = Path(tempfile.mkdtemp(prefix="context-day-"))
    server = bench_server(work, ADMIN_TOKEN, expiry_check_seconds=1)
    rows = []
    try:
        server.start(timeout=120)
        for agent in args.agents:
            day = Day(server.url, agent, work / agent)
            try:
                rows.append((agent, day.run()))
            finally:
                day.sleeper.kill()
    finally:
        server.stop()
    channels = ["start", "before tool", "after tool", "refusal", "end"]
    print(f"MCP default tools/list: {tools_list_bytes():,} bytes (goal: at most 8,192)\n")
    print("| adapter | " + " | ".join(channels) + " | total | largest | messages once |")
    print("|---|" + "---:|" * (len(channels) + 3))
    for agent, r in rows:
        cells = [f"{r['channels'].get(c, 0):,}" for c in channels]
        print(
            f"| {agent} | " + " | ".join(cells) + f" | **{r['total']:,}** | {r['largest']:,} "
            f"| {r['messages once']}/{r['messages']} |"
        )
    print(
        f"\n{CALLS} tool calls, {MESSAGES} messages, {OVERLAPS} overlaps, "
        f"{len(REFUSALS)} refusals per day; `.venv/bin/python bench/context.py`"
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("AGENTLANES_LOG_LEVEL", "warning")
    sys.exit(main())
