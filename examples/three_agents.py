"""Three agents share one repository through agentlanes: tasks, a lease, a message, a vote.

    agentlanes serve &
    agentlanes project create demo --json          # prints {"slug": ..., "api_key": ...}
    python examples/three_agents.py --url http://127.0.0.1:8787 --api-key <api_key>

The story (docs/coordination.md walks through it):
1. ``lead`` plans: three tasks (code, docs, release) and a review checkpoint on the release.
2. ``alice`` takes the code task from her ready list; ``bob`` finds it taken.
3. ``alice`` holds the ``db:migrations`` lease while she migrates (``bob`` is refused), checks
   her fencing token, releases, finishes the task and messages ``bob``.
4. ``bob`` reads the message, writes the docs task.
5. ``lead`` passes the review, asks the others to approve the release, and ships it.

Every step checks the server's answer; any surprise stops the script with exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import httpx


class Failed(Exception):
    pass


class Agent:
    """One agent: its name, its session token, and the project's HTTP client."""

    def __init__(self, http: httpx.Client, name: str) -> None:
        self.http = http
        self.name = name
        self.token = ""

    def call(self, method: str, path: str, expect: int, body: Any = None) -> Any:
        headers = {"X-Session-Token": self.token} if self.token else {}
        r = self.http.request(method, f"/api/v1{path}", json=body, headers=headers)
        if r.status_code != expect:
            raise Failed(f"{self.name}: {method} {path} -> {r.status_code} {r.text}")
        return r.json()

    def checkin(self, **scope: Any) -> None:
        self.token = self.call("POST", "/checkin", 201, {"agent_name": self.name, **scope})[
            "session_token"
        ]


def say(who: str, text: str) -> None:
    print(f"[{who:>5}] {text}")


