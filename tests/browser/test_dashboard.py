"""The live dashboard in real headless Chromium against a real server process."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import PHONE, Board
from tests.browser.test_swarm_views import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails) with the reason
    expect = None

# Set AGENTLANES_TEST_SCREENSHOTS=docs to refresh docs/dashboard.png from a real run.
SCREENSHOTS = os.environ.get("AGENTLANES_TEST_SCREENSHOTS")
WITHIN_A_SECOND = 1000


def _screenshot(board: Board, tmp_path: Path, name: str, docs: bool = False) -> None:
    """Keep a picture of the page with the test's files (and in the docs when asked)."""
    board.page.screenshot(path=str(tmp_path / name), full_page=True)
    if SCREENSHOTS and docs:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        board.page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=True)


def test_checkin_conflict_and_checkout_show_within_a_second(
    open_board: Any, tmp_path: Path
) -> None:
    board = open_board()
    board.log_in()
    page = board.page
    expect(page.locator("#agents-empty")).to_be_visible()

    alice = board.checkin("alice", ["src/api/**"], area="api")
    expect(board.card("alice")).to_be_visible(timeout=WITHIN_A_SECOND)
    expect(board.card("alice")).to_contain_text("src/api/**")
    expect(board.card("alice").locator(".area")).to_have_text("api")
    expect(board.card("alice").locator(".beat")).to_contain_text("heartbeat")

    board.checkin("bob", ["src/**/*.ts", "docs/*.md"])
    pair = page.locator("#conflicts li.pair")
    expect(pair).to_have_count(1, timeout=WITHIN_A_SECOND)
    expect(pair).to_contain_text("bob")
    expect(pair).to_contain_text("alice")
    example = pair.locator(".example").inner_text()
    assert example.startswith("src/api/") and example.endswith(".ts"), example
    expect(board.card("alice").locator(".flag")).to_have_text("conflict")
    expect(board.card("bob").locator(".flag")).to_have_text("conflict")

    carol = board.checkin("carol", ["web/**"], area="ui")
    r = board.call(
        "POST",
        "/api/v1/status",
        token=carol["session_token"],
        json={"status_text": "styling the settings page"},
    )
    assert r.status_code == 200, r.text
    expect(board.card("carol").locator(".status-text")).to_have_text(
        "styling the settings page", timeout=WITHIN_A_SECOND
    )
    expect(board.card("carol").locator(".flag")).to_have_count(0)
    expect(page.locator("#agents-count")).to_have_text("3")
    page.wait_for_timeout(1200)  # let the heartbeat ages tick once for the picture
    _screenshot(board, tmp_path, "dashboard.png", docs=True)

    board.checkout(alice)
    expect(board.card("alice")).to_have_attribute("data-state", "leaving", timeout=WITHIN_A_SECOND)
    expect(page.locator('#feed li[data-type="agent.checkout"]')).to_contain_text(
        "alice-1 checked out"
    )
    expect(pair).to_have_count(0, timeout=WITHIN_A_SECOND)
    expect(board.card("alice")).to_have_count(0, timeout=3000)
    expect(page.locator("#agents-count")).to_have_text("2")

    types = page.locator("#feed li[data-type]").evaluate_all(
        "items => items.map(i => i.dataset.type).reverse()"
    )
    assert types == [
        "agent.checkin",
        "agent.checkin",
        "agent.conflict",
        "agent.checkin",
        "agent.status",
        "agent.checkout",
    ]


