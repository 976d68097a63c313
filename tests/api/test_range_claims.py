"""SPEC "Line-level claims", the server's side of ``digests`` (identical changes) and of
range claims (``claims: [{path, base, ranges, symbol?}]`` in check-in and status)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api

BASE = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
SAME = "0123456789abcdef"
OTHER = "fedcba9876543210"


def edit(api: Api, token: str, path: str, ranges: list[list[int]], digests: Any = None) -> Any:
    item: dict[str, Any] = {"path": path, "base": BASE, "ranges": ranges}
    if digests is not None:
        item["digests"] = digests
    return api.post("/status", {"edits": [item]}, token=token)


def only(conflicts: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(conflicts) == 1, conflicts
    return conflicts[0]


# -- digests -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mine", "theirs", "grade"),
    [
        ([SAME, OTHER], [SAME, OTHER], "file"),  # the same two changes: git takes them once
        ([SAME, OTHER], [SAME, SAME], "lines"),  # the second differs
        ([SAME, None], [SAME, None], "lines"),  # a digest not known: cautious
        (None, [SAME, OTHER], "lines"),  # none sent: as before
    ],
)
def test_identical_changes_do_not_meet_and_different_text_does(
    api: Api, mine: Any, theirs: Any, grade: str
) -> None:
    alice = api.checkin(agent_name="alice", declared_files=["src/app.py"])
    bob = api.checkin(agent_name="bob", declared_files=["src/app.py"])
    edit(api, alice["session_token"], "src/app.py", [[10, 12], [20, 19]], theirs)
    # In another order: each digest goes with its range.
    backwards = None if mine is None else mine[::-1]
    r = edit(api, bob["session_token"], "src/app.py", [[20, 19], [10, 12]], backwards)
    assert r.status_code == 200, r.text
    c = only(r.json()["conflicts"])
    assert c["grade"] == grade, c
    # Kept in the order of the ranges (sorted with them), shown and carried by the events.
    if mine is not None:
        (shown,) = r.json()["edits"]
        assert shown["ranges"] == [[10, 12], [20, 19]] and shown["digests"] == mine
        (live,) = [s for s in api.get("/presence").json()["sessions"] if s["agent_name"] == "bob"]
        assert live["edits"] == [shown]


def test_digests_survive_the_projection_being_rebuilt(api: Api) -> None:
    """The event's view and the stored row both keep them: a new process (here: the
    projection dropped) grades the same."""
    alice = api.checkin(agent_name="alice", declared_files=["a.py"])
    bob = api.checkin(agent_name="bob", declared_files=["a.py"])
    edit(api, alice["session_token"], "a.py", [[5, 6]], [SAME])
    edit(api, bob["session_token"], "a.py", [[5, 6]], [SAME])
    projections = api.client.app.state.ctx.projections
    for project_id in projections.project_ids():
        projections.forget(project_id)
    c = only(api.get(f"/sessions/{bob['session_id']}/conflicts").json()["conflicts"])
    assert c["grade"] == "file"


@pytest.mark.parametrize(
    "digests",
    [
        [SAME],  # one for two ranges
        [SAME, SAME, SAME],
        "0123456789abcdef",
        [SAME, "XYZ0123456789abc"],
        [SAME, "abc"],  # too short
        [SAME, "a" * 65],
        [SAME, 12345678],
    ],
)
def test_bad_digests_are_refused_naming_the_field(api: Api, digests: Any) -> None:
    alice = api.checkin(agent_name="alice", declared_files=["src/**"])
    before = api.get("/presence").json()["sessions"]
    for path in ("/status", "/conflicts/check"):
        body = {"edits": [{"path": "a.py", "base": BASE, "ranges": [[1, 1], [5, 5]]}]}
        body["edits"][0]["digests"] = digests
        r = api.post(path, body, token=alice["session_token"])
        assert r.status_code == 400, r.text
        assert r.json()["field"] == "edits" and "digest" in r.text
    assert api.get("/presence").json()["sessions"] == before
