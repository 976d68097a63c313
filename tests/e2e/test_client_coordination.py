"""Coordination through the client (tasks, checkpoints, messages, leases, votes, agents)
against a real server process."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlanes.client import ApiError, AsyncClient, Client
from tests.support.agents import new_project

pytestmark = pytest.mark.e2e


def test_coordination_round_trip(agent_server: Any) -> None:
    url = agent_server.url
    key = new_project(url, agent_config_keys=["model"])["api_key"]
    with Client(url, key) as alice, Client(url, key) as bob, Client(url, key) as carol:
        for name, client in (("alice", alice), ("bob", bob), ("carol", carol)):
            client.checkin(name)

        # Tasks: create, ready, atomic claim, notes, status.
        t1 = alice.tasks.create("Add /v2", priority=1, paths=["src/api/**"])
        t2 = alice.tasks.create("Document /v2", depends_on=[t1["task_id"]])
        assert [t["task_id"] for t in bob.tasks.ready()["tasks"]] == [t1["task_id"]]
        claimed = bob.tasks.claim(t1["task_id"])
        assert claimed["status"] == "in_progress"
        assert claimed["claimed_by"]["agent_name"] == "bob"
        with pytest.raises(ApiError) as taken:
            carol.tasks.claim(t1["task_id"])
        assert taken.value.status == 409 and taken.value.code == "TASK_ALREADY_CLAIMED"
        note = bob.tasks.add_note(t1["task_id"], "routes done, tests next")
        assert note["author"] == "bob"
        assert bob.tasks.set_status(t1["task_id"], "done")["status"] == "done"
        with pytest.raises(ApiError) as bad:
            alice.tasks.create("")
        assert bad.value.code == "VALIDATION_ERROR" and bad.value.field == "title"

        # Checkpoints hold a task until they pass.
        gate = alice.checkpoints.create("review", [t2["task_id"]])
        assert t2["task_id"] not in [t["task_id"] for t in carol.tasks.ready()["tasks"]]
        passed = alice.checkpoints.resolve(gate["checkpoint_id"], "passed", note="looks good")
        assert passed["unblocked_task_ids"] == [t2["task_id"]]
        assert t2["task_id"] in [t["task_id"] for t in carol.tasks.ready()["tasks"]]
        assert alice.checkpoints.get(gate["checkpoint_id"])["status"] == "passed"

        # Messages with per-recipient read and acknowledged state.
        sent = alice.messages.send("bob", "please review /v2", type="review", thread_id="v2")
        inbox = bob.messages.inbox(unread=True)
        assert [m["message_id"] for m in inbox["messages"]] == [sent["message_id"]]
        assert bob.messages.read(sent["message_id"])["read_at"] is not None
        assert bob.messages.ack(sent["message_id"])["acked_at"] is not None
        assert bob.messages.inbox(unread=True)["messages"] == []

        # Leases: exclusive, fenced, renewed, released.
        lease = alice.leases.acquire("deploy:prod", ttl_seconds=60)
        with pytest.raises(ApiError) as held:
            bob.leases.acquire("deploy:prod")
        assert held.value.code == "LEASE_CONFLICT"
        assert held.value.extra["lease_holder"]["agent_name"] == "alice"
        assert alice.leases.validate("deploy:prod", lease["fencing_token"])["valid"] is True
        assert alice.leases.renew(lease["lease_id"], ttl_seconds=120)["ttl_seconds"] == 120
        assert alice.leases.release(lease["lease_id"])["status"] == "released"
        again = bob.leases.acquire("deploy:prod")
        assert again["fencing_token"] > lease["fencing_token"]
        assert bob.leases.validate("deploy:prod", lease["fencing_token"])["valid"] is False
        assert [x["agent_name"] for x in carol.leases.list(resource="deploy:prod")["leases"]] == [
            "bob"
        ]

        # Consensus: the other live agents vote; a strict majority decides.
        vote = alice.consensus.request("deploy", "ship /v2", subject="prod")
        assert sorted(vote["eligible_voters"]) == ["bob", "carol"]
        bob.consensus.vote(vote["consensus_id"], "approve")
        decided = carol.consensus.vote(vote["consensus_id"], "approve", comment="ok")
        assert decided["status"] == "approved"
        assert alice.consensus.get(vote["consensus_id"])["status"] == "approved"

        # The agent registry keeps only the config keys the project allows.
        agent = alice.agents.upsert("alice", role="lead", config={"model": "x", "junk": 1})
        assert agent["role"] == "lead" and agent["dropped_keys"] == ["junk"]
        assert alice.agents.get("alice")["config"] == {"model": "x"}
        assert [a["name"] for a in bob.agents.list(role="lead")["agents"]] == ["alice"]


def test_async_client_has_the_same_groups(agent_server: Any) -> None:
    key = new_project(agent_server.url)["api_key"]

    async def scenario() -> None:
        async with AsyncClient(agent_server.url, key) as lanes:
            await lanes.checkin("dora")
            task = await lanes.tasks.create("async task")
            assert (await lanes.tasks.claim(task["task_id"]))["status"] == "in_progress"
            assert (await lanes.tasks.list(status="in_progress"))["total"] == 1
            lease = await lanes.leases.acquire("db:migrate")
            assert (await lanes.leases.release(lease["lease_id"]))["status"] == "released"

    asyncio.run(scenario())