def test_stale_is_two_intervals_late_and_a_heartbeating_agent_never_is(open_board: Any) -> None:
    # Interval 1 s: a card is stale once its next beat is more than 2 intervals late (no
    # beat for 3 s), and the TTL (6 s) runs out after that.
    board = open_board(heartbeat_interval_seconds=1, heartbeat_ttl_seconds=6)
    board.log_in()
    quiet = board.checkin("quiet", ["a/**"])
    busy = board.checkin("busy", ["b/**"])
    started = time.monotonic()
    card = board.card("quiet")
    expect(card).to_have_attribute("data-state", "fresh", timeout=WITHIN_A_SECOND)

    # "busy" heartbeats every second; "quiet" sends nothing, turns stale, then times out.
    stale_at = None
    busy_states: list[str | None] = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and card.count():
        r = board.call("POST", "/api/v1/heartbeat", token=busy["session_token"])
        assert r.status_code == 200, r.text
        busy_states.append(board.card("busy").get_attribute("data-state"))
        state = card.get_attribute("data-state") if card.count() else None
        if state == "stale" and stale_at is None:
            stale_at = time.monotonic() - started
            # No fading: the text keeps its contrast; the words and the edge say it.
            assert float(card.evaluate("c => getComputedStyle(c).opacity")) == 1
            expect(card.locator(".beat")).to_contain_text("stale")
            # The "stale" filter shows it alone.
            board.page.locator("#f-stale").check()
            expect(board.page.locator("#agents li.card")).to_have_count(1)
            expect(card).to_be_visible()
            board.page.locator("#f-stale").uncheck()
            expect(board.page.locator("#agents li.card")).to_have_count(2)
        board.page.wait_for_timeout(250)
    assert stale_at is not None, "the silent agent never showed as stale"
    assert stale_at >= 2.5, f"stale after {stale_at:.1f} s: before two intervals were missed"
    expect(card).to_have_count(0, timeout=3000)
    expect(board.page.locator('#feed li[data-type="agent.timeout"]')).to_contain_text(
        "quiet-1 timed out"
    )
    # The heartbeating agent stayed fresh in every sample.
    assert busy_states and set(busy_states) == {"fresh"}, busy_states
    assert quiet["session_id"] != busy["session_id"]
    # It is listed as recently left.
    expect(board.page.locator("#left")).to_contain_text("quiet")
    expect(board.page.locator("#left")).to_contain_text("timed out")


def test_server_restart_is_survived_and_missed_events_arrive_once(
    open_board: Any, shared_server: Any
) -> None:
    board = open_board(own_server=True)
    board.log_in()
    page = board.page
    alice = board.checkin("alice", ["src/api/**"])
    expect(board.card("alice")).to_be_visible(timeout=WITHIN_A_SECOND)

    board.server.stop()
    expect(page.locator("#conn")).to_have_attribute("data-state", "reconnecting", timeout=5000)
    expect(page.locator("#conn-text")).to_contain_text("reconnecting")
    # Meanwhile another process on the same database changes things: the dashboard must
    # catch up on them from the event log once its own server is back.
    other = Board(server=shared_server, key=board.key, page=None, errors=[])
    other.checkin("carol", ["web/**"])
    other.checkout(alice)

    board.server.start()
    expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=15_000)
    expect(board.card("carol")).to_be_visible(timeout=WITHIN_A_SECOND)
    expect(board.card("alice")).to_have_count(0, timeout=3000)
    expect(page.locator("#feed li.note").first).to_contain_text("caught up")
    # The events replayed after the drop stand above the "connection lost" note.
    order = page.locator("#feed li").evaluate_all(
        "items => items.map(i => i.dataset.note !== undefined ? i.textContent : i.dataset.type)"
    )
    lost = next(i for i, x in enumerate(order) if "Connection lost" in x)
    assert order.index("agent.checkout") < lost, order

    board.checkin("dave", ["docs/**"])
    expect(board.card("dave")).to_be_visible(timeout=WITHIN_A_SECOND)
    offsets = board.feed_offsets()
    assert len(offsets) == len(set(offsets)), f"an event was shown twice: {offsets}"
    assert sorted(offsets) == list(range(1, max(offsets) + 1)), offsets
    assert offsets == sorted(offsets, reverse=True)


