"""No key or token ever reaches the server's output, at any log level.

A real `agentlanes serve` process (debug logging: the websockets library then logs
request headers and client frames) is driven through every operation of its own OpenAPI
document and through the event socket (header key, ``?token=``, ``attach``, bad
credentials); afterwards its whole stdout+stderr is searched for every secret it issued
or was sent.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from typing import Any

import httpx
import pytest
import websockets

from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e

SECRET_SHAPE = re.compile(r"\b(?:alk_|rt_)?[0-9a-f]{64}\b")


def _secrets_in(body: Any) -> set[str]:
    """Every secret-shaped string in a response (a rotated key, a new token...)."""
    return set(SECRET_SHAPE.findall(json.dumps(body)))


class Driver:
    """Calls the API with every credential it holds and collects every secret issued."""

    def __init__(self, server: ServerProcess, admin: str) -> None:
        self.http = httpx.Client(base_url=server.url, timeout=10)
        self.admin = admin
        self.secrets: set[str] = {admin}
        self.key = ""
        self.token = ""
        self.statuses: list[int] = []

    def call(self, method: str, path: str, body: Any = None, **headers: str) -> Any:
        sent = {
            "Authorization": f"Bearer {self.admin}",
            "X-API-Key": self.key,
            "X-Session-Token": self.token,
            **headers,
        }
        r = self.http.request(method, path, json=body, headers=sent)
        self.statuses.append(r.status_code)
        try:
            payload = r.json()
        except ValueError:
            return None
        self.secrets |= _secrets_in(payload)
        if isinstance(payload, dict) and "rotate-key" in path and "api_key" in payload:
            # A rotated key replaces ours; the old one only lasts until the next rotation.
            self.key = payload["api_key"]
        return payload


def _fill(path: str, ids: dict[str, Any]) -> str:
    return re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: str(ids.get(m.group(1), "x")), path)


@pytest.mark.parametrize("level", ["info", "debug"])
def test_no_secret_reaches_the_log(server_factory: Any, sqlite_url: str, level: str) -> None:
    admin = f"adm-{secrets.token_urlsafe(24)}"
    server = server_factory(
        {
            "AGENTLANES_ADMIN_TOKEN": admin,
            "AGENTLANES_LOG_LEVEL": level,
            "AGENTLANES_DATABASE_URL": sqlite_url,
        }
    )
    d = Driver(server, admin)
    project = d.call("POST", "/api/v1/projects", {"name": f"sec-{secrets.token_hex(3)}"})
    d.key = project["api_key"]
    other = d.call("POST", "/api/v1/projects", {"name": f"sec-{secrets.token_hex(3)}"})
    alice = d.call("POST", "/api/v1/checkin", {"agent_name": "alice", "declared_files": ["a/**"]})
    bob = d.call("POST", "/api/v1/checkin", {"agent_name": "bob", "declared_files": ["a/b/*"]})
    d.token = alice["session_token"]
    # Secrets the server never issued, sent where a real one would go (401 paths).
    bogus_key = "alk_" + secrets.token_hex(32)
    bogus_token = secrets.token_hex(32)
    bogus_rt = "rt_" + secrets.token_hex(32)
    d.secrets |= {bogus_key, bogus_token, bogus_rt, other["api_key"], bob["session_token"]}

    # Objects every path parameter can name, made through the API.
    task = d.call("POST", "/api/v1/tasks", {"title": "t", "session_token": d.token})
    checkpoint = d.call("POST", "/api/v1/checkpoints", {"name": "c", "task_ids": [task["task_id"]]})
    message = d.call("POST", "/api/v1/messages", {"to": "bob", "body": f"hi {d.token}"})
    lease = d.call("POST", "/api/v1/leases", {"resource": "deploy:prod"})
    vote = d.call("POST", "/api/v1/consensus", {"action": "merge", "reason": "why"})
    d.call("PUT", "/api/v1/agents/alice", {"role": "dev"})
    ids: dict[str, Any] = {
        "task_id": task["task_id"],
        "checkpoint_id": checkpoint["checkpoint_id"],
        "message_id": message["message_id"],
        "lease_id": lease["lease_id"],
        "request_id": vote["consensus_id"],
        "name": "alice",
        "slug": project["slug"],
        "session_id": alice["session_id"],
    }

    # Every operation the server documents, with every credential, a body that carries
    # the session token, and once more with bogus credentials.
    schema = d.http.get("/schema/openapi.json").json()
    operations = [
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]
    assert len(operations) > 30

    def ends_credentials(method: str, path: str) -> bool:
        """Deleting the project or revoking its keys: run last, since every other call
        (and the socket) needs them."""
        return method == "DELETE" or "revoke" in path

    def sweep(last: bool) -> None:
        for method, path in operations:
            if ends_credentials(method, path) != last:
                continue
            body = {"session_token": d.token} if method in ("POST", "PUT", "PATCH") else None
            target = _fill(path, ids)
            d.call(method, target, body)
            d.call(method, target, body, **{"X-API-Key": bogus_key, "X-Session-Token": bogus_token})
            d.call(method, f"{target}?token={bogus_rt}&api_key={bogus_key}", body)

    sweep(last=False)

    async def sockets() -> None:
        rt = d.call("POST", "/api/v1/realtime/token")
        d.secrets.add(rt["token"])
        url = f"{server.ws_url}/api/v1/events"
        async with websockets.connect(f"{url}?token={rt['token']}") as ws:
            await asyncio.wait_for(ws.recv(), 5)
            # Alice checked out in the sweep (POST /checkout); Bob is still live.
            await ws.send(json.dumps({"type": "attach", "session_token": bob["session_token"]}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "attached"
            await ws.send(f"not json {d.token} {d.key}")
            await asyncio.wait_for(ws.recv(), 5)
        async with websockets.connect(url, additional_headers={"X-API-Key": d.key}) as ws:
            await asyncio.wait_for(ws.recv(), 5)
        # The key's name and the token percent-encoded (#24 finding 12): what uvicorn logs
        # is the raw query string, which the filter must decode before it judges.
        escaped_rt = "".join(f"%{ord(c):02X}" for c in rt["token"])
        d.secrets.add(escaped_rt)
        async with websockets.connect(f"{url}?%74oken={escaped_rt}") as ws:
            await asyncio.wait_for(ws.recv(), 5)
        for bad in (f"{url}?token={bogus_rt}", f"{url}?token={bogus_rt}&since=oops"):
            async with websockets.connect(bad) as ws:
                with pytest.raises(websockets.ConnectionClosed):
                    while True:
                        await asyncio.wait_for(ws.recv(), 5)
                assert ws.close_code == 4401

    asyncio.run(sockets())
    sweep(last=True)
    assert 500 not in d.statuses
    server.stop()  # flush everything; shutdown lines are output too
    output = server.log()
    assert "WebSocket /api/v1/events?token=***" in output  # uvicorn's line, redacted
    if level == "debug":
        assert "< TEXT" in output  # the websockets library logged client frames
    assert len(d.secrets) >= 10
    leaked = sorted(s for s in d.secrets if s in output)
    assert leaked == [], f"{len(leaked)} secret(s) in the server output"
