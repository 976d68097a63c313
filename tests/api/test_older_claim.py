"""SPEC "The agents' side": the older claim stands. In ``block`` mode a change is refused
only because of a session that claimed the path earlier; a claim gained by an edit made
under ``warn`` never locks out the earlier claimant once the mode becomes ``block``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import ADMIN, Api, new_project


def set_mode(api: Api, mode: str) -> None:
    r = api.client.patch(
        f"/api/v1/projects/{api.project['slug']}", json={"conflict_mode": mode}, headers=ADMIN
    )
    assert r.status_code == 200, r.text


def warned_overlap(api: Api) -> tuple[dict[str, Any], dict[str, Any]]:
    """alice claims src/app.py; bob, checked in earlier, gains it by a warned edit."""
    bob = api.checkin(agent_name="bob", declared_files=["docs/**"])
    alice = api.checkin(agent_name="alice", declared_files=["src/app.py"])
    r = api.post(
        "/status", {"declared_files": ["docs/**", "src/app.py"]}, token=bob["session_token"]
    )
    assert r.status_code == 200 and r.json()["conflicts"][0]["agent_name"] == "alice", r.text
    set_mode(api, "block")
    return alice, bob


def test_the_earlier_claimant_keeps_working_after_warn_becomes_block(api: Api) -> None:
    alice, bob = warned_overlap(api)
    # alice widens her claims: bob's claim on src/app.py is younger than hers, so it
    # does not stand in her way (reported, not refused).
    r = api.post(
        "/status", {"declared_files": ["src/app.py", "src/util.py"]}, token=alice["session_token"]
    )
    assert r.status_code == 200, r.text
    assert [c["agent_name"] for c in r.json()["conflicts"]] == ["bob"]
    # bob, the later claimant of src/app.py, is refused a change while he overlaps her.
    r = api.post(
        "/status",
        {"declared_files": ["docs/**", "src/app.py", "lib/**"]},
        token=bob["session_token"],
    )
    assert r.status_code == 409, r.text
    assert r.json()["conflicts"][0]["agent_name"] == "alice"


def test_conflict_checks_say_when_each_claim_was_made(api: Api) -> None:
    warned_overlap(api)
    r = api.post("/conflicts/check", {"paths": ["src/app.py"]})
    assert r.status_code == 200, r.text
    since = {
        c["agent_name"]: c["overlapping_files"][0]["claimed_at"] for c in r.json()["conflicts"]
    }
    assert since["alice"] < since["bob"]
    # bob's other pattern dates from his check-in, before alice's.
    r = api.post("/conflicts/check", {"paths": ["docs/a.md"]})
    [docs] = r.json()["conflicts"]
    assert docs["overlapping_files"][0]["claimed_at"] < since["alice"]


def test_claim_times_survive_a_new_process(
    app_factory: Callable[..., TestClient[Any]], database_url: str
) -> None:
    first = new_project(app_factory(database_url=database_url))
    alice, _ = warned_overlap(first)
    # Another process builds its projection from the database: the same decision there.
    other = Api(app_factory(database_url=database_url), first.key, first.project)
    r = other.post(
        "/status", {"declared_files": ["src/app.py", "src/util.py"]}, token=alice["session_token"]
    )
    assert r.status_code == 200, r.text


def test_a_new_session_is_still_refused_on_any_older_claim(block_api: Api) -> None:
    block_api.checkin(agent_name="alice", declared_files=["src/app.py"])
    r = block_api.post("/checkin", {"agent_name": "bob", "declared_files": ["src/**"]})
    assert r.status_code == 409, r.text
