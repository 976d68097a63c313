"""Names people can read (SPEC "Many agents, one working tree"): every live session has a
``display_name`` ``<agent>-<n>``, unique among the project's live sessions and stable for
its life; messages take it; a message to a name nobody answers to is a 404
``AGENT_NOT_FOUND`` naming the live agents; a person speaks with the project key alone."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api

CLAUDE_A = "claude-18a375cf-5025-4c86-a3f9-6fd9b6c6f5e5"
CLAUDE_B = "claude-9b1c0e7d-77aa-4f0e-8f51-0d3c2b1a9e88"
CODEX = "codex-5e0d2c51-6a2b-4c1e-9d7f-3b8a1f2e4c6d"


def _presence(api: Api) -> dict[str, str]:
    r = api.get("/presence")
    assert r.status_code == 200, r.text
    return {s["agent_name"]: s["display_name"] for s in r.json()["sessions"]}


def test_each_live_session_gets_its_kind_and_the_smallest_free_number(api: Api) -> None:
    a = api.checkin(agent_name=CLAUDE_A, declared_files=["src/a.py"])
    b = api.checkin(agent_name=CLAUDE_B)
    c = api.checkin(agent_name=CODEX)
    plain = api.checkin(agent_name="alice")
    assert [x["display_name"] for x in (a, b, c, plain)] == [
        "claude-1",
        "claude-2",
        "codex-1",
        "alice-1",
    ]
    assert _presence(api) == {CLAUDE_A: "claude-1", CLAUDE_B: "claude-2", CODEX: "codex-1"} | {
        "alice": "alice-1"
    }
    # Stable for the session's life: a status change keeps it, events carry it.
    r = api.post("/status", {"declared_files": ["src/b.py"]}, token=a["session_token"])
    assert r.status_code == 200 and r.json()["display_name"] == "claude-1"
    checkins = [e for e in api.events() if e["type"] in ("agent.checkin", "agent.status")]
    assert [e["data"]["session"]["display_name"] for e in checkins] == [
        "claude-1",
        "claude-2",
        "codex-1",
        "alice-1",
        "claude-1",
    ]
    # A session that supersedes its agent's keeps that one's name.
    again = api.checkin(agent_name=CLAUDE_B)
    assert again["display_name"] == "claude-2"
    # Once a session has ended its number is free for the next one of its kind.
    assert api.post("/checkout", {}, token=a["session_token"]).status_code == 200
    ended = [e for e in api.events() if e["type"] == "agent.checkout"][-1]
    assert ended["data"]["display_name"] == "claude-1"
    third = api.checkin(agent_name="claude-0c0ffee0")
    assert third["display_name"] == "claude-1"
    assert sorted(_presence(api).values()) == ["alice-1", "claude-1", "claude-2", "codex-1"]


def test_a_name_already_short_is_kept_and_never_given_twice(api: Api) -> None:
    own = api.checkin(agent_name="claude-1")
    assert own["display_name"] == "claude-1"
    other = api.checkin(agent_name=CLAUDE_A)
    # claude-1 is taken (as an agent name): the other gets the next number.
    assert other["display_name"] == "claude-2"
    late = api.checkin(agent_name="claude-2")
    assert late["display_name"] == "claude-3"  # claude-2 is CLAUDE_A's display name
    assert len(set(_presence(api).values())) == 3


def _send(api: Api, token: str | None, **body: Any) -> Any:
    return api.post("/messages", body, token=token)


def test_a_message_to_a_display_name_reaches_the_agent_behind_it(api: Api) -> None:
    sender = api.checkin(agent_name=CODEX)["session_token"]
    reader = api.checkin(agent_name=CLAUDE_A)["session_token"]
    r = _send(api, sender, to="claude-1", body="rebase please")
    assert r.status_code == 201, r.text
    assert r.json()["to"] == CLAUDE_A and r.json()["from_kind"] == "agent"
    inbox = api.get("/messages/inbox", token=reader).json()
    assert [m["body"] for m in inbox["messages"]] == ["rebase please"]
    news = api.get("/news", token=reader).json()
    cursor = news["cursor"]
    _send(api, sender, to="claude-1", body="and the tests")
    [item] = api.get(f"/news?after={cursor}", token=reader).json()["items"]
    assert item["text"].startswith("codex-1 to you, message ")


def test_a_message_to_an_unknown_or_ended_agent_is_refused_naming_the_live_ones(
    api: Api,
) -> None:
    sender = api.checkin(agent_name=CODEX)["session_token"]
    gone = api.checkin(agent_name=CLAUDE_A)["session_token"]
    api.checkin(agent_name=CLAUDE_B)
    assert api.post("/checkout", {}, token=gone).status_code == 200
    before = api.events()
    # The ended session's name and display name (claude-1) answer to nobody now.
    for name in ("codex", "nobody-at-all", CLAUDE_A, "claude-1"):
        r = _send(api, sender, to=name, body="hello?")
        assert r.status_code == 404, (name, r.text)
        body = r.json()
        assert body["error"]["code"] == "AGENT_NOT_FOUND"
        assert "live agents: claude-2, codex-1" in body["error"]["message"]
        assert body["live_agents"] == [
            {"display_name": "claude-2", "agent_name": CLAUDE_B},
            {"display_name": "codex-1", "agent_name": CODEX},
        ]
        assert body["live_agents_total"] == 2
    assert api.events() == before  # nothing written


def test_a_registered_agent_and_broadcast_are_taken_offline_too(api: Api) -> None:
    sender = api.checkin(agent_name="alice")["session_token"]
    r = api.client.put("/api/v1/agents/reviewer", json={"role": "review"}, headers=api.headers())
    assert r.status_code in (200, 201), r.text
    assert _send(api, sender, to="reviewer", body="when you are back").status_code == 201
    assert _send(api, sender, to="broadcast", body="freeze at 5").status_code == 201


def test_a_person_speaks_with_the_key_alone_and_is_marked_human(api: Api) -> None:
    agent = api.checkin(agent_name=CLAUDE_A)["session_token"]
    cursor = api.get("/news", token=agent).json()["cursor"]
    r = _send(api, None, to="claude-1", body="please stop touching the schema", human="ann")
    assert r.status_code == 201, r.text
    sent = r.json()
    assert sent["from"] == "ann" and sent["from_kind"] == "human"
    assert sent["from_session_id"] is None and sent["to"] == CLAUDE_A
    [event] = [e for e in api.events() if e["type"] == "message.created"]
    assert event["data"]["message"]["from_kind"] == "human"
    [item] = api.get(f"/news?after={cursor}", token=agent).json()["items"]
    assert item["text"].startswith("ann (a person) to you, message ")
    [mail] = api.get("/messages/inbox", token=agent).json()["messages"]
    assert mail["from_kind"] == "human"
    # A person does not speak with a session, nor as a live agent, nor to nobody.
    before = api.events()
    cases = [
        (agent, {"to": "claude-1", "body": "x", "human": "ann"}, 400, "human"),
        (None, {"to": "claude-1", "body": "x", "human": "claude-1"}, 400, "human"),
        (None, {"to": "claude-1", "body": "x", "human": CLAUDE_A}, 400, "human"),
        (None, {"to": "claude-1", "body": "x", "human": "not a name"}, 400, "human"),
        (None, {"to": "nobody", "body": "x", "human": "ann"}, 404, None),
        (None, {"to": "claude-1", "body": "x"}, 400, "session_token"),
    ]
    for token, body, status, field in cases:
        r = _send(api, token, **body)
        assert r.status_code == status, (body, r.text)
        if field:
            assert r.json()["field"] == field, (body, r.text)
    assert api.events() == before


def test_an_empty_claim_list_releases_every_claim(api: Api) -> None:
    """``declared_files: []`` (what ``lanes release`` sends to let go of everything)."""
    holder = api.checkin(agent_name="alice", declared_files=["src/app.py", "docs/**"])
    r = api.post("/status", {"declared_files": []}, token=holder["session_token"])
    assert r.status_code == 200, r.text
    assert r.json()["declared_files"] == []
    assert _presence(api) == {"alice": "alice-1"}
    [status] = [e for e in api.events() if e["type"] == "agent.status"]
    assert status["data"]["session"]["declared_files"] == []
