"""The messages panel counts each agent's undelivered, delivered and read messages live."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails) with the reason
    expect = None

WITHIN_TWO_SECONDS = 2000


def test_each_agents_message_delivery_is_counted_live(open_board: Any) -> None:
    board = open_board()
    board.log_in()
    alice = board.checkin("alice", ["src/**"])
    bob = board.checkin("bob", ["web/**"])

    def post(path: str, who: dict[str, Any], body: dict[str, Any] | None = None) -> Any:
        r = board.call("POST", path, token=who["session_token"], json=body or {})
        assert r.status_code in (200, 201), r.text
        return r.json()

    first = post("/api/v1/messages", bob, {"to": "alice", "body": "rebase please"})
    second = post("/api/v1/messages", bob, {"to": "alice", "body": "and run the tests"})
    counts = board.page.locator('#message-delivery li[data-agent="alice"]')
    expect(counts).to_have_text(
        "alice 2 undelivered · 0 delivered · 0 read", timeout=WITHIN_TWO_SECONDS
    )
    # alice's hook put the first one in her context; she read the second herself.
    post("/api/v1/news/delivered", alice, {"message_ids": [first["message_id"]]})
    expect(counts).to_have_text(
        "alice 1 undelivered · 1 delivered · 0 read", timeout=WITHIN_TWO_SECONDS
    )
    post(f"/api/v1/messages/{second['message_id']}/read", alice)
    expect(counts).to_have_text(
        "alice 0 undelivered · 1 delivered · 1 read", timeout=WITHIN_TWO_SECONDS
    )


def test_a_persons_message_is_listed_as_a_persons(open_board: Any) -> None:
    """``lanes message send --as NAME``: the project key alone, the sender marked human,
    and the card shows the agent's display name with its full name in the tooltip."""
    board = open_board()
    board.log_in()
    board.checkin("claude-18a375cf-5025", ["src/**"])
    card_name = board.card("claude-18a375cf-5025").locator("h3 button")
    expect(card_name).to_have_text("claude-1", timeout=WITHIN_TWO_SECONDS)
    expect(card_name).to_have_attribute("title", "claude-18a375cf-5025")
    r = board.call(
        "POST", "/api/v1/messages", json={"to": "claude-1", "body": "hi", "human": "ann"}
    )
    assert r.status_code == 201 and r.json()["from_kind"] == "human", r.text
    listed = board.page.locator(f'#messages li[data-message="{r.json()["message_id"]}"]')
    expect(listed).to_contain_text(
        "ann (a person) → claude-18a375cf-5025", timeout=WITHIN_TWO_SECONDS
    )
