"""The MCP tools checked with a client nobody here wrote: the MCP Inspector's CLI (npm),
over stdio (`agentlanes mcp`) and over streamable HTTP (`/mcp` inside `agentlanes serve`).

Needs node's `npx` (and the npm registry or a warm npm cache); without it the tests skip
with the reason, and fail under AGENTLANES_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentlanes import __version__
from tests.support.agents import isolated_env, lanes_json, make_repo, new_project
from tests.support.server import ServerProcess
from tests.support.services import unavailable

pytestmark = pytest.mark.e2e

# Pinned: the CLI's flags and output are what this test reads.
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
READ_ONLY = {
    "presence",
    "check_conflicts",
    "project",
    "tasks_list",
    "tasks_ready",
    "task_get",
    "checkpoints_list",
    "inbox",
    "leases_list",
    "lease_validate",
    "consensus_get",
    "agents_list",
}


def inspector(*args: str, cwd: Path | None = None) -> Any:
    """Run the Inspector CLI once; its JSON answer (it connects, calls, disconnects)."""
    npx = shutil.which("npx")
    if npx is None:
        unavailable("node's npx", "not on PATH (the MCP Inspector CLI runs with it)")
    # The user's own HOME: npx keeps its package cache there.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLANES_")}
    done = subprocess.run(
        [str(npx), "-y", INSPECTOR, "--cli", *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=cwd,
    )
    if done.returncode != 0 and "ENOTFOUND" in done.stderr + done.stdout:
        unavailable("the MCP Inspector from npm", "the npm registry cannot be reached")
    if done.returncode != 0:
        # A tool error is a result too (the CLI exits non-zero and prints it).
        try:
            answer = json.loads(done.stdout)
        except ValueError:
            answer = {}
        assert answer.get("isError") is True, done.stderr[-2000:] + done.stdout[-2000:]
        return answer
    return json.loads(done.stdout)


def result(answer: dict[str, Any]) -> Any:
    assert answer["isError"] is False, answer
    return answer["structuredContent"]


DEFAULT_TOOLS = {"checkin", "status", "news", "message_send", "wait", "release", "checkout",
                 "more_tools"}  # fmt: skip


def check_tool_list(tools: list[dict[str, Any]]) -> None:
    names = {t["name"] for t in tools}
    assert {"checkin", "status", "checkout", "presence", "check_conflicts", "task_claim"} <= names
    for t in tools:
        # Every tool and every argument is described for the model.
        assert len(t.get("description") or "") > 20, t["name"]
        for arg, schema in t["inputSchema"].get("properties", {}).items():
            assert len(schema.get("description") or "") > 10, (t["name"], arg)
        hints = t.get("annotations") or {}
        assert hints.get("readOnlyHint") is (t["name"] in READ_ONLY), t["name"]
    assert "ctx" not in json.dumps([t["inputSchema"] for t in tools])


def test_inspector_over_stdio(agent_server: ServerProcess, tmp_path: Path) -> None:
    key = new_project(agent_server.url)["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    (repo / "docs").mkdir()
    server = [
        "-e",
        f"AGENTLANES_URL={agent_server.url}",
        "-e",
        f"AGENTLANES_API_KEY={key}",
        "--cwd",
        str(repo),
        sys.executable,
        "-m",
        "agentlanes",
        "mcp",
        "--tools",
        "all",
    ]
    check_tool_list(inspector("--method", "tools/list", *server)["tools"])
    me = result(
        inspector(
            "--method",
            "tools/call",
            "--tool-name",
            "checkin",
            "--tool-arg",
            "agent_name=inspector",
            'declared_files=["docs"]',
            *server,
        )
    )
    assert me["agent_name"] == "inspector" and me["directories_marked"] == ["docs/"]
    saved = json.loads((repo / ".git/agentlanes/sessions/inspector.json").read_text())
    assert saved["session_id"] == me["session_id"]
    # A second connection reads the same agent's session from the working tree.
    live = result(inspector("--method", "tools/call", "--tool-name", "presence", *server))
    assert [s["agent_name"] for s in live["sessions"]] == ["inspector"]


def test_inspector_over_streamable_http(agent_server: ServerProcess, tmp_path: Path) -> None:
    key = new_project(agent_server.url, conflict_mode="block")["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    other = make_repo(tmp_path / "other", env)
    lanes_json(other, env, "checkin", "--agent", "alice", "--files", "src/api/**")
    url = f"{agent_server.url}/mcp"
    http = [url, "--transport", "http", "--header", f"X-API-Key: {key}"]

    # By default the small toolset (SPEC "Context budget": at most 8 KB of JSON);
    # ?tools=all lists every tool from the start.
    default = inspector(*http, "--method", "tools/list")
    assert {t["name"] for t in default["tools"]} == DEFAULT_TOOLS
    assert len(json.dumps(default, separators=(",", ":"))) <= 8 * 1024
    http = [f"{url}?tools=all", *http[1:]]  # the Inspector calls only listed tools
    check_tool_list(inspector(*http, "--method", "tools/list")["tools"])
    refused = inspector(
        *http,
        "--method",
        "tools/call",
        "--tool-name",
        "checkin",
        "--tool-arg",
        "agent_name=web-agent",
        'declared_files=["src/**"]',
    )
    assert refused["isError"] is True
    text = refused["content"][0]["text"]
    assert (
        "CONFLICT" in text and "is claimed by alice for certain (their pattern src/api/**)" in text
    )
    assert "lanes checkin" not in text  # phrased for an agent, not a shell user
    me = result(
        inspector(
            *http,
            "--method",
            "tools/call",
            "--tool-name",
            "checkin",
            "--tool-arg",
            "agent_name=web-agent",
            'declared_files=["docs/**"]',
        )
    )
    assert me["agent_name"] == "web-agent"
    live = result(inspector(*http, "--method", "tools/call", "--tool-name", "presence"))
    assert [s["agent_name"] for s in live["sessions"]] == ["alice", "web-agent"]
    hits = result(
        inspector(
            *http,
            "--method",
            "tools/call",
            "--tool-name",
            "check_conflicts",
            "--tool-arg",
            'paths=["src/api/app.py"]',
        )
    )
    assert [c["agent_name"] for c in hits["conflicts"]] == ["alice"]
    # A new MCP session is a new agent: it has no session until it checks in.
    gone = inspector(*http, "--method", "tools/call", "--tool-name", "heartbeat")
    assert gone["isError"] is True
    assert gone["content"][0]["text"].endswith("call the `checkin` tool first.")


def test_mcp_endpoint_needs_the_project_key(agent_server: ServerProcess) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    url = f"{agent_server.url}/mcp"
    for key in (None, "alk_wrong"):
        sent = {**headers, **({"X-API-Key": key} if key else {})}
        r = httpx.post(url, json=init, headers=sent, timeout=10)
        assert r.status_code == 401
        assert r.json()["error"]["code"] == "UNAUTHORIZED"
    key = new_project(agent_server.url)["api_key"]
    r = httpx.post(url, json=init, headers={**headers, "X-API-Key": key}, timeout=10)
    assert r.status_code == 200, r.text
    body = r.text
    if r.headers["content-type"].startswith("text/event-stream"):
        body = next(line[5:] for line in body.splitlines() if line.startswith("data:"))
    info = json.loads(body)["result"]["serverInfo"]
    assert info["name"] == "agentlanes" and info["version"] == __version__
    # The MCP session belongs to the project that opened it.
    sid = r.headers["mcp-session-id"]
    other = new_project(agent_server.url)["api_key"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    r = httpx.post(
        url,
        json=ping,
        headers={
            **headers,
            "X-API-Key": other,
            "Mcp-Session-Id": sid,
            "Mcp-Protocol-Version": "2025-06-18",
        },
        timeout=10,
    )
    assert r.status_code == 404
    # The sessionless protocol era would give every agent the same identity: refused with
    # a 4xx, on which SDK clients fall back to the initialize handshake.
    r = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}},
        headers={**headers, "X-API-Key": key, "Mcp-Protocol-Version": "2026-07-28"},
        timeout=10,
    )
    assert r.status_code == 400 and "one session per agent" in r.json()["error"]["message"]
