"""The dashboard with a swarm: hotspots, the claimed-path tree, focus and history, messages
and tasks in full, honest liveness and accessibility (axe-core), in real Chromium against
a real server process."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import DESKTOP, PHONE, Board
from tests.browser.swarm import check_in, coordinate

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails) with the reason
    expect = None

SCREENSHOTS = os.environ.get("AGENTLANES_TEST_SCREENSHOTS")
WITHIN_A_SECOND = 1000


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is (WCAG 2 A/AA rules, contrast included)."""
    import axe_playwright_python

    # The page at rest: a card fading out after a checkout is on its way out, not a state
    # anyone reads (it is removed when its fade ends).
    page.evaluate("Promise.all(document.getAnimations().map(a => a.finished.catch(() => null)))")
    page.wait_for_timeout(150)
    script = Path(axe_playwright_python.__file__).with_name("axe.min.js")
    # Evaluated through the DevTools protocol: the page's CSP refuses an injected <script>.
    page.evaluate(script.read_text())
    result = page.evaluate(
        """async () => await axe.run(document, {
            runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa',
                                            'best-practice']},
            resultTypes: ['violations'],
        })"""
    )
    return [
        {
            "id": v["id"],
            "help": v["help"],
            "nodes": [n["target"] for n in v["nodes"]][:5],
            "summary": v["nodes"][0].get("failureSummary", "") if v["nodes"] else "",
        }
        for v in result["violations"]
    ]


def _shot(board: Board, tmp_path: Path, name: str) -> None:
    board.page.screenshot(path=str(tmp_path / name), full_page=True)
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        board.page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=True)


def _swarm(board: Board, n: int = 30) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    sessions = check_in(board.call, n)
    extra = coordinate(board.call, sessions)
    return sessions, extra


def _server_pairs(board: Board) -> dict[str, Any]:
    r = board.call("GET", "/api/v1/conflicts")
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_login_page_has_no_accessibility_violations(open_board: Any) -> None:
    board = open_board()
    board.page.goto(board.server.url)
    expect(board.page.locator("#api-key")).to_be_focused()
    assert axe_violations(board.page) == []


