"""Waiting for a lane (SPEC), in process on both backends: a wait is granted in the
transaction that frees its paths, in line order (urgency, then arrival, with the age
boost); cancelling, a waiter's end and a timeout end a wait; asking a holder is news both
ways; a refusal names the ways on; auto_queue queues a refused scope change; hotspots."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.api.conftest import Api, new_project
from tests.support.waiting import wait_for


def _wait(api: Api, token: str, *paths: str, **body: Any) -> Any:
    return api.post("/queue", {"paths": list(paths), **body}, token=token)


def _claims(api: Api, name: str) -> list[str]:
    [s] = [s for s in api.get("/presence").json()["sessions"] if s["agent_name"] == name]
    return s["declared_files"]  # type: ignore[no-any-return]


def _release(api: Api, token: str, *keep: str) -> None:
    r = api.post("/status", {"declared_files": list(keep)}, token=token)
    assert r.status_code == 200, r.text


def _news(api: Api, token: str, cursor: str) -> list[dict[str, Any]]:
    r = api.get(f"/news?after={cursor}", token=token)
    assert r.status_code == 200, r.text
    return r.json()["items"]  # type: ignore[no-any-return]


def _cursor(api: Api, token: str) -> str:
    return api.get("/news", token=token).json()["cursor"]  # type: ignore[no-any-return]


def test_a_wait_is_granted_in_the_release_and_heard_as_news(block_api: Api) -> None:
    api = block_api
    holder = api.checkin(agent_name="claude-aa11", declared_files=["src/app.py", "docs/**"])
    waiter = api.checkin(agent_name="codex-bb22")
    token = waiter["session_token"]
    r = _wait(api, token, "src/app.py")
    assert r.status_code == 202, r.text
    queued = r.json()
    assert queued["granted"] is False and queued["position"] == 1
    assert queued["holders"] == [
        {
            "session_id": holder["session_id"],
            "agent_name": "claude-aa11",
            "display_name": "claude-1",
            "paths": ["src/app.py"],
        }
    ]
    listed = api.get("/queue").json()
    assert [w["queue_id"] for w in listed["waits"]] == [queued["queue_id"]]
    assert listed["waits"][0]["holders"][0]["display_name"] == "claude-1"
    cursor = _cursor(api, token)

    _release(api, holder["session_token"], "docs/**")  # lanes release src/app.py
    assert _claims(api, "codex-bb22") == ["src/app.py"]
    assert api.get("/queue").json()["waits"] == []
    events = api.events(since=queued["offset"])
    kinds = [e["type"] for e in events]
    # The release, then the grant: the waiter's claims, then claim.granted, one commit.
    assert kinds[:3] == ["agent.status", "agent.status", "claim.granted"], kinds
    granted = events[2]["data"]
    assert granted["entry"]["status"] == "granted" and granted["entry"]["paths"] == ["src/app.py"]
    items = [i for i in _news(api, token, cursor) if i["kind"] == "claim.granted"]
    assert len(items) == 1 and items[0]["text"].startswith("granted: src/app.py is yours now")
    # The path is the waiter's now: a new check-in on it is refused (block mode).
    late = api.post("/checkin", {"agent_name": "gemini-cc33", "declared_files": ["src/app.py"]})
    assert late.status_code == 409
    assert late.json()["conflicts"][0]["agent_name"] == "codex-bb22"


def test_nothing_held_is_granted_at_once(api: Api) -> None:
    me = api.checkin(agent_name="alice", declared_files=["docs/**"])
    r = _wait(api, me["session_token"], "src/free.py")
    assert r.status_code == 200, r.text
    assert r.json()["granted"] is True and r.json()["declared_files"] == ["docs/**", "src/free.py"]
    assert _claims(api, "alice") == ["docs/**", "src/free.py"]


def test_line_order_is_urgency_then_arrival_and_grants_follow_it(block_api: Api) -> None:
    api = block_api
    holder = api.checkin(agent_name="holder", declared_files=["hot.py"])
    names = ["n1", "n2", "h1", "l1"]
    urgency = {"n1": "normal", "n2": "normal", "h1": "high", "l1": "low"}
    tokens = {n: api.checkin(agent_name=n)["session_token"] for n in names}
    ids = {}
    for n in names:
        r = _wait(api, tokens[n], "hot.py", urgency=urgency[n])
        assert r.status_code == 202, r.text
        ids[n] = r.json()["queue_id"]
    positions = {w["agent_name"]: w["position"] for w in api.get("/queue").json()["waits"]}
    assert positions == {"h1": 1, "n1": 2, "n2": 3, "l1": 4}
    order = [w["agent_name"] for w in api.get("/queue").json()["waits"]]
    assert order == ["h1", "n1", "n2", "l1"]

    _release(api, holder["session_token"])
    assert _claims(api, "h1") == ["hot.py"]
    for previous, nxt in (("h1", "n1"), ("n1", "n2"), ("n2", "l1")):
        assert _claims(api, nxt) == []
        assert api.post("/checkout", {}, token=tokens[previous]).status_code == 200
        assert _claims(api, nxt) == ["hot.py"]


def test_an_old_wait_counts_one_level_higher(
    app_factory: Callable[..., TestClient[Any]], database_url: str
) -> None:
    boost = 2.0
    client = app_factory(database_url=database_url, queue_age_boost_seconds=boost)
    api = new_project(client, conflict_mode="block")
    api.checkin(agent_name="holder", declared_files=["hot.py"])
    tokens = {n: api.checkin(agent_name=n)["session_token"] for n in ("old", "early", "late")}
    started = time.monotonic()
    assert _wait(api, tokens["old"], "hot.py", urgency="low").status_code == 202
    assert _wait(api, tokens["early"], "hot.py", urgency="normal").status_code == 202
    order = [w["agent_name"] for w in api.get("/queue").json()["waits"]]
    if time.monotonic() - started < boost:  # (a loaded machine may take longer)
        assert order == ["early", "old"]
    time.sleep(max(0.0, boost - (time.monotonic() - started)) + 0.2)
    # Past queue_age_boost_seconds the low wait counts as normal: a normal wait that
    # arrives now is behind it (without the boost it would be ahead of it).
    assert _wait(api, tokens["late"], "hot.py", urgency="normal").status_code == 202
    order = [w["agent_name"] for w in api.get("/queue").json()["waits"]]
    assert order == ["early", "old", "late"]


def test_a_path_free_but_wanted_by_one_ahead_waits_behind_it(block_api: Api) -> None:
    api = block_api
    api.checkin(agent_name="h", declared_files=["b.py"])
    first = api.checkin(agent_name="first")["session_token"]
    r = _wait(api, first, "a.py", "b.py")
    assert r.status_code == 202 and r.json()["position"] == 1
    second = api.checkin(agent_name="second")["session_token"]
    # a.py is free, but the wait ahead of it wants it too: in line behind it, per path.
    r = _wait(api, second, "a.py")
    assert r.status_code == 202, r.text
    assert r.json()["position"] == 2 and r.json()["holders"] == []


def test_cancelling_moves_the_next_up_and_only_the_waiter_may(block_api: Api) -> None:
    api = block_api
    holder = api.checkin(agent_name="holder", declared_files=["hot.py"])
    one = api.checkin(agent_name="one")["session_token"]
    two = api.checkin(agent_name="two")["session_token"]
    first = _wait(api, one, "hot.py").json()
    second = _wait(api, two, "hot.py").json()
    assert second["position"] == 2
    assert (
        api.client.delete(
            f"/api/v1/queue/{first['queue_id']}", headers=api.headers(two)
        ).status_code
        == 404
    )
    r = api.client.delete(f"/api/v1/queue/{first['queue_id']}", headers=api.headers(one))
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    [left] = [e for e in api.events() if e["type"] == "queue.left"]
    assert left["data"]["reason"] == "cancelled"
    again = api.client.delete(f"/api/v1/queue/{first['queue_id']}", headers=api.headers(one))
    assert again.status_code == 409 and again.json()["status"] == "cancelled"
    assert [w["position"] for w in api.get("/queue").json()["waits"]] == [1]
    _release(api, holder["session_token"])
    assert _claims(api, "two") == ["hot.py"] and _claims(api, "one") == []


def test_a_waiters_wait_ends_with_its_session(block_api: Api) -> None:
    api = block_api
    holder = api.checkin(agent_name="holder", declared_files=["hot.py"])
    gone = api.checkin(agent_name="gone")["session_token"]
    stays = api.checkin(agent_name="stays")["session_token"]
    _wait(api, gone, "hot.py")
    _wait(api, stays, "hot.py")
    assert api.post("/checkout", {}, token=gone).status_code == 200
    [left] = [e for e in api.events() if e["type"] == "queue.left"]
    assert left["data"]["reason"] == "ended" and left["data"]["entry"]["agent_name"] == "gone"
    assert [w["agent_name"] for w in api.get("/queue").json()["waits"]] == ["stays"]
    # The holder checks out: what it held goes to the next in line, in that checkout.
    assert api.post("/checkout", {}, token=holder["session_token"]).status_code == 200
    assert _claims(api, "stays") == ["hot.py"]


def test_a_timed_out_wait_is_news_to_the_waiter(
    app_factory: Callable[..., TestClient[Any]], database_url: str
) -> None:
    client = app_factory(database_url=database_url, expiry_check_seconds=0.2)
    api = new_project(client, conflict_mode="block")
    api.checkin(agent_name="holder", declared_files=["hot.py"])
    waiter = api.checkin(agent_name="waiter")["session_token"]
    cursor = _cursor(api, waiter)
    assert _wait(api, waiter, "hot.py", timeout_seconds=1).status_code == 202
    items = wait_for(
        lambda: [i for i in _news(api, waiter, cursor) if i["kind"] == "queue.timed_out"]
    )
    assert items and items[0]["text"].startswith("your wait for hot.py timed out after 1 s")
    assert api.get("/queue").json()["waits"] == []
    [left] = [e for e in api.events() if e["type"] == "queue.left"]
    assert left["data"]["reason"] == "timed_out"


def test_a_refusal_names_the_holders_and_the_three_ways_on(block_api: Api) -> None:
    api = block_api
    api.checkin(agent_name="claude-aa11", declared_files=["src/app.py"])
    me = api.checkin(agent_name="codex-bb22")["session_token"]
    r = api.post("/status", {"declared_files": ["src/app.py"]}, token=me)
    assert r.status_code == 409
    text = r.json()["error"]["message"]
    assert len(text) <= 600
    assert "1 live session(s) overlap for certain): src/app.py held by claude-1" in text
    assert "lanes wait src/app.py" in text
    assert 'lanes ask claude-1 src/app.py --reason "..."' in text
    assert "other files" in text
    assert text.endswith("Next step: lanes wait src/app.py")
    refused = api.post("/checkin", {"agent_name": "gemini-cc", "declared_files": ["src/app.py"]})
    text = refused.json()["error"]["message"]
    assert len(text) <= 600 and "claude-1" in text and "lanes wait src/app.py" in text
    assert text.endswith("Next step: check in without those files")
    # Long patterns and many holders still fit, ending with the next step.
    for n in range(5):
        api.checkin(agent_name=f"h{n}", declared_files=[f"deep/{'x' * 200}/{n}.py"])
    r = api.post("/status", {"declared_files": ["deep/**"]}, token=me)
    text = r.json()["error"]["message"]
    assert len(text) <= 600 and text.endswith("Next step: lanes wait 'deep/**'"), text


def test_auto_queue_queues_a_refused_scope_change(client: TestClient[Any]) -> None:
    api = new_project(client, conflict_mode="block", auto_queue=True)
    assert api.get("/project").json()["auto_queue"] is True
    holder = api.checkin(agent_name="holder", declared_files=["hot.py"])
    me = api.checkin(agent_name="me", declared_files=["mine.py"])
    r = api.post("/status", {"declared_files": ["mine.py", "hot.py"]}, token=me["session_token"])
    assert r.status_code == 409
    body = r.json()
    assert body["queue"]["position"] == 1 and body["queue"]["queue_id"].startswith("q_")
    assert "Queued for you" in body["error"]["message"] and len(body["error"]["message"]) <= 600
    assert _claims(api, "me") == ["mine.py"]  # the old scope stays
    [w] = api.get("/queue").json()["waits"]
    assert w["auto"] is True and w["paths"] == ["hot.py"]
    _release(api, holder["session_token"])
    assert _claims(api, "me") == ["mine.py", "hot.py"]


def test_asking_a_holder_is_news_to_it_and_its_release_news_to_the_asker(
    block_api: Api,
) -> None:
    api = block_api
    holder = api.checkin(agent_name="claude-aa11", declared_files=["src/app.py", "docs/**"])
    asker = api.checkin(agent_name="codex-bb22")["session_token"]
    h_cursor = _cursor(api, holder["session_token"])
    a_cursor = _cursor(api, asker)
    body = {"to": "claude-1", "paths": ["src/app.py"], "reason": "I need to fix the router"}
    r = api.post("/release-requests", body, token=asker)
    assert r.status_code == 201, r.text
    assert r.json()["to_agent_name"] == "claude-aa11" and r.json()["held"] == ["src/app.py"]
    [item] = _news(api, holder["session_token"], h_cursor)
    assert item["kind"] == "release.requested"
    assert item["text"].startswith(
        "codex-1 asks you to release src/app.py: I need to fix the router"
    )
    _release(api, holder["session_token"], "docs/**")
    answered = [i for i in _news(api, asker, a_cursor) if i["kind"] == "release.answered"]
    assert len(answered) == 1
    assert answered[0]["text"].startswith("claude-1 released src/app.py, which you asked for")
    # Asking nobody, or for what they do not hold.
    nobody = api.post("/release-requests", {**body, "to": "nobody"}, token=asker)
    assert nobody.status_code == 404 and nobody.json()["error"]["code"] == "AGENT_NOT_FOUND"
    unheld = api.post("/release-requests", {**body, "paths": ["x.py"]}, token=asker)
    assert unheld.status_code == 409


def test_hotspots_count_refusals_and_waits(block_api: Api) -> None:
    api = block_api
    holder = api.checkin(agent_name="holder", declared_files=["hot.py"])
    me = api.checkin(agent_name="me")["session_token"]
    for _ in range(2):
        assert api.post("/status", {"declared_files": ["hot.py"]}, token=me).status_code == 409
    assert (
        api.post("/checkin", {"agent_name": "x", "declared_files": ["hot.py"]}).status_code == 409
    )
    _wait(api, me, "hot.py")
    _release(api, holder["session_token"])
    r = api.get("/hotspots?days=1")
    assert r.status_code == 200, r.text
    [spot] = r.json()["hotspots"]
    assert spot["path"] == "hot.py" and spot["refused"] == 3 and spot["waits"] == 1
    assert spot["wait_seconds_max"] is not None and spot["waiting_now"] == 0
    assert api.get("/hotspots?days=0").status_code == 400


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "paths"),
        ({"paths": []}, "paths"),
        ({"paths": ["/abs"]}, "paths"),
        ({"paths": [f"f{n}.py" for n in range(33)]}, "paths"),
        ({"paths": ["a.py"], "timeout_seconds": 0}, "timeout_seconds"),
        ({"paths": ["a.py"], "timeout_seconds": 3601}, "timeout_seconds"),
        ({"paths": ["a.py"], "urgency": "now"}, "urgency"),
        ({"paths": ["a.py"], "extra": 1}, "extra"),
    ],
)
def test_bad_waits_are_400_naming_the_field_and_change_nothing(
    api: Api, body: dict[str, Any], field: str
) -> None:
    me = api.checkin(agent_name="me")["session_token"]
    before = api.events()
    r = api.post("/queue", body, token=me)
    assert r.status_code == 400, r.text
    assert r.json()["field"] == field, r.text
    assert api.events() == before


def test_the_grant_is_a_news_frame_on_the_waiters_attached_socket(block_api: Api) -> None:
    api = block_api
    holder = api.checkin(agent_name="holder", declared_files=["hot.py"])
    waiter = api.checkin(agent_name="waiter")["session_token"]
    with api.client.websocket_connect("/api/v1/events", headers={"X-API-Key": api.key}) as ws:
        ws.receive_json()  # the snapshot
        ws.send_json({"type": "attach", "session_token": waiter})
        assert ws.receive_json()["type"] == "attached"
        ws.send_json({"type": "news"})
        assert ws.receive_json()["item"]["kind"] == "summary"
        assert _wait(api, waiter, "hot.py").status_code == 202
        _release(api, holder["session_token"])
        kinds = []
        for _ in range(20):
            frame = ws.receive_json()
            kinds.append(frame.get("item", {}).get("kind") or frame["type"])
            if frame["type"] == "news" and frame["item"]["kind"] == "claim.granted":
                break
        else:
            raise AssertionError(kinds)
        assert frame["item"]["paths"] == ["hot.py"]
