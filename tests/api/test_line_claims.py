"""SPEC "Line-level claims", the server's side: edits in a status change, the grade of
each conflict, ``block_on`` and ``line_margin`` as project settings, and bad edits refused."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import ADMIN, Api

BASE = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"


def settings(api: Api, **changes: Any) -> dict[str, Any]:
    r = api.client.patch(f"/api/v1/projects/{api.project['slug']}", json=changes, headers=ADMIN)
    assert r.status_code == 200, r.text
    return r.json()


def edit(api: Api, token: str, path: str, *ranges: list[int], base: str | None = BASE) -> Any:
    return api.post(
        "/status", {"edits": [{"path": path, "base": base, "ranges": list(ranges)}]}, token=token
    )


def two_editors(api: Api) -> tuple[dict[str, Any], dict[str, Any]]:
    alice = api.checkin(agent_name="alice", declared_files=["src/app.py"])
    bob = api.checkin(agent_name="bob", declared_files=["src/app.py"])
    return alice, bob


def only(conflicts: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(conflicts) == 1, conflicts
    return conflicts[0]


def test_an_edit_is_kept_shown_and_its_path_joins_the_claims(api: Api) -> None:
    alice = api.checkin(agent_name="alice", declared_files=["docs/**"])
    r = edit(api, alice["session_token"], "./src/app.py", [10, 12], [3, 2])
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["declared_files"] == ["docs/**", "src/app.py"]
    assert body["edits"] == [{"path": "src/app.py", "base": BASE, "ranges": [[3, 2], [10, 12]]}]
    (live,) = api.get("/presence").json()["sessions"]
    assert live["edits"] == body["edits"]
    # Another file's report leaves this one's; ranges [] drops it.
    edit(api, alice["session_token"], "docs/a.md", [1, 1])
    assert [e["path"] for e in api.get("/presence").json()["sessions"][0]["edits"]] == [
        "docs/a.md",
        "src/app.py",
    ]
    r = edit(api, alice["session_token"], "src/app.py")
    assert [e["path"] for e in r.json()["edits"]] == ["docs/a.md"]
    status = [e for e in api.events() if e["type"] == "agent.status"]
    assert status[-1]["data"]["session"]["edits"] == r.json()["edits"]


@pytest.mark.parametrize(
    ("mine", "theirs", "grade"),
    [
        ([[10, 12]], [[40, 41]], "file"),  # apart
        ([[10, 12]], [[14, 15]], "file"),  # line 13 unchanged between
        ([[10, 12]], [[13, 15]], "lines"),  # touching
        ([[10, 12]], [[12, 20]], "lines"),  # sharing line 12
        ([[13, 12]], [[13, 13]], "lines"),  # an insertion after 12, a change of 13
        ([[14, 13]], [[10, 12]], "file"),  # an insertion after 13, 13 unchanged
    ],
)
def test_overlaps_on_a_file_both_edited_are_graded_by_lines(
    api: Api, mine: list[list[int]], theirs: list[list[int]], grade: str
) -> None:
    alice, bob = two_editors(api)
    edit(api, alice["session_token"], "src/app.py", *theirs)
    r = edit(api, bob["session_token"], "src/app.py", *mine)
    c = only(r.json()["conflicts"])
    assert c["agent_name"] == "alice" and c["grade"] == grade, c
    (f,) = c["edits"]
    assert f == {
        "path": "src/app.py",
        "edited_by": "both",
        "grade": grade,
        "same_base": True,
        "base": BASE,
        "ranges": theirs,
        "my_ranges": mine,
    }


def test_claims_without_edits_on_both_sides_stay_claim_overlaps(api: Api) -> None:
    alice, bob = two_editors(api)
    r = api.post("/conflicts/check", {"paths": ["src/app.py"]})
    assert {c["grade"] for c in r.json()["conflicts"]} == {"claims"}
    edit(api, alice["session_token"], "src/app.py", [1, 2])
    c = only(api.get(f"/sessions/{bob['session_id']}/conflicts").json()["conflicts"])
    assert c["grade"] == "claims"
    assert c["edits"] == [
        {"path": "src/app.py", "edited_by": "them", "base": BASE, "ranges": [[1, 2]]}
    ]


def test_different_bases_are_graded_conservatively_and_say_so(api: Api) -> None:
    alice, bob = two_editors(api)
    edit(api, alice["session_token"], "src/app.py", [1, 2])
    r = edit(api, bob["session_token"], "src/app.py", [50, 52], base="a" * 40)
    c = only(r.json()["conflicts"])
    assert c["grade"] == "lines"
    assert c["edits"][0]["same_base"] is False


def test_line_margin_widens_what_meets(api: Api) -> None:
    alice, bob = two_editors(api)
    edit(api, alice["session_token"], "src/app.py", [10, 12])
    assert only(edit(api, bob["session_token"], "src/app.py", [16, 16]).json()["conflicts"])[
        "grade"
    ] == ("file")
    assert settings(api, line_margin=3)["line_margin"] == 3
    c = only(edit(api, bob["session_token"], "src/app.py", [16, 16]).json()["conflicts"])
    assert c["grade"] == "lines"  # 3 unchanged lines between: within the margin


def test_conflicts_check_grades_with_the_askers_edits(api: Api) -> None:
    alice, bob = two_editors(api)
    edit(api, alice["session_token"], "src/app.py", [10, 12])
    far = [{"path": "src/app.py", "base": BASE, "ranges": [[40, 40]]}]
    near = [{"path": "src/app.py", "base": BASE, "ranges": [[12, 12]]}]
    check = {"paths": ["src/app.py"], "session_token": bob["session_token"]}
    grades = [
        only(api.post("/conflicts/check", {**check, "edits": e}).json()["conflicts"])["grade"]
        for e in (far, near)
    ]
    assert grades == ["file", "lines"]
    # Without edits in the body: the session's own (none yet: alice's are hers alone).
    c = only(api.post("/conflicts/check", check).json()["conflicts"])
    assert c["grade"] == "claims" and c["edits"][0]["edited_by"] == "them"


def test_block_on_lines_admits_apart_and_refuses_meeting_edits(block_api: Api) -> None:
    api = block_api
    assert settings(api, block_on="lines")["block_on"] == "lines"
    alice = api.checkin(agent_name="alice", declared_files=["src/app.py"])
    # Nobody has edits yet: a claim overlap alone does not refuse under block_on = lines.
    bob = api.checkin(agent_name="bob", declared_files=["docs/**"])
    r = api.post(
        "/status", {"declared_files": ["docs/**", "src/app.py"]}, token=bob["session_token"]
    )
    assert r.status_code == 200, r.text
    edit(api, alice["session_token"], "src/app.py", [10, 12])
    edit(api, bob["session_token"], "src/app.py", [40, 41])
    # bob widens his claims: graded file, admitted.
    r = api.post(
        "/status",
        {"declared_files": ["docs/**", "src/app.py", "lib/**"]},
        token=bob["session_token"],
    )
    assert r.status_code == 200, r.text
    assert only(r.json()["conflicts"])["grade"] == "file"
    # His edits now meet hers: the report is kept (an edit is a fact)...
    r = edit(api, bob["session_token"], "src/app.py", [12, 13])
    assert r.status_code == 200 and only(r.json()["conflicts"])["grade"] == "lines"
    # ...and a scope change while they meet is refused.
    r = api.post(
        "/status",
        {"declared_files": ["docs/**", "src/app.py", "lib/**", "tests/**"]},
        token=bob["session_token"],
    )
    assert r.status_code == 409, r.text
    assert only(r.json()["conflicts"])["grade"] == "lines"


def test_block_on_lines_refuses_a_newcomer_where_the_other_side_has_edits(
    block_api: Api,
) -> None:
    api = block_api
    settings(api, block_on="lines")
    alice = api.checkin(agent_name="alice", declared_files=["src/**"])
    api.checkin(agent_name="carol", declared_files=["src/app.py"])  # no edits: admitted
    edit(api, alice["session_token"], "src/app.py", [1, 1])
    r = api.post("/checkin", {"agent_name": "bob", "declared_files": ["src/app.py"]})
    assert r.status_code == 409, r.text
    c = next(c for c in r.json()["conflicts"] if c["agent_name"] == "alice")
    assert c["edits"][0]["edited_by"] == "them"
    # Under the default (block_on = claims) any certain overlap refuses, as before.
    settings(api, block_on="claims")
    r = api.post("/checkin", {"agent_name": "dave", "declared_files": ["src/other.py"]})
    assert r.status_code == 409, r.text


def test_conflict_events_carry_the_grade(api: Api) -> None:
    alice, bob = two_editors(api)
    edit(api, alice["session_token"], "src/app.py", [10, 12])
    edit(api, bob["session_token"], "src/app.py", [11, 11])
    conflicts = [e for e in api.events() if e["type"] == "agent.conflict"]
    assert conflicts[-1]["data"]["conflicts"][0]["grade"] == "lines"


@pytest.mark.parametrize(
    ("item", "names"),
    [
        ({"path": "../x", "base": None, "ranges": [[1, 1]]}, "path"),
        ({"path": "a.py", "base": "XYZ!", "ranges": [[1, 1]]}, "base"),
        ({"path": "a.py", "base": None, "ranges": [[0, 1]]}, "range"),
        ({"path": "a.py", "base": None, "ranges": [[5, 3]]}, "range"),
        ({"path": "a.py", "base": None, "ranges": [[1, 2, 3]]}, "range"),
    ],
)
def test_bad_edits_are_refused_naming_the_field(api: Api, item: dict[str, Any], names: str) -> None:
    alice = api.checkin(agent_name="alice", declared_files=["src/**"])
    before = api.get("/presence").json()
    r = api.post("/status", {"edits": [item]}, token=alice["session_token"])
    assert r.status_code == 400, r.text
    assert "edits" in r.text and names in r.text
    assert api.get("/presence").json()["sessions"] == before["sessions"]


def test_too_many_ranges_are_kept_as_one_covering_range(api: Api) -> None:
    alice = api.checkin(agent_name="alice")
    ranges = [[n * 3, n * 3] for n in range(1, 80)]
    r = edit(api, alice["session_token"], "a.py", *ranges)
    assert r.json()["edits"][0]["ranges"] == [[3, 237]]


def test_ranges_past_edits_max_ranges_are_refused_before_they_are_read(api: Api) -> None:
    """SPEC "One agent cannot hurt another": at most edits_max_ranges (1,000) ranges per
    edited file, counted before they are sorted or joined; more is a 400 naming the field
    and the setting, in a status change and in conflicts/check alike, and changes nothing.
    (100,000 of them were taken with 200, each request holding the loop for seconds.)"""
    alice = api.checkin(agent_name="alice", declared_files=["src/**"])
    token = alice["session_token"]
    r = edit(api, token, "a.py", *([n, 2 * n] for n in range(1, 1001)))
    assert r.status_code == 200, r.text
    before = api.get("/presence").json()["sessions"]
    # Past the bound, whatever the items are: counting comes before reading them.
    for ranges in ([[n, n] for n in range(1, 1002)], [["not", "a range"]] * 100_000):
        body = {"edits": [{"path": "b.py", "base": BASE, "ranges": ranges}]}
        for path in ("/status", "/conflicts/check"):
            r = api.post(path, body, token=token)
            assert r.status_code == 400, r.text
            error = r.json()
            assert error["field"] == "edits" and error["index"] == 0
            assert "edits_max_ranges" in error["error"]["message"]
            assert str(len(ranges)) in error["error"]["message"]
    assert api.get("/presence").json()["sessions"] == before


def test_project_settings_are_checked(api: Api) -> None:
    slug = api.project["slug"]
    for body in ({"block_on": "files"}, {"line_margin": -1}, {"line_margin": 10**6}):
        r = api.client.patch(f"/api/v1/projects/{slug}", json=body, headers=ADMIN)
        assert r.status_code == 400, r.text
        assert next(iter(body)) in r.text
    shown = api.get("/project").json()
    assert (shown["block_on"], shown["line_margin"]) == ("claims", 0)


def test_edits_that_meet_are_news_once_for_the_other_agent(api: Api) -> None:
    alice, bob = two_editors(api)
    edit(api, alice["session_token"], "src/app.py", [10, 12])
    first = api.get("/news", token=alice["session_token"]).json()
    edit(api, bob["session_token"], "src/app.py", [40, 40])  # apart: no news of it
    assert (
        api.get(f"/news?after={first['cursor']}", token=alice["session_token"]).json()["items"]
        == []
    )
    edit(api, bob["session_token"], "src/app.py", [40, 40], [12, 12])
    answer = api.get(f"/news?after={first['cursor']}", token=alice["session_token"]).json()
    [item] = answer["items"]
    assert item["kind"] == "edits.meet" and item["path"] == "src/app.py"
    assert item["text"].startswith("bob-1's edits to src/app.py on lines 12, 40 meet yours (10-12)")
    # Still meeting after his next report: said once.
    edit(api, bob["session_token"], "src/app.py", [12, 13])
    later = api.get(f"/news?after={answer['cursor']}", token=alice["session_token"]).json()
    assert [i["kind"] for i in later["items"]] == []
    # Her summary says how the overlap is graded.
    summary = api.get("/news", token=alice["session_token"]).json()["items"][0]
    assert "your edits meet theirs: a merge conflict ahead" in summary["text"]


def test_edit_reports_cannot_grow_the_claims_without_bound(api: Api) -> None:
    """Paths joined by edit reports stay claimed after their edits are dropped: report after
    report could grow the claims (and every event and search carrying them) without end.
    They may take the claims at most 100 (the edited-files bound) past max_patterns."""
    alice = api.checkin(agent_name="alice")
    token = alice["session_token"]
    for batch in range(3):
        paths = [f"gen{batch}/f{i}.py" for i in range(100)]
        r = api.post(
            "/status", {"edits": [{"path": p, "base": None, "ranges": [[1, 0]]} for p in paths]},
            token=token,
        )  # fmt: skip
        assert r.status_code == 200, r.text
        dropped = [{"path": p, "base": None, "ranges": []} for p in paths]
        assert api.post("/status", {"edits": dropped}, token=token).status_code == 200
    assert len(api.get("/presence").json()["sessions"][0]["declared_files"]) == 300
    paths = [f"gen3/f{i}.py" for i in range(100)]
    r = api.post(
        "/status", {"edits": [{"path": p, "base": None, "ranges": [[1, 0]]} for p in paths]},
        token=token,
    )  # fmt: skip
    assert r.status_code == 400 and "edits" in r.text and "356" in r.text, r.text
    assert len(api.get("/presence").json()["sessions"][0]["declared_files"]) == 300
    # Declaring a covering pattern makes room again.
    r = api.post("/status", {"declared_files": ["gen*/**"]}, token=token)
    assert r.status_code == 200, r.text


def test_whole_numbers_written_as_floats_are_integers_in_ranges(api: Api) -> None:
    """JSON has numbers: 12.0 is the integer 12 (JSON Schema's integer), inside an edit's
    ranges as at the top level; 12.5 is refused."""
    alice = api.checkin(agent_name="alice")
    r = edit(api, alice["session_token"], "a.py", [10.0, 12.0])
    assert r.status_code == 200, r.text
    assert r.json()["edits"][0]["ranges"] == [[10, 12]]
    r = edit(api, alice["session_token"], "a.py", [10.5, 12])
    assert r.status_code == 400 and "edits" in r.text, r.text