def test_thirty_agents_read_as_hotspots_with_their_partners(
    open_board: Any, tmp_path: Path
) -> None:
    board = open_board()
    board.log_in()
    page = board.page
    sessions, extra = _swarm(board)
    expect(page.locator("#agents-count")).to_have_text("30", timeout=5000)
    server = _server_pairs(board)
    expect(page.locator("#conflicts-count")).to_have_text(str(server["total"]), timeout=5000)
    hub = server["agents"][0]
    assert hub["agent_name"] == "claude-lint-1" and hub["partners"] >= 15

    # The hotspot is one row that opens onto its pairs.
    row = page.locator("#conflicts details.group").filter(has_text="claude-lint-1 overlaps")
    expect(row).to_have_count(1)
    expect(row.locator("summary")).to_contain_text(re.compile(r"claude-lint-1 overlaps \d+ agents"))
    expect(row.locator("li.pair")).to_have_count(0)  # drawn when opened
    row.locator("summary").click()
    expect(row.locator("li.pair").first).to_be_visible()
    assert row.locator("li.pair").count() >= 10
    expect(row.locator("li.pair").first.locator(".example")).to_contain_text(".py")
    # Grouped by path instead.
    page.locator("#conflicts-group").select_option("path")
    expect(page.locator("#conflicts details.group summary").first).to_contain_text("pairs")
    page.locator("#conflicts-group").select_option("agent")

    # Cards name their partners; a card in no pair has no flag.
    lint = board.card("claude-lint-1")
    expect(lint.locator(".flag")).to_have_text("conflict")
    expect(lint.locator(".partners")).to_contain_text("overlaps")
    expect(board.card("claude-api-1").locator(".partners")).to_contain_text("claude-lint-1")
    expect(board.card("claude-docs-3").locator(".flag")).to_have_count(0)

    # The conflicts and agents panels scroll on their own: the rest stays on the page.
    tasks_top = page.locator("#panel-tasks").evaluate("e => e.getBoundingClientRect().top")
    assert tasks_top < 2000, f"the task board starts {tasks_top:.0f} px down"
    scroll = page.locator("#conflicts-scroll")
    assert scroll.evaluate("e => e.scrollHeight > e.clientHeight") or server["total"] < 20

    # Messages in full, with threads and read/ack state; every task state with reasons.
    messages = page.locator("#messages")
    expect(messages).to_contain_text("Can you take the login redirect?", timeout=3000)
    thread = messages.locator('li.thread[data-thread="login-redirect"]')
    expect(thread.locator("li.message")).to_have_count(2)
    expect(thread).to_contain_text("acknowledged by")
    expect(messages).to_contain_text("read by claude-api-1")
    board_tasks = page.locator("#panel-tasks")
    expect(board_tasks.locator('[data-list="ready"]')).to_contain_text("Design the schema")
    waiting = board_tasks.locator('[data-list="waiting"]')
    expect(waiting).to_contain_text("needs “Design the schema” (pending)")
    expect(waiting).to_contain_text("gate “QA sign-off” pending")
    expect(waiting.locator("li").filter(has_text="Refactor the API models")).to_contain_text(
        "paths claimed by"
    )
    expect(board_tasks.locator('[data-list="claimed"]')).to_contain_text("Fix the login redirect")
    expect(board_tasks.locator('[data-list="done"]')).to_contain_text("Bump the linter")
    expect(page.locator('#leases li[data-resource="deploy:staging"] .left')).to_contain_text("left")
    expect(page.locator("#votes li.status-pending")).to_contain_text("closes in")

    # The picture shows a focused agent (its task, lease, messages, timeline) and the
    # claimants of a directory, too.
    worker = extra["worker"]["agent_name"]
    board.card(worker).locator("button[data-select]").click()
    expect(page.locator("#focus ol.timeline li").first).to_be_visible(timeout=3000)
    expect(page.locator("#focus")).to_contain_text("Fix the login redirect")
    expect(page.locator("#focus")).to_contain_text("db:migrations")
    page.locator('button[data-toggle="src"]').click()
    page.locator('button[data-node="src/api"]').click()
    # The tree names claimants by their display names (claude-1 for claude-lint-1).
    shown = next(s for s in sessions if s["agent_name"] == "claude-lint-1")["display_name"]
    assert shown != "claude-lint-1"
    claimant = page.locator("#tree-detail").get_by_role("button", name=shown, exact=True)
    expect(claimant).to_have_count(1)
    page.wait_for_timeout(1200)
    assert axe_violations(page) == []
    _shot(board, tmp_path, "dashboard-30.png")

    # 390 px: one column, nothing wider than the screen, still no violations.
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways at 390 px ({width} px wide)"
    assert axe_violations(page) == []
    _shot(board, tmp_path, "dashboard-30-narrow.png")
    page.set_viewport_size(DESKTOP)
    assert len(sessions) == 30


def test_tree_shows_claimed_paths_red_where_two_claim_and_names_claimants(
    open_board: Any,
) -> None:
    board = open_board()
    board.log_in()
    page = board.page
    board.checkin("alice", ["src/api/**"])
    board.checkin("bob", ["src/api/models.py", "docs/*.md"])
    board.checkin("carol", ["web/**"])
    tree = page.locator("#tree")
    expect(tree.locator('li[data-path="src"]')).to_contain_text("2 agents", timeout=3000)
    expect(tree.locator('li[data-path=""]')).to_contain_text("3 agents")
    # src/api is claimed by alice; its models.py by bob too (alice reaches it from above).
    page.locator('button[data-toggle="src"]').click()
    page.locator('button[data-toggle="src/api"]').click()
    hot = tree.locator('li[data-path="src/api/models.py"]')
    expect(hot).to_have_class(re.compile(r"\bhot\b"))
    expect(tree.locator('li[data-path="web"]')).not_to_have_class(re.compile(r"\bhot\b"))
    hot.locator("button.node-name").click()
    detail = page.locator("#tree-detail")
    expect(detail).to_contain_text("alice")
    expect(detail).to_contain_text("bob")
    expect(detail).to_contain_text("(from above)")
    # Choosing a claimant focuses it.
    detail.locator("button", has_text="alice").click()
    expect(page.locator("#focus .focus-who")).to_contain_text("alice")
    # A checkout empties its claims from the tree.
    board.checkin("carol", ["lib/**"])  # superseded: carol's web/** goes
    expect(tree.locator('li[data-path="web"]')).to_have_count(0, timeout=3000)


