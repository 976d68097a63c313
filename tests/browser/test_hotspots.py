"""The dashboard's hotspots panel (SPEC "Waiting for a lane": hotspots): the paths most
refused and waited for, with their wait times, kept current as agents are refused, queue
and are granted, in real Chromium against a real server process."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_swarm_views import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails) with the reason
    expect = None


def test_hotspots_show_refusals_waits_and_their_times(open_board: Any) -> None:
    board = open_board(conflict_mode="block")
    board.log_in()
    page = board.page
    holder = board.checkin("holder", ["src/router.py"])
    expect(page.locator("#hotspots-count")).to_have_text("0")

    # A refused check-in writes no event: the next agent event brings it to the panel.
    r = board.call(
        "POST", "/api/v1/checkin", json={"agent_name": "late", "declared_files": ["src/router.py"]}
    )
    assert r.status_code == 409, r.text
    waiter = board.checkin("waiter", ["docs/**"])
    row = page.locator('#hotspots li[data-path="src/router.py"]')
    expect(row).to_contain_text("1 refused", timeout=5000)
    expect(page.locator("#hotspots-count")).to_have_text("1")

    # A wait, then its grant when the holder leaves: the wait and its time.
    q = board.call(
        "POST", "/api/v1/queue", token=waiter["session_token"], json={"paths": ["src/router.py"]}
    )
    assert q.status_code == 202, q.text
    expect(row).to_contain_text("1 waiting now", timeout=5000)
    board.checkout(holder)
    expect(row).to_contain_text("1 waited", timeout=5000)
    expect(row).not_to_contain_text("waiting now")
    expect(row).to_contain_text(" s on average")
    assert axe_violations(page) == []
