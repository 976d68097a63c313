"""`agentlanes mcp` over stdio, driven by the official SDK's own client, against a live
server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.agents import isolated_env, lanes_json, make_repo, new_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e

# The default toolset (SPEC "Context budget"): what an agent needs every session.
CORE_TOOLS = {
    "checkin",
    "status",
    "news",
    "message_send",
    "wait",
    "release",
    "checkout",
    "more_tools",
}
SESSION_TOOLS = {"heartbeat", "presence", "check_conflicts", "project"}
TOOLS_LIST_MAX_BYTES = 8 * 1024


def payload(result: Any) -> Any:
    """A tool's answer: the structured content, else the JSON in its text."""
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def test_mcp_tools_over_stdio(agent_server: ServerProcess, tmp_path: Path) -> None:
    key = new_project(agent_server.url, conflict_mode="block")["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    other = make_repo(tmp_path / "other", env)
    lanes_json(other, env, "checkin", "--agent", "alice", "--files", "src/api/**")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agentlanes", "mcp"], env=env, cwd=str(repo)
    )
    notified: list[str] = []

    async def on_message(message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            notified.append(method)

    async def scenario() -> None:
        async with Client(params, message_handler=on_message) as client:
            from agentlanes import __version__

            assert client.server_info is not None
            assert (client.server_info.name, client.server_info.version) == (
                "agentlanes",
                __version__,
            )
            listed = await client.list_tools()
            assert {t.name for t in listed.tools} == CORE_TOOLS
            size = len(listed.model_dump_json(by_alias=True, exclude_none=True))
            assert size <= TOOLS_LIST_MAX_BYTES, f"tools/list is {size} bytes"
            # One call away: the session group, announced by tools/list_changed.
            more = payload(await client.call_tool("more_tools", {"groups": ["session"]}))
            assert set(more["tools"]) == SESSION_TOOLS
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == CORE_TOOLS | SESSION_TOOLS
            with anyio.fail_after(5):
                while "notifications/tools/list_changed" not in notified:
                    await anyio.sleep(0.05)
            wrong = await client.call_tool("more_tools", {"groups": ["everything"]})
            assert wrong.is_error and "groups" in wrong.content[0].text

            refused = await client.call_tool(
                "checkin", {"agent_name": "bob", "declared_files": ["src/**"]}
            )
            assert refused.is_error and "CONFLICT" in refused.content[0].text
            assert (
                "is claimed by alice for certain (their pattern src/api/**)"
                in refused.content[0].text
            )

            ok = payload(
                await client.call_tool(
                    "checkin",
                    {"agent_name": "bob", "declared_area": "docs", "declared_files": ["docs/**"]},
                )
            )
            assert ok["agent_name"] == "bob" and ok["conflicts"] == []
            assert "session_token" not in ok
            # The session is shared with the CLI and the git hook of this repository.
            saved = json.loads((repo / ".git/agentlanes/sessions/bob.json").read_text())
            assert saved["session_id"] == ok["session_id"]

            hits = payload(
                await client.call_tool("check_conflicts", {"paths": ["src/api/a.py", "docs/x.md"]})
            )
            assert [c["agent_name"] for c in hits["conflicts"]] == ["alice"]
            assert hits["conflicts"][0]["overlapping_files"][0]["example"] == "src/api/a.py"

            beat = payload(await client.call_tool("heartbeat", {}))
            assert beat["session_id"] == ok["session_id"]
            status = payload(await client.call_tool("status", {"status_text": "writing docs"}))
            assert status["status_text"] == "writing docs"
            blocked = await client.call_tool("status", {"declared_files": ["src/api/x.py"]})
            assert blocked.is_error and "CONFLICT" in blocked.content[0].text

            live = payload(await client.call_tool("presence", {}))
            assert [s["agent_name"] for s in live["sessions"]] == ["alice", "bob"]
            assert payload(await client.call_tool("project", {}))["conflict_mode"] == "block"

            bad = await client.call_tool("check_conflicts", {"paths": ["/abs"]})
            assert bad.is_error and "VALIDATION_ERROR" in bad.content[0].text

            # Claims given back: the server and the session file the hooks read agree.
            wider = {"declared_files": ["docs/**", "README.md"]}
            assert payload(await client.call_tool("status", wider))["declared_files"] == [
                "docs/**",
                "README.md",
            ]
            many = await client.call_tool("release", {"paths": ["a.py"] * 1001})
            assert many.is_error and "1000" in many.content[0].text
            unknown = await client.call_tool("release", {"paths": ["src/x.py"]})
            assert unknown.is_error and "src/x.py not among your claims" in unknown.content[0].text
            given = payload(await client.call_tool("release", {"paths": ["./README.md"]}))
            assert given["released"] == ["README.md"] and given["declared_files"] == ["docs/**"]
            saved = json.loads((repo / ".git/agentlanes/sessions/bob.json").read_text())
            assert saved["declared_files"] == ["docs/**"]

            done = payload(
                await client.call_tool(
                    "checkout", {"outcome_status": "completed", "work_summary": "docs"}
                )
            )
            assert done["status"] == "checked_out"
            assert not (repo / ".git/agentlanes/sessions/bob.json").exists()
            gone = await client.call_tool("heartbeat", {})
            # Phrased for the agent: which tool to call, not a shell command.
            assert gone.is_error
            assert gone.content[0].text.endswith(
                "You have no agentlanes session: call the `checkin` tool first."
            )

    anyio.run(scenario)


def test_mcp_coordination_tools(agent_server: ServerProcess, tmp_path: Path) -> None:
    key = new_project(agent_server.url)["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    other = make_repo(tmp_path / "other", env)
    lanes_json(other, env, "checkin", "--agent", "alice")
    params = StdioServerParameters(  # every tool up front
        command=sys.executable, args=["-m", "agentlanes", "mcp", "--tools", "all"], env=env,
        cwd=str(repo),
    )  # fmt: skip

    async def scenario() -> None:
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools >= {
                "task_create",
                "tasks_ready",
                "task_claim",
                "task_status",
                "message_send",
                "inbox",
                "lease_acquire",
                "lease_release",
                "consensus_request",
                "consensus_vote",
                "agent_upsert",
                "news",
            }
            payload(
                await client.call_tool(
                    "checkin", {"agent_name": "bob", "declared_files": ["docs/**"]}
                )
            )
            first = payload(await client.call_tool("news", {}))
            assert [i["kind"] for i in first["items"]] == ["summary"]
            lanes_json(other, env, "status", "--agent", "alice", "--files", "docs/guide.md")
            [item] = payload(await client.call_tool("news", {}))["items"]
            assert (
                item["text"]
                == "alice-1 now edits docs/guide.md, which you claim (docs/**), for certain"
            )
            assert payload(await client.call_tool("news", {}))["items"] == []
            task = payload(await client.call_tool("task_create", {"title": "Write the docs"}))
            ready = payload(await client.call_tool("tasks_ready", {}))
            assert [t["task_id"] for t in ready["tasks"]] == [task["task_id"]]
            claimed = payload(await client.call_tool("task_claim", {"task_id": task["task_id"]}))
            assert claimed["claimed_by"]["agent_name"] == "bob"
            done = payload(
                await client.call_tool(
                    "task_status", {"task_id": task["task_id"], "status": "done"}
                )
            )
            assert done["status"] == "done"
            lease = payload(await client.call_tool("lease_acquire", {"resource": "deploy:prod"}))
            assert lease["fencing_token"] >= 1
            sent = payload(await client.call_tool("message_send", {"to": "alice", "body": "hi"}))
            assert sent["to"] == "alice"
            vote = payload(
                await client.call_tool("consensus_request", {"action": "deploy", "reason": "v2"})
            )
            assert vote["eligible_voters"] == ["alice"]
            refused = await client.call_tool(
                "consensus_vote", {"consensus_id": vote["consensus_id"], "vote": "approve"}
            )
            assert refused.is_error and "CONFLICT" in refused.content[0].text  # not eligible
            released = payload(
                await client.call_tool("lease_release", {"lease_id": lease["lease_id"]})
            )
            assert released["status"] == "released"

    anyio.run(scenario)


def test_mcp_over_http_keeps_the_session_alive_while_connected(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    """`/mcp` with the SDK's own streamable HTTP client: the session outlives its TTL while
    the MCP session is open, and runs out once the client has gone (DELETE)."""
    import time

    import httpx
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from agentlanes import __version__

    ttl = 3
    key = new_project(agent_server.url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=ttl)[
        "api_key"
    ]

    def live() -> list[str]:
        r = httpx.get(f"{agent_server.url}/api/v1/presence", headers={"X-API-Key": key})
        return [s["agent_name"] for s in r.json()["sessions"]]

    async def scenario() -> None:
        http = create_mcp_http_client(headers={"X-API-Key": key})
        async with Client(streamable_http_client(f"{agent_server.url}/mcp", http_client=http)) as c:
            assert c.server_info is not None and c.server_info.version == __version__
            me = payload(await c.call_tool("checkin", {"agent_name": "remote"}))
            assert me["agent_name"] == "remote"
            await anyio.sleep(ttl + 2)  # no heartbeat from the agent: the server sends them
            assert live() == ["remote"]
        deadline = time.monotonic() + 15
        while live() and time.monotonic() < deadline:
            await anyio.sleep(0.3)
        assert live() == []  # the MCP session ended, so did the heartbeats

    anyio.run(scenario)


def test_mcp_status_reports_edits_read_with_git(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    """SPEC "Line-level claims": an MCP-only agent reports its edits with the status tool's
    ``edited_files``; the stdio server reads the changed lines with git in its checkout."""
    key = new_project(agent_server.url)["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    (repo / "README").write_text("hello\nsecond\n")  # line 1 kept, a line inserted after it
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agentlanes", "mcp"], env=env, cwd=str(repo)
    )

    async def scenario() -> None:
        async with Client(params) as client:
            payload(await client.call_tool("checkin", {"agent_name": "mcp-only"}))
            status = payload(
                await client.call_tool("status", {"edited_files": [str(repo / "README")]})
            )
            assert [(e["path"], e["ranges"]) for e in status["edits"]] == [("README", [[2, 1]])]
            assert "README" in status["declared_files"]
            bad = await client.call_tool("status", {"edited_files": ["/elsewhere/x.py"]})
            assert not bad.is_error  # outside the checkout: nothing to report, not an error

    anyio.run(scenario)