def test_filters_focus_timeline_and_recently_left(open_board: Any) -> None:
    board = open_board()
    board.log_in()
    page = board.page
    alice = board.checkin("alice", ["src/api/**"], area="api")
    board.checkin("bob", ["src/**/*.ts"])
    board.checkin("carol", ["web/**"], area="ui")
    expect(page.locator("#conflicts-count")).to_have_text("1", timeout=3000)

    # Filters: by name, by area, by conflict.
    page.locator("#f-agent").fill("car")
    expect(page.locator("#agents li.card")).to_have_count(1)
    expect(board.card("carol")).to_be_visible()
    page.locator("#f-clear").click()
    expect(page.locator("#agents li.card")).to_have_count(3)
    page.locator("#f-area").select_option("api")
    expect(page.locator("#agents li.card")).to_have_count(1)
    page.locator("#f-area").select_option("")
    page.locator("#f-conflicted").check()
    expect(page.locator("#agents li.card")).to_have_count(2)
    expect(board.card("carol")).to_have_count(0)
    page.locator("#f-conflicted").uncheck()

    # A scope change, a message and a lease, then select alice.
    r = board.call(
        "POST",
        "/api/v1/status",
        token=alice["session_token"],
        json={"declared_files": ["src/api/**", "docs/api.md"], "status_text": "writing docs"},
    )
    assert r.status_code == 200, r.text
    r = board.call(
        "POST",
        "/api/v1/messages",
        token=alice["session_token"],
        json={"to": "bob", "body": "please leave src/api alone"},
    )
    assert r.status_code == 201, r.text
    r = board.call(
        "POST", "/api/v1/leases", token=alice["session_token"], json={"resource": "deploy:prod"}
    )
    assert r.status_code in (200, 201), r.text
    r = board.call(
        "POST", "/api/v1/tasks", token=alice["session_token"], json={"title": "Document the API"}
    )
    assert r.status_code == 201, r.text
    r = board.call(
        "POST", f"/api/v1/tasks/{r.json()['task_id']}/claim", token=alice["session_token"]
    )
    assert r.status_code == 200, r.text
    expect(page.locator('#leases li[data-resource="deploy:prod"]')).to_be_visible(timeout=3000)
    board.card("alice").locator("button[data-select]").click()
    focus = page.locator("#focus")
    expect(focus.locator(".focus-who")).to_contain_text("alice")
    expect(focus).to_contain_text("Overlaps (1)")
    expect(focus).to_contain_text("bob")
    expect(focus).to_contain_text("deploy:prod")
    expect(focus).to_contain_text("please leave src/api alone")
    timeline = focus.locator("ol.timeline")
    expect(timeline.locator('li[data-type="agent.checkin"]')).to_have_count(1, timeout=3000)
    expect(timeline.locator('li[data-type="agent.status"]')).to_contain_text("docs/api.md")
    expect(timeline.locator('li[data-type="agent.conflict"]')).not_to_have_count(0)
    expect(timeline.locator('li[data-type="message.created"]')).to_contain_text("please leave")
    expect(timeline.locator('li[data-type="task.claimed"]')).to_contain_text("Document the API")
    expect(focus).to_contain_text("Document the API (claimed)")
    # Its rows stand out in the other panels.
    outline = page.locator("#conflicts li.pair").evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline == "solid"
    lease_outline = page.locator('#leases li[data-resource="deploy:prod"]').evaluate(
        "e => getComputedStyle(e).outlineStyle"
    )
    assert lease_outline == "solid"
    carol_outline = board.card("carol").evaluate("e => getComputedStyle(e).outlineStyle")
    assert carol_outline != "solid"

    # Checkout with a summary: it shows in "recently left" and in the timeline.
    r = board.call(
        "POST",
        "/api/v1/checkout",
        token=alice["session_token"],
        json={
            "outcome_status": "completed",
            "work_summary": "documented the API",
            "files_touched": ["docs/api.md", "src/api/app.py"],
        },
    )
    assert r.status_code == 200, r.text
    left = page.locator("#left")
    expect(left).to_contain_text("alice", timeout=WITHIN_A_SECOND)
    expect(left).to_contain_text("checked out (completed)")
    expect(left).to_contain_text("2 files touched")
    expect(left).to_contain_text("documented the API")
    checkout = timeline.locator('li[data-type="agent.checkout"]')
    expect(checkout).to_contain_text("documented the API", timeout=3000)
    expect(checkout).to_contain_text("src/api/app.py")
    # A session that left can still be opened from the list.
    page.locator("#focus-close").click()
    left.locator("button", has_text="alice").click()
    expect(focus.locator(".focus-who")).to_contain_text("checked out")
    expect(focus.locator('ol.timeline li[data-type="agent.checkin"]')).to_have_count(
        1, timeout=3000
    )
    # Focus, timeline and "recently left" filled: still no accessibility violation.
    assert axe_violations(page) == []