def test_key_is_asked_once_and_the_board_works_by_keyboard_on_a_phone(
    open_board: Any, tmp_path: Path
) -> None:
    board = open_board(viewport=PHONE)
    page = board.page
    page.goto(board.server.url)
    expect(page.locator("#api-key")).to_be_focused()

    page.keyboard.type("alk_not-a-real-key")
    page.keyboard.press("Enter")
    expect(page.locator("#login-error")).to_contain_text("refused")
    expect(page.locator("#main")).to_be_hidden()

    page.locator("#api-key").fill(board.key)
    page.keyboard.press("Tab")
    expect(page.locator("#login-form button")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#conn")).to_have_attribute("data-state", "live")

    board.checkin("alice", ["src/api/**"], area="api")
    board.checkin("bob-with-a-rather-long-name", ["src/**/*.ts", "a/very/long/" * 6 + "path/**"])
    expect(page.locator("#conflicts li.pair")).to_have_count(1, timeout=WITHIN_A_SECOND)
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways at 390 px ({width} px wide)"
    _screenshot(board, tmp_path, "dashboard-390.png")

    # The key is kept for this tab: a reload goes straight to the board.
    page.reload()
    expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    expect(page.locator("#login")).to_be_hidden()
    expect(page.locator("#conflicts li.pair")).to_have_count(1)  # recomputed after a snapshot

    # Keyboard: the skip link comes first, the feed filter and the forget button are reachable.
    page.locator("body").focus()
    page.keyboard.press("Tab")
    expect(page.locator("a.skip")).to_be_focused()
    page.locator("#feed-filter").focus()
    page.keyboard.press("ArrowDown")  # "agents" (Chromium changes a closed select with arrows)
    expect(page.locator('#feed li[data-type="agent.checkin"]').first).to_be_visible()
    page.locator("#feed-filter").select_option("task.")
    expect(page.locator('#feed li[data-type="agent.checkin"]').first).to_be_hidden()
    page.locator("#forget").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#login")).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('agentlanes.apiKey')") is None


def test_coordination_panels_follow_the_server(open_board: Any) -> None:
    board = open_board(heartbeat_interval_seconds=1, heartbeat_ttl_seconds=6)
    board.log_in()
    page = board.page
    panels = ("#panel-tasks", "#panel-leases", "#panel-votes")
    if board.call("GET", "/api/v1/tasks").status_code == 404:
        # A server without the coordination endpoints: the panels say so.
        for panel in panels:
            expect(page.locator(panel)).to_have_attribute("data-available", "no")
            expect(page.locator(f"{panel} .unavailable")).to_have_text(
                "Not available on this server."
            )
        return
    for panel in panels:
        expect(page.locator(panel)).to_have_attribute("data-available", "yes")
        expect(page.locator(f"{panel} .unavailable")).to_be_hidden()

    alice = board.checkin("alice", ["src/api/**"])
    bob = board.checkin("bob", ["web/**"])
    eve = board.checkin("eve", ["lib/**"])

    def post(path: str, who: dict[str, Any], body: dict[str, Any] | None = None) -> Any:
        r = board.call("POST", path, token=who["session_token"], json=body or {})
        assert r.status_code in (200, 201), r.text
        return r.json()

    task = post("/api/v1/tasks", alice, {"title": "Write the docs", "paths": ["docs/**"]})
    expect(page.locator(f'[data-list="ready"] [data-task="{task["task_id"]}"]')).to_contain_text(
        "Write the docs", timeout=WITHIN_A_SECOND
    )
    post(f"/api/v1/tasks/{task['task_id']}/claim", eve)
    claimed = page.locator(f'[data-list="claimed"] [data-task="{task["task_id"]}"]')
    expect(claimed).to_contain_text("by eve", timeout=WITHIN_A_SECOND)
    expect(page.locator(f'[data-list="ready"] [data-task="{task["task_id"]}"]')).to_have_count(0)

    post("/api/v1/leases", alice, {"resource": "deploy:prod"})
    lease = page.locator('#leases li[data-resource="deploy:prod"]')
    expect(lease).to_contain_text("alice", timeout=WITHIN_A_SECOND)
    expect(page.locator("#leases-count")).to_have_text("1")

    vote = post(
        "/api/v1/consensus", alice, {"action": "merge", "subject": "PR 7", "reason": "tests pass"}
    )
    request = page.locator(f'#votes li[data-consensus="{vote["consensus_id"]}"]')
    expect(request).to_contain_text("merge PR 7", timeout=WITHIN_A_SECOND)
    expect(request).to_contain_text("0/2 for")
    post(f"/api/v1/consensus/{vote['consensus_id']}/vote", bob, {"vote": "approve"})
    expect(request).to_contain_text("1/2 for", timeout=WITHIN_A_SECOND)
    expect(request).to_contain_text("pending")

    # Everyone goes quiet: eve's claim goes stale and alice's lease ends with her session.
    stale = page.locator(f'[data-list="stale"] [data-task="{task["task_id"]}"]')
    expect(stale).to_contain_text("eve", timeout=10_000)
    expect(claimed).to_have_count(0)
    expect(lease).to_have_count(0, timeout=3000)
    expect(page.locator('#feed li[data-type="task.stale"]')).to_have_count(1)


BASE = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"  # one blob id: both edited the same HEAD
RED = "rgb(255, 146, 137)"  # --bad
GREY = "rgb(167, 177, 188)"  # --muted
RAISED = "rgb(29, 36, 45)"  # --raised: a muted row's background


def _edit(board: Board, session: dict[str, Any], path: str, *ranges: list[int]) -> None:
    """Report an edit as the agent side does after each change (a status with edits)."""
    body = {"edits": [{"path": path, "base": BASE, "ranges": list(ranges)}]}
    r = board.call("POST", "/api/v1/status", token=session["session_token"], json=body)
    assert r.status_code == 200, r.text


def test_a_pair_shows_whether_its_edits_meet(open_board: Any, tmp_path: Path) -> None:
    board = open_board()
    board.log_in()
    page = board.page
    # A claims-only pair that the server lists first (older sessions, same certainty).
    board.checkin("abe", ["lib/util.py"])
    board.checkin("amy", ["lib/util.py"])
    zed = board.checkin("zed", ["src/app.py"])
    yan = board.checkin("yan", ["src/app.py"])
    pairs = page.locator("#conflicts .certain li.pair")
    expect(pairs).to_have_count(2, timeout=WITHIN_A_SECOND)
    edited = page.locator('#conflicts li.pair[data-pair="zed|yan"]')
    expect(edited).to_have_attribute("data-grade", "claims")

    # Both edit the file far apart: git merges them; the pair says so, muted.
    _edit(board, zed, "src/app.py", [10, 12])
    _edit(board, yan, "src/app.py", [80, 85])
    expect(edited).to_have_attribute("data-grade", "file", timeout=WITHIN_A_SECOND)
    badge = edited.locator(".grade")
    expect(badge).to_contain_text("file: git merges it")
    assert badge.evaluate("b => getComputedStyle(b).color") == GREY
    assert edited.evaluate("p => getComputedStyle(p).backgroundColor") == RAISED
    # The card counts the files edited; the paths are on hover.
    edits = board.card("zed").locator(".edits")
    expect(edits).to_have_text("edited 1 file")
    expect(edits).to_have_attribute("title", "src/app.py")
    expect(board.card("zed").locator(".flag")).to_have_text("conflict")
    _screenshot(board, tmp_path, "dashboard-grade-file.png")
    assert axe_violations(page) == []  # the muted grade keeps its contrast

    # Now their edits meet (yan's range touches zed's): a merge conflict ahead, and it
    # stands out, first among the certain pairs.
    _edit(board, yan, "src/app.py", [13, 20])
    expect(edited).to_have_attribute("data-grade", "lines", timeout=WITHIN_A_SECOND)
    expect(badge).to_contain_text("lines: merge conflict ahead")
    expect(badge).to_contain_text("src/app.py")
    assert badge.evaluate("b => getComputedStyle(b).backgroundColor") == RED
    assert edited.evaluate("p => getComputedStyle(p).borderLeftColor") == RED
    assert pairs.first.get_attribute("data-pair") == "zed|yan"
    expect(board.card("zed").locator(".flag")).to_have_text("edits meet")
    expect(page.locator("#announcer")).to_have_text(
        "Edits meet, a merge conflict ahead: yan and zed at src/app.py."
    )
    expect(board.card("abe").locator(".flag")).to_have_text("conflict")
    claims = page.locator('#conflicts li.pair[data-pair="abe|amy"]')
    expect(claims).to_have_attribute("data-grade", "claims")
    expect(claims.locator(".grade")).to_have_count(0)
    line = page.locator('#feed li[data-type="agent.conflict"]').first
    expect(line).to_contain_text("yan overlaps zed")
    expect(line).to_contain_text("lines: merge conflict ahead")
    assert line.locator(".text").evaluate("t => getComputedStyle(t).color") == RED
    # The focus lists the files the agent edited and the HEAD lines each change replaces.
    board.card("zed").locator("button[data-select]").click()
    expect(page.locator("#focus")).to_contain_text("Edited files (1)")
    edited_file = page.locator('#focus li[data-path="src/app.py"]')
    expect(edited_file).to_have_text("src/app.py lines 10\u201312")  # an en dash
    expect(page.locator('#focus .row[data-grade="lines"] .grade')).to_contain_text("lines:")
    _screenshot(board, tmp_path, "dashboard-grades.png")
    assert axe_violations(page) == []

    # A new file and pure insertions (git's [a+1, a]) read as such.
    more = [
        {"path": "docs/new.md", "base": None, "ranges": [[1, 0]]},
        {"path": "src/util.py", "base": BASE, "ranges": [[1, 0], [7, 6], [30, 30]]},
    ]
    r = board.call("POST", "/api/v1/status", token=zed["session_token"], json={"edits": more})
    assert r.status_code == 200, r.text
    expect(edits).to_have_text("edited 3 files", timeout=WITHIN_A_SECOND)
    expect(edits).to_have_attribute("title", "docs/new.md\nsrc/app.py\nsrc/util.py")
    expect(page.locator('#focus li[data-path="docs/new.md"]')).to_have_text("docs/new.md new file")
    expect(page.locator('#focus li[data-path="src/util.py"]')).to_have_text(
        "src/util.py at the top, after line 6, line 30"
    )


def test_a_hotspot_whose_edits_meet_comes_first_and_opens_on_them(open_board: Any) -> None:
    board = open_board()
    board.log_in()
    page = board.page
    # A bigger hotspot of claims only (listed first by size), then a smaller one.
    board.checkin("hub", ["lib/**"])
    for name in ("l1", "l2", "l3"):
        board.checkin(name, [f"lib/{name}.py"])
    lint = board.checkin("lint", ["src/**"])
    board.checkin("ann", ["src/a.py"])
    bob = board.checkin("bob", ["src/b.py"])
    groups = page.locator("#conflicts .certain details.group")
    expect(groups).to_have_count(2, timeout=WITHIN_A_SECOND)
    expect(groups.first.locator(".hot")).to_have_text("hub overlaps 3 agents")

    _edit(board, lint, "src/b.py", [5, 9])
    _edit(board, bob, "src/b.py", [9, 12])
    smaller = groups.filter(has_text="lint overlaps 2 agents")
    expect(smaller).to_have_attribute("data-lines", "1", timeout=WITHIN_A_SECOND)
    expect(groups.first.locator(".hot")).to_have_text("lint overlaps 2 agents")
    badge = smaller.locator("summary .grade.lines")
    expect(badge).to_have_text("lines: 1 merge conflict ahead")
    assert badge.evaluate("b => getComputedStyle(b).backgroundColor") == RED
    assert smaller.evaluate("g => getComputedStyle(g).borderLeftColor") == RED
    # Opened, it lists the pair whose edits meet first.
    smaller.locator("summary").click()
    rows = smaller.locator("li.pair")
    expect(rows).to_have_count(2)
    assert rows.first.get_attribute("data-pair") == "lint|bob"
    expect(rows.first).to_have_attribute("data-grade", "lines")
    expect(rows.nth(1)).to_have_attribute("data-grade", "claims")


def test_a_pair_whose_edits_git_merges_goes_after_the_claim_overlaps(open_board: Any) -> None:
    board = open_board()
    board.log_in()
    page = board.page
    fay = board.checkin("fay", ["web/x.js"])
    gus = board.checkin("gus", ["web/x.js"])
    board.checkin("ida", ["web/y.js"])
    board.checkin("jon", ["web/y.js"])
    pairs = page.locator("#conflicts .certain li.pair")
    expect(pairs).to_have_count(2, timeout=WITHIN_A_SECOND)
    expect(pairs.first).to_have_attribute("data-pair", "fay|gus")  # the older pair

    _edit(board, fay, "web/x.js", [1, 3])
    _edit(board, gus, "web/x.js", [40, 44])
    expect(pairs.nth(1)).to_have_attribute("data-pair", "fay|gus", timeout=WITHIN_A_SECOND)
    expect(pairs.nth(1)).to_have_attribute("data-grade", "file")
    expect(pairs.first).to_have_attribute("data-pair", "ida|jon")
