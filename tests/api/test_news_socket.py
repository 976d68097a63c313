"""The agent's news pushed on the socket that attached the session: frames, and no leaks."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api, new_project


def _ws(api: Api) -> Any:
    return api.client.websocket_connect("/api/v1/events", headers={"X-API-Key": api.key})


def _attach_news(ws: Any, token: str, after: str | None = None) -> dict[str, Any]:
    """Attach, subscribe to news; the first news frame (the summary without ``after``)."""
    ws.receive_json()  # the snapshot
    ws.send_json({"type": "attach", "session_token": token})
    assert ws.receive_json()["type"] == "attached"
    ws.send_json({"type": "news", **({"after": after} if after else {})})
    return ws.receive_json()  # type: ignore[no-any-return]


def _next_news(ws: Any, frames: int = 20) -> dict[str, Any]:
    """The next news frame's item (event frames in between are skipped)."""
    for _ in range(frames):
        frame = ws.receive_json()
        if frame.get("type") == "news":
            return frame["item"]  # type: ignore[no-any-return]
    raise AssertionError("no news frame")


def test_news_frames_are_pushed_to_the_attached_session_only(api: Api) -> None:
    alice = api.checkin(agent_name="alice", declared_files=["src/api/**"])
    carol = api.checkin(agent_name="carol", declared_files=["docs/**"])
    bob = api.checkin(agent_name="bob")["session_token"]
    with _ws(api) as ws_alice, _ws(api) as ws_carol:
        first = _attach_news(ws_alice, alice["session_token"])
        assert first["type"] == "news" and first["item"]["kind"] == "summary"
        assert _attach_news(ws_carol, carol["session_token"])["item"]["kind"] == "summary"

        api.post("/messages", {"to": "alice", "body": "for alice"}, token=bob)
        api.post("/status", {"declared_files": ["src/api/app.py"]}, token=bob)
        api.post("/messages", {"to": "carol", "body": "for carol"}, token=bob)

        item = _next_news(ws_alice)
        assert item["kind"] == "message" and item["text"].endswith(": for alice")
        item = _next_news(ws_alice)
        assert item["text"] == (
            "bob-1 now edits src/api/app.py, which you claim (src/api/**), for certain"
        )
        # carol hears only what concerns her: her own message, not alice's news.
        item = _next_news(ws_carol)
        assert item["kind"] == "message" and item["text"].endswith(": for carol")


def test_news_needs_an_attached_session_and_a_good_cursor(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    with _ws(api) as ws:
        ws.receive_json()
        ws.send_json({"type": "news"})
        error = ws.receive_json()
        assert error["type"] == "error" and error["error"]["code"] == "VALIDATION_ERROR"
        ws.send_json({"type": "attach", "session_token": alice})
        ws.receive_json()
        ws.send_json({"type": "news", "after": "nope"})
        assert ws.receive_json()["field"] == "after"


def test_news_frames_never_cross_projects(api: Api) -> None:
    other = new_project(api.client)
    alice = api.checkin(agent_name="alice", declared_files=["src/**"])["session_token"]
    mallory = other.checkin(agent_name="mallory", declared_files=["src/x.py"])["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    with _ws(api) as ws:
        _attach_news(ws, alice)
        other.post("/messages", {"to": "alice", "body": "from the other project"}, token=mallory)
        other.post("/status", {"declared_files": ["src/y.py"]}, token=mallory)
        api.post("/messages", {"to": "alice", "body": "from this project"}, token=bob)
        item = _next_news(ws)
        assert item["text"].endswith(": from this project")