def test_uncertain_overlaps_stand_apart_and_muted(open_board: Any) -> None:
    """`package.json` vs `**/*.py` overlap only if package.json were a directory. A server
    that says so (``certain: false``, ``if_directory``) gets them listed apart; one that
    does not yet (no ``certain`` field) has them counted as certain."""
    board = open_board()
    page = board.page
    board.checkin("lint", ["**/*.py"])
    board.checkin("infra", ["package.json"])
    board.checkin("api", ["src/api/**"])
    real = _server_pairs(board)
    by = {(p["a"]["agent_name"], p["b"]["agent_name"]): p for p in real["pairs"]}
    server_knows = "certain" in by[("lint", "infra")] and not by[("lint", "infra")]["certain"]

    def uncertain_answer(route: Any) -> None:
        # The answer of the real server, with the overlap fields a server that decides
        # certainty adds (SPEC "File patterns").
        answer = route.fetch().json()
        for pair in answer["pairs"]:
            names = {pair["a"]["agent_name"], pair["b"]["agent_name"]}
            if names == {"lint", "infra"}:
                pair["certain"] = False
                for f in pair["overlapping_files"]:
                    f["certain"] = False
                    f["if_directory"] = "package.json"
        for agent in answer["agents"]:
            if agent["agent_name"] in ("lint", "infra"):
                agent["certain_partners"] -= 1
        route.fulfill(json=answer)

    if not server_knows:
        page.route(re.compile(r".*/api/v1/conflicts\?.*"), uncertain_answer)
    board.log_in()
    certain = page.locator("#conflicts section.certain")
    uncertain = page.locator("#conflicts section.uncertain")
    expect(certain.locator("li.pair")).to_have_count(1, timeout=3000)
    expect(certain).to_contain_text("api")
    expect(uncertain.locator("li.pair")).to_have_count(1)
    expect(uncertain).to_contain_text("only if package.json is a directory")
    expect(uncertain.locator("h3")).to_contain_text("Only if a path is a directory")
    # Muted: no red flag on a card whose only overlap is uncertain.
    expect(board.card("infra").locator(".flag")).to_have_text("if dir")
    expect(board.card("infra")).not_to_have_class(re.compile(r"\bconflicted\b"))
    expect(board.card("api").locator(".flag")).to_have_text("conflict")
    assert axe_violations(page) == []


def test_countdowns_follow_the_clock_and_new_conflicts_are_announced(open_board: Any) -> None:
    board = open_board()
    board.log_in()
    page = board.page
    alice = board.checkin("alice", ["src/**"])
    r = board.call(
        "POST",
        "/api/v1/leases",
        token=alice["session_token"],
        json={"resource": "deploy:prod", "ttl_seconds": 40},
    )
    assert r.status_code in (200, 201), r.text
    expires = r.json()["expires_at"]
    left = page.locator('#leases li[data-resource="deploy:prod"] .left')
    expect(left).to_contain_text("left", timeout=3000)

    def reading() -> tuple[float, int]:
        # The text and the moment it is read, together in the page.
        now_ms, text = left.evaluate("e => [Date.now(), e.textContent]")
        m, sec = re.match(r"(\d+):(\d\d) left", text).groups()  # type: ignore[union-attr]
        return now_ms / 1000, int(m) * 60 + int(sec)

    readings = []
    for _ in range(4):
        readings.append(reading())
        page.wait_for_timeout(1000)
    # Each reading is the time left rounded up, from a tick at most a quarter second old:
    # never behind the expiry time, never more than 1.25 s ahead of it.
    end = datetime.fromisoformat(expires.replace("Z", "+00:00")).timestamp()
    for at, value in readings:
        assert -0.1 <= value - (end - at) <= 1.35, (end - at, value)
    assert readings[0][1] - readings[-1][1] >= 2, readings

    # A new conflict is read out politely.
    announcer = page.locator("#announcer")
    expect(announcer).to_have_attribute("aria-live", "polite")
    board.checkin("bob", ["src/api/**"])
    expect(announcer).to_contain_text("bob overlaps alice", timeout=2000)