def run(url: str, api_key: str) -> None:
    http = httpx.Client(base_url=url, headers={"X-API-Key": api_key}, timeout=15)
    lead, alice, bob = Agent(http, "lead"), Agent(http, "alice"), Agent(http, "bob")

    # -- 1. everyone registers and checks in; the lead plans the work -------------------
    for agent, role in ((lead, "planner"), (alice, "backend"), (bob, "docs")):
        agent.call("PUT", f"/agents/{agent.name}", 201, {"role": role})
    lead.checkin(declared_area="planning")
    alice.checkin(declared_area="api", declared_files=["src/api/**"])
    bob.checkin(declared_area="docs", declared_files=["docs/**"])
    say("lead", "checked in with alice (src/api/**) and bob (docs/**)")

    code = lead.call(
        "POST",
        "/tasks",
        201,
        {"title": "Add the /v2 endpoint", "priority": 1, "paths": ["src/api/v2.py"]},
    )
    docs = lead.call(
        "POST",
        "/tasks",
        201,
        {"title": "Document /v2", "paths": ["docs/api.md"], "depends_on": [code["task_id"]]},
    )
    release = lead.call(
        "POST",
        "/tasks",
        201,
        {"title": "Release 1.2", "priority": 0, "depends_on": [code["task_id"], docs["task_id"]]},
    )
    review = lead.call(
        "POST", "/checkpoints", 201, {"name": "release review", "task_ids": [release["task_id"]]}
    )
    say("lead", f"planned {code['task_id']}, {docs['task_id']}, {release['task_id']}")

    # -- 2. alice takes the code task; bob finds it taken ------------------------------
    ready = alice.call("GET", "/tasks/ready", 200)["tasks"]
    if [t["task_id"] for t in ready] != [code["task_id"]]:
        raise Failed(f"alice expected only the code task ready, got {ready}")
    alice.call("POST", f"/tasks/{code['task_id']}/claim", 200)
    say("alice", f"claimed {code['task_id']} ({code['title']})")
    taken = bob.http.post(
        f"/api/v1/tasks/{code['task_id']}/claim", headers={"X-Session-Token": bob.token}
    )
    if taken.status_code != 409 or taken.json()["error"]["code"] != "TASK_ALREADY_CLAIMED":
        raise Failed(f"bob should find the code task taken: {taken.text}")
    say("bob", f"{code['task_id']} is taken by {taken.json()['claimed_by']['agent_name']}")
    if bob.call("GET", "/tasks/ready", 200)["tasks"]:
        raise Failed("nothing should be ready for bob yet (docs wait on code)")

    # -- 3. alice holds the migrations lease while she migrates ------------------------
    lease = alice.call("POST", "/leases", 201, {"resource": "db:migrations", "ttl_seconds": 300})
    say("alice", f"holds db:migrations, fencing token {lease['fencing_token']}")
    refused = bob.http.post(
        "/api/v1/leases",
        json={"resource": "db:migrations"},
        headers={"X-Session-Token": bob.token},
    )
    if refused.status_code != 409 or refused.json()["error"]["code"] != "LEASE_CONFLICT":
        raise Failed(f"bob should be refused the lease: {refused.text}")
    say("bob", f"db:migrations is held by {refused.json()['lease_holder']['agent_name']}")
    check = alice.call(
        "POST",
        "/leases/validate",
        200,
        {"resource": "db:migrations", "fencing_token": lease["fencing_token"]},
    )
    if not check["valid"]:
        raise Failed(f"alice's fencing token should be valid: {check}")
    say("alice", "migration ran under a valid fencing token; releasing")
    alice.call("POST", f"/leases/{lease['lease_id']}/release", 200)
    alice.call(
        "POST",
        f"/tasks/{code['task_id']}/status",
        200,
        {"status": "done", "note": "endpoint and migration merged"},
    )
    alice.call(
        "POST",
        "/messages",
        201,
        {
            "to": "bob",
            "type": "handoff",
            "thread_id": code["task_id"],
            "body": "/v2 is merged: the docs task is yours.",
        },
    )
    say("alice", f"{code['task_id']} done; told bob")

    # -- 4. bob reads his inbox and writes the docs ------------------------------------
    inbox = bob.call("GET", "/messages/inbox?unread=true", 200)
    [handoff] = [m for m in inbox["messages"] if m["type"] == "handoff"]
    bob.call("POST", f"/messages/{handoff['message_id']}/ack", 200)
    say("bob", f"read from {handoff['from']}: {handoff['body']}")
    ready = bob.call("GET", "/tasks/ready", 200)["tasks"]
    if [t["task_id"] for t in ready] != [docs["task_id"]]:
        raise Failed(f"bob expected the docs task ready, got {ready}")
    bob.call("POST", f"/tasks/{docs['task_id']}/claim", 200)
    bob.call("POST", f"/tasks/{docs['task_id']}/notes", 201, {"body": "added examples"})
    bob.call("POST", f"/tasks/{docs['task_id']}/status", 200, {"status": "done"})
    say("bob", f"{docs['task_id']} done")

    # -- 5. the lead passes the review, asks for a vote, ships -------------------------
    if lead.call("GET", "/tasks/ready", 200)["tasks"]:
        raise Failed("the release should wait on its review checkpoint")
    resolved = lead.call(
        "POST", f"/checkpoints/{review['checkpoint_id']}/resolve", 200, {"status": "passed"}
    )
    if resolved["unblocked_task_ids"] != [release["task_id"]]:
        raise Failed(f"the review should unblock the release: {resolved}")
    vote = lead.call(
        "POST",
        "/consensus",
        201,
        {
            "action": "release",
            "subject": "1.2",
            "reason": "code and docs are done",
            "timeout_seconds": 120,
        },
    )
    say("lead", f"asked {', '.join(vote['eligible_voters'])} to approve the release")
    alice.call("POST", f"/consensus/{vote['consensus_id']}/vote", 200, {"vote": "approve"})
    outcome = bob.call(
        "POST",
        f"/consensus/{vote['consensus_id']}/vote",
        200,
        {"vote": "approve", "comment": "docs are live"},
    )
    if outcome["status"] != "approved":
        raise Failed(f"two of two approvals should approve: {outcome}")
    say("lead", f"release approved ({outcome['approvals']}/{len(vote['eligible_voters'])})")
    lead.call("POST", f"/tasks/{release['task_id']}/claim", 200)
    lead.call("POST", f"/tasks/{release['task_id']}/status", 200, {"status": "done"})
    for agent in (lead, alice, bob):
        agent.call("POST", "/checkout", 200, {"outcome_status": "completed"})
    done = lead.call("GET", "/tasks?status=done", 200)["total"]
    say("lead", f"shipped: {done} tasks done, everyone checked out")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("AGENTLANES_URL", "http://127.0.0.1:8787"))
    parser.add_argument("--api-key", default=os.environ.get("AGENTLANES_API_KEY"))
    args = parser.parse_args()
    if not args.api_key:
        parser.error("--api-key (or AGENTLANES_API_KEY) is required")
    try:
        run(args.url, args.api_key)
    except (Failed, httpx.HTTPError) as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
