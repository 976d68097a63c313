"""Consensus: each rule with its own test (eligibility, strict majority, rejection once
approval is out of reach, expiry, one vote per agent, non-eligible voters refused)."""

from __future__ import annotations

import time
from typing import Any

from tests.api.conftest import Api, new_project
from tests.api.shared_app import client  # noqa: F401  (one app per module)
from tests.support.waiting import wait_for


def _agents(api: Api, *names: str) -> dict[str, str]:
    return {name: api.checkin(agent_name=name)["session_token"] for name in names}


def _request(api: Api, token: str, **body: Any) -> dict[str, Any]:
    body = {"action": "deploy", "reason": "release 1.2", **body}
    r = api.post("/consensus", body, token=token)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def _vote(api: Api, cid: str, token: str, vote: str) -> Any:
    return api.post(f"/consensus/{cid}/vote", {"vote": vote}, token=token)


def test_eligible_voters_are_the_other_live_agents_at_creation(api: Api) -> None:
    t = _agents(api, "alice", "bob", "carol")
    gone = api.checkin(agent_name="dave")
    api.post("/checkout", token=gone["session_token"])
    req = _request(api, t["alice"], subject="prod", timeout_seconds=60)
    assert req["consensus_id"].startswith("cns_")
    assert req["eligible_voters"] == ["bob", "carol"]
    assert req["requester"] == "alice" and req["status"] == "pending"
    assert req["required_approvals"] == 2 and req["timeout_seconds"] == 60
    # Someone who checks in later is not eligible.
    late = api.checkin(agent_name="erin")["session_token"]
    r = _vote(api, req["consensus_id"], late, "approve")
    assert r.status_code == 409 and r.json()["eligible_voters"] == ["bob", "carol"]


def test_approved_only_on_a_strict_majority(api: Api) -> None:
    t = _agents(api, "alice", "b1", "b2", "b3", "b4")
    cid = _request(api, t["alice"])["consensus_id"]
    assert _vote(api, cid, t["b1"], "approve").json()["status"] == "pending"
    assert _vote(api, cid, t["b2"], "approve").json()["status"] == "pending"  # 2 of 4: a tie
    done = _vote(api, cid, t["b3"], "approve").json()
    assert done["status"] == "approved" and done["approvals"] == 3
    types = [e["type"] for e in api.events() if e["type"].startswith("consensus.")]
    assert types == ["consensus.created"] + ["consensus.vote"] * 3 + ["consensus.approved"]
    r = _vote(api, cid, t["b4"], "approve")
    assert r.status_code == 409 and r.json()["status"] == "approved"


def test_rejected_as_soon_as_approval_is_out_of_reach(api: Api) -> None:
    t = _agents(api, "alice", "b1", "b2", "b3", "b4")
    cid = _request(api, t["alice"])["consensus_id"]
    assert _vote(api, cid, t["b1"], "reject").json()["status"] == "pending"
    # 2 rejections of 4: at most 2 approvals remain, not a strict majority.
    rejected = _vote(api, cid, t["b2"], "reject").json()
    assert rejected["status"] == "rejected" and rejected["rejections"] == 2
    assert [e for e in api.events() if e["type"] == "consensus.rejected"]


def test_nobody_to_ask_means_rejected_at_once(api: Api) -> None:
    alone = _agents(api, "alice")["alice"]
    req = _request(api, alone)
    assert req["eligible_voters"] == [] and req["status"] == "rejected"


def test_one_vote_per_agent(api: Api) -> None:
    t = _agents(api, "alice", "bob", "carol", "dave")
    cid = _request(api, t["alice"])["consensus_id"]
    assert _vote(api, cid, t["bob"], "approve").status_code == 200
    r = _vote(api, cid, t["bob"], "approve")
    assert r.status_code == 409 and "already" in r.json()["error"]["message"]
    # Not even from a new session under the same name.
    bob_again = api.checkin(agent_name="bob")["session_token"]
    assert _vote(api, cid, bob_again, "reject").status_code == 409
    assert api.get(f"/consensus/{cid}").json()["approvals"] == 1


def test_non_eligible_voters_are_refused(api: Api) -> None:
    t = _agents(api, "alice", "bob", "carol")
    cid = _request(api, t["alice"])["consensus_id"]
    r = _vote(api, cid, t["alice"], "approve")  # the requester
    assert r.status_code == 409 and r.json()["error"]["code"] == "CONFLICT"
    assert api.get(f"/consensus/{cid}").json()["votes"] == []


def test_expires_at_the_timeout(api: Api) -> None:
    api = new_project(api.client)
    t = _agents(api, "alice", "bob", "carol")
    cid = _request(api, t["alice"], timeout_seconds=1)["consensus_id"]
    _vote(api, cid, t["bob"], "approve")
    time.sleep(1.1)
    assert api.get(f"/consensus/{cid}").json()["status"] == "expired"
    r = _vote(api, cid, t["carol"], "approve")
    assert r.status_code == 409 and r.json()["status"] == "expired"
    expired = wait_for(
        lambda: [e for e in api.events() if e["type"] == "consensus.expired"], timeout=8
    )
    assert len(expired) == 1 and expired[0]["data"]["consensus"]["approvals"] == 1
    assert api.get("/consensus?status=expired").json()["total"] == 1
    assert api.get("/consensus?status=pending").json()["total"] == 0


def test_list_and_get(api: Api) -> None:
    t = _agents(api, "alice", "bob")
    first = _request(api, t["alice"], action="first")
    second = _request(api, t["alice"], action="second")
    listing = api.get("/consensus").json()
    assert [r["consensus_id"] for r in listing["requests"]] == [
        second["consensus_id"],
        first["consensus_id"],
    ]
    assert api.get("/consensus/cns_nope").status_code == 404


def test_bad_consensus_input_is_a_400_and_changes_nothing(api: Api) -> None:
    t = _agents(api, "alice", "bob", "carol")
    before = api.events()
    cases = [
        ({"reason": "r"}, "action"),
        ({"action": "a"}, "reason"),
        ({"action": "", "reason": "r"}, "action"),
        ({"action": "a", "reason": "r", "timeout_seconds": 0}, "timeout_seconds"),
        ({"action": "a", "reason": "r", "timeout_seconds": 86_401}, "timeout_seconds"),
        ({"action": "a", "reason": "r", "subject": "s" * 501}, "subject"),
        ({"action": "a", "reason": "r", "quorum": 2}, "quorum"),
    ]
    for body, field in cases:
        r = api.post("/consensus", body, token=t["alice"])
        assert r.status_code == 400 and r.json()["field"] == field, (body, r.text)
    r = api.post("/consensus", {"action": "a", "reason": "r"})
    assert r.status_code == 400 and r.json()["field"] == "session_token"
    assert api.events() == before
    cid = _request(api, t["alice"])["consensus_id"]
    before = api.events()
    for body in ({}, {"vote": "maybe"}, {"vote": True}):
        r = api.post(f"/consensus/{cid}/vote", body, token=t["bob"])
        assert r.status_code == 400 and r.json()["field"] == "vote", body
    assert api.get("/consensus?status=nope").status_code == 400
    assert api.events() == before