def test_the_agent_list_is_virtualised_past_a_hundred_cards(open_board: Any) -> None:
    board = open_board()
    sessions = check_in(board.call, 150)
    board.log_in()
    page = board.page
    expect(page.locator("#agents-count")).to_have_text("150", timeout=5000)
    expect(page.locator("#agents")).to_have_class(re.compile(r"\bvirtual\b"))
    in_page = page.locator("#agents li.card").count()
    assert 0 < in_page < 80, f"{in_page} cards in the page for 150 agents"
    # Scrolling to the end brings the last agents in.
    page.locator("#agents-scroll").evaluate("e => { e.scrollTop = e.scrollHeight; }")
    expect(board.card("claude-cli-15")).to_be_visible(timeout=2000)
    expect(board.card("claude-lint-1")).to_have_count(0)
    # A filter down to a few switches back to full cards.
    page.locator("#f-agent").fill("claude-api-")
    expect(page.locator("#agents")).not_to_have_class(re.compile(r"\bvirtual\b"))
    expect(page.locator("#agents li.card")).to_have_count(15)
    # An event redraws only its own card.
    for name in ("claude-api-1", "claude-api-2"):
        board.card(name).evaluate("e => { e.firstElementChild.dataset.mark = 'old'; }")
    token = next(x for x in sessions if x["agent_name"] == "claude-api-2")["session_token"]
    r = board.call("POST", "/api/v1/status", token=token, json={"status_text": "busy"})
    assert r.status_code == 200, r.text
    expect(board.card("claude-api-2").locator(".status-text")).to_have_text(
        "busy", timeout=WITHIN_A_SECOND
    )
    marks = page.evaluate(
        "() => ['claude-api-1', 'claude-api-2'].map(n => document.querySelector("
        "`#agents li[data-agent='${n}']`).firstElementChild.dataset.mark || null)"
    )
    assert marks == ["old", None], marks


def test_feed_lines_read_old_and_new_event_shapes(open_board: Any) -> None:
    """Events are becoming small (SPEC "Events"): check-in and status carry
    ``conflicts_total``, agent.conflict a capped list with ``truncated``. Older servers sent
    full lists. The feed reads both."""
    board = open_board()
    board.page.goto(board.server.url)
    lines = board.page.evaluate(
        """async () => {
            const {describe} = await import('/static/feed.js');
            const session = {session_id: 's1', agent_name: 'carol', declared_files: ['src/**']};
            const conflict = (name, example, extra = {}) => ({
                session_id: name, agent_name: name, overlapping_area: false,
                overlapping_files: [{pattern: 'src/**', their_pattern: 'x', example, ...extra}]});
            return [
                describe({type: 'agent.checkin', data: {session, conflicts_total: 25}}),
                describe({type: 'agent.checkin', data: {session, conflicts: [conflict('a', 'x')]}}),
                describe({type: 'agent.conflict', data: {
                    agent_name: 'carol', conflicts_total: 25, truncated: true,
                    conflicts: [conflict('alice', 'src/a.py'), conflict('bob', 'src/b.py'),
                                conflict('dan', 'package.json/a.py',
                                         {certain: false, if_directory: 'package.json'})]}}),
                describe({type: 'agent.conflict', data: {
                    agent_name: 'carol',
                    conflicts: [conflict('alice', 'src/a.py'), conflict('bob', 'src/b.py')]}}),
            ];
        }"""
    )
    assert lines[0] == "carol checked in — src/** (overlaps 25)"
    assert lines[1] == "carol checked in — src/** (overlaps 1)"
    assert lines[2] == (
        "carol overlaps alice at src/a.py; bob at src/b.py; "
        "dan at package.json/a.py if package.json is a directory; and 22 more"
    )
    assert lines[3] == "carol overlaps alice at src/a.py; bob at src/b.py"
