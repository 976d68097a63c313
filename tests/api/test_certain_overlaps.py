"""Certain overlaps and those that hold only if a path is a directory, over HTTP.

``block`` mode refuses on certain overlaps and shared work areas only; an overlap
that holds only if a slash-less literal (``package.json``) is a directory is
reported with ``if_directory`` and never blocks (SPEC "File patterns").
"""

from __future__ import annotations

from tests.api.conftest import Api


def test_block_mode_admits_an_overlap_that_holds_only_if_a_path_is_a_directory(
    block_api: Api,
) -> None:
    alice = block_api.checkin(agent_name="alice", declared_files=["package.json"])
    body = block_api.checkin(agent_name="bob", declared_files=["**/*.py"])
    [conflict] = body["conflicts"]
    assert conflict["session_id"] == alice["session_id"]
    assert conflict["certain"] is False
    assert conflict["overlapping_files"] == [
        {
            "pattern": "**/*.py",
            "their_pattern": "package.json",
            "example": "package.json/a.py",
            "certain": False,
            "if_directory": "package.json",
        }
    ]
    names = [s["agent_name"] for s in block_api.get("/presence").json()["sessions"]]
    assert names == ["alice", "bob"]


def test_block_mode_refuses_a_certain_overlap(block_api: Api) -> None:
    block_api.checkin(agent_name="alice", declared_files=["src/api/"])  # a directory
    r = block_api.post("/checkin", {"agent_name": "bob", "declared_files": ["src/**/*.py"]})
    assert r.status_code == 409, r.text
    body = r.json()
    assert body["error"]["code"] == "CONFLICT"
    [conflict] = body["conflicts"]
    assert conflict["certain"] is True
    [overlap] = conflict["overlapping_files"]
    assert overlap == {
        "pattern": "src/**/*.py",
        "their_pattern": "src/api/",
        "example": "src/api/a.py",
        "certain": True,
    }


def test_block_mode_refuses_when_one_overlap_of_several_is_certain(block_api: Api) -> None:
    block_api.checkin(agent_name="alice", declared_files=["package.json", "src/a.py"])
    block_api.checkin(agent_name="carol", declared_files=["Makefile"])  # only if a directory
    r = block_api.post("/checkin", {"agent_name": "bob", "declared_files": ["**/*.py"]})
    assert r.status_code == 409, r.text
    assert "1 live session(s) overlap for certain" in r.json()["error"]["message"]
    assert [c["certain"] for c in r.json()["conflicts"]] == [True, False]
    conflict = r.json()["conflicts"][0]
    assert conflict["certain"] is True
    assert [o["certain"] for o in conflict["overlapping_files"]] == [False, True]


def test_a_shared_work_area_blocks_whatever_the_files(block_api: Api) -> None:
    block_api.checkin(agent_name="alice", declared_area="billing", declared_files=["docs"])
    r = block_api.post(
        "/checkin",
        {"agent_name": "bob", "declared_area": "billing", "declared_files": ["docs/**/*.md"]},
    )
    assert r.status_code == 409, r.text
    [conflict] = r.json()["conflicts"]
    assert conflict["overlapping_area"] is True and conflict["certain"] is True
    assert conflict["overlapping_files"][0]["if_directory"] == "docs"


def test_status_in_block_mode_takes_an_uncertain_overlap_and_refuses_a_certain_one(
    block_api: Api,
) -> None:
    block_api.checkin(agent_name="alice", declared_files=["src/api", "web/app.ts"])
    bob = block_api.checkin(agent_name="bob", declared_files=["docs/**"])
    token = bob["session_token"]
    r = block_api.post("/status", {"declared_files": ["src/api/x.py"]}, token=token)
    assert r.status_code == 200, r.text
    [conflict] = r.json()["conflicts"]
    assert conflict["certain"] is False
    assert conflict["overlapping_files"][0]["if_directory"] == "src/api"
    r = block_api.post("/status", {"declared_files": ["web/*.ts"]}, token=token)
    assert r.status_code == 409, r.text
    assert r.json()["conflicts"][0]["certain"] is True
    [me] = [s for s in block_api.get("/presence").json()["sessions"] if s["agent_name"] == "bob"]
    assert me["declared_files"] == ["src/api/x.py"]  # the refused change left the scope as it was


def test_warn_mode_reports_both_kinds(api: Api) -> None:
    api.checkin(agent_name="alice", declared_files=["package.json"])
    api.checkin(agent_name="carol", declared_files=["src/"])
    body = api.checkin(agent_name="bob", declared_files=["*.json"])
    assert [(c["agent_name"], c["certain"]) for c in body["conflicts"]] == [("alice", True)]
    body = api.checkin(agent_name="dave", declared_files=["src/**/*.json", "package.json/x"])
    # Certain conflicts first (SPEC "One agent cannot hurt another"), then oldest first.
    assert [(c["agent_name"], c["certain"]) for c in body["conflicts"]] == [
        ("carol", True),
        ("alice", False),
    ]


def test_conflicts_check_staged_paths_are_certain_patterns_need_not_be(api: Api) -> None:
    """A staged path is a file that exists, so the directories above it exist:
    a literal claiming one of them overlaps it for certain."""
    api.checkin(agent_name="alice", declared_files=["src/api", "package.json"])
    r = api.post("/conflicts/check", {"paths": ["src/api/x.py", "README.md"]})
    assert r.status_code == 200, r.text
    [conflict] = r.json()["conflicts"]
    assert conflict["certain"] is True
    assert conflict["overlapping_files"][0].pop("claimed_at").endswith("Z")  # when alice's
    assert conflict["overlapping_files"] == [
        {
            "pattern": "src/api/x.py",
            "their_pattern": "src/api",
            "example": "src/api/x.py",
            "certain": True,
        }
    ]
    r = api.post("/conflicts/check", {"patterns": ["**/*.py"]})
    [conflict] = r.json()["conflicts"]
    assert conflict["certain"] is False
    assert {o["if_directory"] for o in conflict["overlapping_files"]} == {
        "src/api",
        "package.json",
    }


def test_a_dot_segment_is_refused_naming_the_field(api: Api) -> None:
    for bad in ("src/./api", "./.", "{.,src}/x", "src/."):
        r = api.post("/checkin", {"agent_name": "alice", "declared_files": ["ok", bad]})
        assert r.status_code == 400, (bad, r.text)
        body = r.json()
        assert body["error"]["code"] == "VALIDATION_ERROR"
        assert body["field"] == "declared_files", body
        assert "'.'" in body["error"]["message"], body
    r = api.post("/conflicts/check", {"patterns": ["a/./b"]})
    assert r.status_code == 400 and r.json()["field"] == "patterns"


def test_a_task_is_ready_unless_a_live_claim_overlaps_its_paths_for_certain(api: Api) -> None:
    from tests.api.test_tasks import _ready_ids, _task

    python = _task(api, title="python everywhere", paths=["**/*.py"])
    api.checkin(agent_name="alice", declared_files=["package.json"])  # only if a directory
    assert python["task_id"] in _ready_ids(api)
    api.checkin(agent_name="bob", declared_files=["src/a.py"])  # for certain
    assert python["task_id"] not in _ready_ids(api)
