"""Messages: direct and broadcast, inbox with per-recipient read/ack state, pages, live."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api
from tests.api.shared_app import client  # noqa: F401  (one app per module)


def _send(api: Api, token: str, **body: Any) -> dict[str, Any]:
    r = api.post("/messages", body, token=token)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def _inbox(api: Api, token: str, query: str = "") -> dict[str, Any]:
    r = api.get(f"/messages/inbox{query}", token=token)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_direct_and_broadcast_messages_reach_the_right_inboxes(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    carol = api.checkin(agent_name="carol")["session_token"]
    direct = _send(
        api, alice, to="bob", body="can you review #12?", type="request", thread_id="pr-12"
    )
    everyone = _send(api, alice, to="broadcast", body="freezing main at 5pm")
    assert direct["from"] == "alice" and direct["to"] == "bob" and direct["type"] == "request"
    assert everyone["type"] == "message" and everyone["thread_id"] is None
    bob_box = _inbox(api, bob)
    assert [m["message_id"] for m in bob_box["messages"]] == [
        direct["message_id"],
        everyone["message_id"],
    ]
    assert bob_box["unread"] == 2 and bob_box["agent_name"] == "bob"
    assert [m["message_id"] for m in _inbox(api, carol)["messages"]] == [everyone["message_id"]]
    # The sender's own broadcast is not in its inbox.
    assert _inbox(api, alice)["messages"] == []
    created = [e for e in api.events() if e["type"] == "message.created"]
    assert created[0]["data"]["message"]["body"] == "can you review #12?"


def test_read_and_ack_state_is_per_recipient_even_for_broadcasts(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    carol = api.checkin(agent_name="carol")["session_token"]
    msg = _send(api, alice, to="broadcast", body="hello all")
    mid = msg["message_id"]
    r = api.post(f"/messages/{mid}/read", token=bob)
    assert r.status_code == 200 and r.json()["read_at"] and r.json()["acked_at"] is None
    assert _inbox(api, bob)["unread"] == 0
    assert _inbox(api, bob, "?unread=true")["messages"] == []
    assert _inbox(api, carol)["unread"] == 1  # carol has not read it
    r = api.post(f"/messages/{mid}/ack", token=carol)
    assert r.status_code == 200 and r.json()["read_at"] and r.json()["acked_at"]
    assert _inbox(api, carol)["unread"] == 0
    assert _inbox(api, bob, "?unacked=true")["total"] == 1
    # Reading again is idempotent: no second event.
    api.post(f"/messages/{mid}/read", token=bob)
    types = [e["type"] for e in api.events() if e["type"] in ("message.read", "message.acked")]
    assert types == ["message.read", "message.acked"]


def test_someone_elses_message_is_not_found(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    carol = api.checkin(agent_name="carol")["session_token"]
    api.checkin(agent_name="bob")
    msg = _send(api, alice, to="bob", body="for bob only")
    assert api.post(f"/messages/{msg['message_id']}/read", token=carol).status_code == 404
    assert api.post(f"/messages/{msg['message_id']}/ack", token=alice).status_code == 404
    assert api.post("/messages/abc/read", token=carol).status_code == 404
    assert api.post("/messages/999999/read", token=carol).status_code == 404


def test_inbox_pages_and_filters(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    sent = [
        _send(api, alice, to="bob", body=f"n{i}", thread_id="t1" if i % 2 else "t2")
        for i in range(5)
    ]
    ids = [m["message_id"] for m in sent]
    page = _inbox(api, bob, "?limit=2&offset=2")
    assert [m["message_id"] for m in page["messages"]] == ids[2:4] and page["total"] == 5
    assert [m["message_id"] for m in _inbox(api, bob, f"?after_id={ids[3]}")["messages"]] == [
        ids[4]
    ]
    assert [m["body"] for m in _inbox(api, bob, "?thread_id=t1")["messages"]] == ["n1", "n3"]
    assert _inbox(api, bob, "?type=request")["total"] == 0


def test_bad_message_input_is_a_400_and_changes_nothing(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    before = api.events()
    cases = [
        ({"body": "hi"}, "to"),
        ({"to": "not a name!", "body": "hi"}, "to"),
        ({"to": "bob"}, "body"),
        ({"to": "bob", "body": "   "}, "body"),
        ({"to": "bob", "body": "x" * 50_001}, "body"),
        ({"to": "bob", "body": "hi", "type": "t" * 65}, "type"),
        ({"to": "bob", "body": "hi", "thread_id": "t" * 129}, "thread_id"),
        ({"to": "bob", "body": 5}, "body"),
    ]
    for body, field in cases:
        r = api.post("/messages", body, token=alice)
        assert r.status_code == 400 and r.json()["field"] == field, (body, r.text)
    r = api.post("/messages", {"to": "bob", "body": "hi"})
    assert r.status_code == 400 and r.json()["field"] == "session_token"
    for query, field in [
        ("?limit=0", "limit"),
        ("?unread=perhaps", "unread"),
        ("?after_id=x", "after_id"),
    ]:
        r = api.get(f"/messages/inbox{query}", token=alice)
        assert r.status_code == 400 and r.json()["field"] == field
    assert api.events() == before
    # A body of exactly 50,000 characters is fine.
    api.checkin(agent_name="bob")
    assert (
        api.post("/messages", {"to": "bob", "body": "x" * 50_000}, token=alice).status_code == 201
    )


def test_a_message_is_delivered_live_to_the_recipients_attached_socket(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    with api.client.websocket_connect("/api/v1/events", headers={"X-API-Key": api.key}) as ws:
        assert ws.receive_json()["type"] == "presence.snapshot"
        ws.send_json({"type": "attach", "session_token": bob})
        assert ws.receive_json()["type"] == "attached"
        msg = _send(api, alice, to="bob", body="ping from alice")
        frame = ws.receive_json()
        assert frame["type"] == "message.created"
        assert frame["data"]["message"]["message_id"] == msg["message_id"]
        assert frame["data"]["message"]["body"] == "ping from alice"


def _same_exchange(api: Api) -> list[int]:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    ids = [_send(api, alice, to="bob", body=f"m{i}")["message_id"] for i in range(3)]
    assert [m["message_id"] for m in _inbox(api, bob)["messages"]] == ids
    assert [m["message_id"] for m in _inbox(api, bob, f"?after_id={ids[0]}")["messages"]] == ids[1:]
    assert api.post(f"/messages/{ids[1]}/read", token=bob).status_code == 200
    return ids


def test_message_ids_are_numbered_per_project(api: Api) -> None:
    """One project's message ids say nothing of another's volume (#24 finding 13): the
    same exchange in two projects gets the same ids, however much a third one sent, and
    an id of one project opens nothing in another."""
    from tests.api.conftest import new_project

    app = api.client
    first = _same_exchange(new_project(app))
    busy = new_project(app)
    talker = busy.checkin(agent_name="talker")["session_token"]
    busy.checkin(agent_name="x")
    busy_ids = [_send(busy, talker, to="x", body="noise")["message_id"] for _ in range(25)]
    second_project = new_project(app)
    second = _same_exchange(second_project)
    assert first == second
    assert sorted(busy_ids) == busy_ids and len(set(busy_ids)) == 25
    # The busy project's ids mean nothing to the second one.
    reader = second_project.checkin(agent_name="x")["session_token"]
    assert second_project.post(f"/messages/{busy_ids[-1]}/read", token=reader).status_code == 404
