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


# -- range claims ----------------------------------------------------------------------------

F = [[10, 20]]  # def f(): lines 10-20 of src/auth.py
G = [[30, 45]]  # def g(): lines 30-45


def claim(ranges: list[list[int]], symbol: str | None = None, path: str = "src/auth.py") -> Any:
    out: dict[str, Any] = {"path": path, "base": BASE, "ranges": ranges}
    if symbol:
        out["symbol"] = symbol
    return out


def checkin(api: Api, name: str, *claims: dict[str, Any], files: Any = None) -> Any:
    body: dict[str, Any] = {"agent_name": name, "claims": list(claims)}
    if files is not None:
        body["declared_files"] = files
    return api.post("/checkin", body)


def test_two_agents_claiming_different_functions_of_one_file_both_get_in(
    block_api: Api,
) -> None:
    api = block_api
    r = checkin(api, "alice", claim(F, "f"))
    assert r.status_code == 201, r.text
    assert r.json()["claims"] == [claim(F, "f")] and r.json()["declared_files"] == []
    r = checkin(api, "bob", claim(G, "g"))
    assert r.status_code == 201, r.text
    # They see each other, graded file: the overlap on src/auth.py is not certain.
    c = only(r.json()["conflicts"])
    assert c["agent_name"] == "alice" and c["grade"] == "file" and not c["certain"]
    assert c["claims"] == [{"path": "src/auth.py", "grade": "file", "ranges": F, "my_ranges": G}]
    assert [f["certain"] for f in c["overlapping_files"]] == [False]
    # Shown in presence, with the symbol, and carried by the check-in's event.
    live = {s["agent_name"]: s for s in api.get("/presence").json()["sessions"]}
    assert live["bob"]["claims"] == [claim(G, "g")] and live["alice"]["claims"] == [claim(F, "f")]
    checkins = [e for e in api.events() if e["type"] == "agent.checkin"]
    assert checkins[-1]["data"]["session"]["claims"] == [claim(G, "g")]


def test_the_same_function_is_refused_for_the_later_one(block_api: Api) -> None:
    api = block_api
    assert checkin(api, "alice", claim(F, "f")).status_code == 201
    r = checkin(api, "bob", claim([[15, 16]], "f"))
    assert r.status_code == 409, r.text
    c = only(r.json()["conflicts"])
    assert c["grade"] == "lines" and c["certain"]
    assert c["claims"][0] == {
        "path": "src/auth.py",
        "grade": "lines",
        "ranges": F,
        "my_ranges": [[15, 16]],
    }
    # Touching, with no unchanged line between, is meeting too (git's rule).
    assert checkin(api, "carol", claim([[21, 25]])).status_code == 409
    assert checkin(api, "dave", claim([[22, 25]])).status_code == 201


@pytest.mark.parametrize("glob", ["src/auth.py", "src/*.py", "src/**"])
def test_a_glob_claim_covering_the_file_meets_every_range(block_api: Api, glob: str) -> None:
    api = block_api
    assert checkin(api, "alice", claim(F)).status_code == 201
    assert checkin(api, "bob", claim(G)).status_code == 201
    r = api.post("/checkin", {"agent_name": "carol", "declared_files": [glob]})
    assert r.status_code == 409, r.text
    conflicts = r.json()["conflicts"]
    assert {c["agent_name"] for c in conflicts} == {"alice", "bob"}
    assert all(c["grade"] == "lines" and c["certain"] for c in conflicts)
    # The other way round: a range claim on a file someone claims whole is refused.
    r = api.post("/checkin", {"agent_name": "erin", "declared_files": ["lib/**"]})
    assert r.status_code == 201
    r = checkin(api, "frank", claim(F, path="lib/x.py"))
    assert r.status_code == 409 and only(r.json()["conflicts"])["grade"] == "lines"


def test_range_claims_are_graded_against_edits_by_the_same_rule(api: Api) -> None:
    alice = checkin(api, "alice", claim(F, "f")).json()
    bob = api.checkin(agent_name="bob", declared_files=["docs/**"])
    # bob edits g's lines: apart from alice's claim, the edit's path joins his claims.
    r = edit(api, bob["session_token"], "src/auth.py", [[31, 33]])
    c = only(r.json()["conflicts"])
    assert c["grade"] == "file" and not c["certain"], c
    # ...then lines of f: they meet.
    r = edit(api, bob["session_token"], "src/auth.py", [[20, 21]])
    c = only(r.json()["conflicts"])
    assert c["grade"] == "lines" and c["certain"], c
    # alice's own edits inside her claim keep her claim a range claim (the path does not
    # join her declared patterns as a whole-file claim).
    r = edit(api, alice["session_token"], "src/auth.py", [[12, 12]])
    assert r.json()["declared_files"] == []
    assert only(r.json()["conflicts"])["grade"] == "lines"


