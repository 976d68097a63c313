"""A realistic swarm for the dashboard's tests, screenshots and benchmark: agents named for
what they work on, each with a module's globs, one linter claiming ``**/*.py`` (the hotspot),
a ``package.json`` claim (an overlap only if it were a directory), and the coordination a
swarm leaves around: tasks in every state, leases, a vote and a message thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

MODULES = ("api", "web", "auth", "billing", "search", "docs", "infra", "mobile", "cli", "data")

Call = Callable[..., httpx.Response]


def agent(i: int) -> dict[str, Any]:
    """The i-th agent's check-in body (deterministic)."""
    if i == 0:
        return {"agent_name": "claude-lint-1", "declared_files": ["**/*.py"]}
    m = MODULES[(i - 1) % len(MODULES)]
    k = (i - 1) // len(MODULES) + 1
    body: dict[str, Any] = {"agent_name": f"claude-{m}-{k}"}
    if k == 1:
        body["declared_files"] = [f"src/{m}/**"]
        body["declared_area"] = m
        if m == "infra":
            body["declared_files"] = ["infra/**", "package.json"]
    elif k % 4 == 0:
        body["declared_files"] = [f"src/{m}/part{k}/**"]
    elif k % 4 == 1:
        body["declared_files"] = [f"lib/{m}/{k}/*.ts"]
    elif k % 4 == 2:
        body["declared_files"] = [f"tests/{m}/test_{k}.py", f"src/{m}/models.py"]
    else:
        body["declared_files"] = [f"docs/{m}/*.md", f"web/{m}/{k}/*.tsx"]
    if m == "web" and k == 2:
        body["declared_area"] = "web"  # the same work area as claude-web-1
    return body


def check_in(call: Call, n: int) -> list[dict[str, Any]]:
    sessions = []
    for i in range(n):
        r = call("POST", "/api/v1/checkin", json=agent(i))
        assert r.status_code == 201, r.text
        sessions.append(r.json())
    return sessions


def coordinate(call: Call, sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """Tasks (ready, waiting on a dependency, a gate and claimed paths, claimed, done),
    two leases, a pending vote, a thread and a broadcast with read and ack state."""

    def post(path: str, who: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        r = call("POST", path, token=who["session_token"], json=body)
        assert r.status_code in (200, 201), r.text
        return r.json()  # type: ignore[no-any-return]

    by_name = {s["agent_name"]: s for s in sessions}
    lead = sessions[1]
    schema = post("/api/v1/tasks", lead, {"title": "Design the schema", "priority": 1})
    post(
        "/api/v1/tasks",
        lead,
        {"title": "Migrate the data", "depends_on": [schema["task_id"]], "paths": ["db/**"]},
    )
    release = post("/api/v1/tasks", lead, {"title": "Cut the release", "priority": 0})
    post("/api/v1/checkpoints", lead, {"name": "QA sign-off", "task_ids": [release["task_id"]]})
    post(
        "/api/v1/tasks", lead, {"title": "Refactor the API models", "paths": ["src/api/models.py"]}
    )
    post("/api/v1/tasks", lead, {"title": "Write the changelog", "paths": ["CHANGELOG.md"]})
    fix = post("/api/v1/tasks", lead, {"title": "Fix the login redirect", "priority": 1})
    worker = sessions[3] if len(sessions) > 3 else lead
    post(f"/api/v1/tasks/{fix['task_id']}/claim", worker, {})
    done = post("/api/v1/tasks", lead, {"title": "Bump the linter"})
    post(f"/api/v1/tasks/{done['task_id']}/claim", lead, {})
    post(f"/api/v1/tasks/{done['task_id']}/status", lead, {"status": "done"})

    post("/api/v1/leases", lead, {"resource": "deploy:staging", "ttl_seconds": 40})
    post("/api/v1/leases", worker, {"resource": "db:migrations", "ttl_seconds": 600})
    vote = post(
        "/api/v1/consensus",
        lead,
        {
            "action": "merge",
            "subject": "PR 214",
            "reason": "the API tests pass",
            "timeout_seconds": 300,
        },
    )
    voter = sessions[2] if len(sessions) > 2 else lead
    if voter is not lead:
        post(f"/api/v1/consensus/{vote['consensus_id']}/vote", voter, {"vote": "approve"})

    ask = post(
        "/api/v1/messages",
        lead,
        {
            "to": worker["agent_name"],
            "body": "Can you take the login redirect? It touches src/auth/session.py.",
            "thread_id": "login-redirect",
            "type": "request",
        },
    )
    post(
        "/api/v1/messages",
        worker,
        {
            "to": lead["agent_name"],
            "body": "On it; I will check out when the tests pass.",
            "thread_id": "login-redirect",
            "type": "reply",
        },
    )
    post(f"/api/v1/messages/{ask['message_id']}/ack", worker, {})
    note = post(
        "/api/v1/messages",
        by_name.get("claude-lint-1", lead),
        {"to": "broadcast", "body": "Reformatting every *.py file: expect overlaps with me."},
    )
    post(f"/api/v1/messages/{note['message_id']}/read", lead, {})
    return {"vote": vote, "lead": lead, "worker": worker}