def test_a_status_change_replaces_the_range_claims(block_api: Api) -> None:
    api = block_api
    alice = checkin(api, "alice", claim(F, "f")).json()
    bob = checkin(api, "bob", claim(G, "g")).json()
    # bob asks for f too: refused in block mode, his claims stay.
    r = api.post("/status", {"claims": [claim(G, "g"), claim(F, "f")]}, token=bob["session_token"])
    assert r.status_code == 409, r.text
    live = {s["agent_name"]: s for s in api.get("/presence").json()["sessions"]}
    assert live["bob"]["claims"] == [claim(G, "g")]
    # alice lets f go (claims: []); then bob gets it.
    r = api.post("/status", {"claims": []}, token=alice["session_token"])
    assert r.status_code == 200 and r.json()["claims"] == []
    r = api.post("/status", {"claims": [claim(G, "g"), claim(F, "f")]}, token=bob["session_token"])
    assert r.status_code == 200, r.text
    assert r.json()["claims"] == [claim(G, "g"), claim(F, "f")]
    statuses = [e for e in api.events() if e["type"] == "agent.status"]
    assert statuses[-1]["data"]["session"]["claims"] == r.json()["claims"]


def test_an_edited_file_stays_claimed_when_its_range_claim_goes(api: Api) -> None:
    alice = checkin(api, "alice", claim(F, "f")).json()
    edit(api, alice["session_token"], "src/auth.py", [[12, 12]])
    r = api.post("/status", {"claims": []}, token=alice["session_token"])
    assert r.json()["declared_files"] == ["src/auth.py"]


def test_conflicts_check_and_the_session_pages_grade_with_range_claims(api: Api) -> None:
    checkin(api, "alice", claim(F, "f"))
    bob = checkin(api, "bob", claim(G, "g")).json()
    page = api.get(f"/sessions/{bob['session_id']}/conflicts").json()
    assert only(page["conflicts"])["grade"] == "file"
    # The guard's question for bob's next edit of src/auth.py: his claim is his lines there.
    r = api.post(
        "/conflicts/check", {"paths": ["src/auth.py"], "session_token": bob["session_token"]}
    )
    c = only(r.json()["conflicts"])
    assert c["grade"] == "file" and not c["certain"]
    # Asked without a session: the whole file, which meets alice's and bob's lines.
    r = api.post("/conflicts/check", {"paths": ["src/auth.py"]})
    assert {c["grade"] for c in r.json()["conflicts"]} == {"lines"}


@pytest.mark.parametrize(
    ("item", "names"),
    [
        ({"path": "../x", "base": None, "ranges": [[1, 1]]}, "path"),
        ({"path": "src/*.py", "base": None, "ranges": [[1, 1]]}, "one file"),
        ({"path": "a.py", "base": "XYZ!", "ranges": [[1, 1]]}, "base"),
        ({"path": "a.py", "base": None, "ranges": []}, "at least one"),
        ({"path": "a.py", "base": None, "ranges": [[1, 1]], "symbol": "  "}, "symbol"),
        ({"path": "a.py", "base": None, "ranges": [[0, 1]]}, "range"),
        ({"path": "a.py", "base": None, "ranges": [[1, 1]], "symbol": "a\nb"}, "symbol"),
        ({"path": "a.py", "base": None, "ranges": [[1, 1]], "symbol": "x" * 201}, "symbol"),
    ],
)
def test_bad_claims_are_refused_naming_the_field(
    api: Api, item: dict[str, Any], names: str
) -> None:
    alice = api.checkin(agent_name="alice")
    before = api.get("/presence").json()["sessions"]
    r = api.post("/status", {"claims": [item]}, token=alice["session_token"])
    assert r.status_code == 400, r.text
    assert r.json()["field"] == "claims" and names in r.text
    r = api.post("/checkin", {"agent_name": "bob", "claims": [item]})
    assert r.status_code == 400 and r.json()["field"] == "claims", r.text
    assert api.get("/presence").json()["sessions"] == before


def test_claims_of_one_file_share_one_base_and_are_bounded(api: Api) -> None:
    two = [claim(F), {**claim(G), "base": "a" * 40}]
    r = api.post("/checkin", {"agent_name": "bob", "claims": two})
    assert r.status_code == 400 and "one base" in r.text
    many = [claim(F, path=f"f{n}.py") for n in range(101)]
    r = api.post("/checkin", {"agent_name": "bob", "claims": many})
    assert r.status_code == 400 and r.json()["field"] == "claims", r.text


def test_the_dashboards_pairs_are_graded_with_range_claims(api: Api) -> None:
    checkin(api, "alice", claim(F, "f"))
    checkin(api, "bob", claim(G, "g"))
    (pair,) = api.get("/conflicts").json()["pairs"]
    assert pair["grade"] == "file" and not pair["certain"], pair
    assert [f["certain"] for f in pair["overlapping_files"]] == [False]
    checkin(api, "carol", claim([[18, 19]], "f"))
    pairs = {
        (p["a"]["agent_name"], p["b"]["agent_name"]): p
        for p in api.get("/conflicts").json()["pairs"]
    }
    assert pairs[("alice", "carol")]["grade"] == "lines" and pairs[("alice", "carol")]["certain"]
    assert pairs[("bob", "carol")]["grade"] == "file"
