"""The agent's news: what concerns a live session, with a cursor over the event log."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import Api, new_project
from tests.api.shared_app import client  # noqa: F401  (one app per module)


def _news(api: Api, token: str, after: str | None = None, **query: Any) -> dict[str, Any]:
    params = {**({"after": after} if after else {}), **query}
    qs = "&".join(f"{k}={v}" for k, v in params.items())
    r = api.get(f"/news{'?' + qs if qs else ''}", token=token)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_a_first_call_sums_up_and_later_calls_tell_what_changed_once(api: Api) -> None:
    alice = api.checkin(agent_name="alice", declared_files=["src/api/**"])["session_token"]
    first = _news(api, alice)
    assert first["recovered"] is True and not first["more"]
    [summary] = first["items"]
    assert summary["kind"] == "summary" and "you are alice" in summary["text"]
    cursor = first["cursor"]
    assert _news(api, alice, cursor)["items"] == []

    bob = api.checkin(agent_name="bob", declared_files=["docs/**"])["session_token"]
    r = api.post("/status", {"declared_files": ["docs/**", "src/api/app.py"]}, token=bob)
    assert r.status_code == 200
    answer = _news(api, alice, cursor)
    [item] = answer["items"]
    assert item["kind"] == "overlap.began"
    assert (
        item["text"] == "bob-1 now edits src/api/app.py, which you claim (src/api/**), for certain"
    )
    assert item["agent_name"] == "bob" and item["path"] == "src/api/app.py"
    assert item["your_pattern"] == "src/api/**" and item["certain"] is True
    assert int(item["cursor"].split("-")[0]) <= int(answer["cursor"].split("-")[0])
    # Once: read on from the cursor, nothing again.
    assert _news(api, alice, answer["cursor"])["items"] == []

    r = api.post("/checkout", {}, token=bob)
    assert r.status_code == 200
    [ended] = _news(api, alice, answer["cursor"])["items"]
    assert ended["kind"] == "overlap.ended" and ended["free"] is True
    assert ended["text"] == (
        "bob-1 checked out: src/api/app.py, which you claim (src/api/**): it is free"
    )


def test_messages_to_the_agent_and_broadcasts_but_not_its_own(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    carol = api.checkin(agent_name="carol")["session_token"]
    cursor = _news(api, alice)["cursor"]
    carol_cursor = _news(api, carol)["cursor"]
    api.post("/messages", {"to": "alice", "body": "please  review\n#12"}, token=bob)
    api.post("/messages", {"to": "broadcast", "body": "freeze at 5"}, token=alice)
    api.post("/messages", {"to": "carol", "body": "not for alice"}, token=bob)
    items = _news(api, alice, cursor)["items"]
    assert [i["kind"] for i in items] == ["message"]
    assert items[0]["text"].startswith("bob-1 to you, message ")
    assert items[0]["text"].endswith(": please review #12")
    carol_items = _news(api, carol, carol_cursor)["items"]
    assert [i["from"] for i in carol_items] == ["alice", "bob"]


def test_at_most_limit_items_then_more(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    cursor = _news(api, alice)["cursor"]
    for n in range(5):
        api.post("/messages", {"to": "alice", "body": f"m{n}"}, token=bob)
    page = _news(api, alice, cursor, limit=3)
    assert [i["text"][-2:] for i in page["items"]] == ["m0", "m1", "m2"] and page["more"]
    rest = _news(api, alice, page["cursor"], limit=3)
    assert [i["text"][-2:] for i in rest["items"]] == ["m3", "m4"] and not rest["more"]


def test_a_cursor_of_another_history_or_from_the_future_gets_a_summary(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    offset, epoch = _news(api, alice)["cursor"].split("-")
    for stale in (f"{offset}-{'0' * 16}", f"{int(offset) + 100}-{epoch}"):
        answer = _news(api, alice, stale)
        assert answer["recovered"] is False
        assert [i["kind"] for i in answer["items"]] == ["summary"]


def test_bad_cursor_limit_and_tokens_are_clear_4xx(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    r = api.get("/news?after=nope", token=alice)
    assert r.status_code == 400 and r.json()["field"] == "after"
    # Issue 40: `$` let a trailing newline through.
    cursor = _news(api, alice)["cursor"]
    r = api.get(f"/news?after={cursor}%0A", token=alice)
    assert r.status_code == 400 and r.json()["field"] == "after", r.text
    r = api.get("/news?limit=0", token=alice)
    assert r.status_code == 400 and r.json()["field"] == "limit"
    assert api.get("/news").status_code == 400
    assert api.get("/news", token="0" * 64).status_code == 404
    api.post("/checkout", {}, token=alice)
    assert api.get("/news", token=alice).status_code == 410


def test_news_never_leaks_across_projects(api: Api, client: Any) -> None:  # noqa: F811
    other = new_project(client)
    alice = api.checkin(agent_name="alice", declared_files=["src/**"])["session_token"]
    cursor = _news(api, alice)["cursor"]
    mallory = other.checkin(agent_name="bob", declared_files=["src/x.py"])["session_token"]
    other.post("/messages", {"to": "alice", "body": "from another project"}, token=mallory)
    assert _news(api, alice, cursor)["items"] == []
    # Another project's key with this token: no such session there.
    assert other.get("/news", token=alice).status_code == 404


def test_delivery_marks_the_messages_put_in_context(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    cursor = _news(api, alice)["cursor"]
    sent = api.post("/messages", {"to": "alice", "body": "hi"}, token=bob).json()
    assert _news(api, alice, cursor)["items"][0]["message_id"] == sent["message_id"]
    box = api.get("/messages/inbox", token=alice).json()
    assert box["messages"][0]["delivered_at"] is None  # a plain GET delivers nothing
    r = api.post("/news", {"after": cursor, "deliver": True}, token=alice)
    assert r.status_code == 200 and r.json()["items"][0]["kind"] == "message"
    box = api.get("/messages/inbox", token=alice).json()
    assert box["messages"][0]["delivered_at"] is not None
    assert box["messages"][0]["read_at"] is None
    delivered = [e for e in api.events() if e["type"] == "message.delivered"]
    assert delivered[0]["data"]["message_ids"] == [sent["message_id"]]
    # Marking again changes nothing; ids outside the inbox are skipped.
    r = api.post("/news/delivered", {"message_ids": [sent["message_id"], 999999]}, token=alice)
    assert r.status_code == 200 and r.json() == {"agent_name": "alice", "delivered": []}


def _kinds(items: list[dict[str, Any]]) -> list[str]:
    return [i["kind"] for i in items]


def test_tasks_leases_votes_and_the_mode_each_reach_whom_they_concern(api: Api) -> None:
    from tests.api.conftest import ADMIN

    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    cursor = _news(api, alice)["cursor"]
    bob_cursor = _news(api, bob)["cursor"]

    # Tasks: alice works on one that depends on bob's; bob notes on hers, then finishes his.
    base = api.post("/tasks", {"title": "Schema"}, token=bob).json()
    mine = api.post("/tasks", {"title": "API", "depends_on": [base["task_id"]]}, token=bob).json()
    assert api.post(f"/tasks/{base['task_id']}/claim", token=bob).status_code == 200
    api.post(f"/tasks/{base['task_id']}/status", {"status": "done"}, token=bob)
    assert api.post(f"/tasks/{mine['task_id']}/claim", token=alice).status_code == 200
    api.post(f"/tasks/{mine['task_id']}/notes", {"body": "mind the  migration"}, token=bob)
    # Leases: alice is refused bob's lease; bob releases it.
    lease = api.post("/leases", {"resource": "deploy:prod"}, token=bob).json()
    assert api.post("/leases", {"resource": "deploy:prod"}, token=alice).status_code == 409
    api.post(f"/leases/{lease['lease_id']}/release", token=bob)
    # Votes: bob asks; alice may vote. The mode changes.
    vote = api.post("/consensus", {"action": "merge", "reason": "green"}, token=bob).json()
    slug = api.project["slug"]
    r = api.client.patch(f"/api/v1/projects/{slug}", json={"conflict_mode": "block"}, headers=ADMIN)
    assert r.status_code == 200, r.text

    items = _news(api, alice, cursor)["items"]
    assert _kinds(items) == [
        "task.note",
        "lease.free",
        "consensus.vote_requested",
        "project.mode",
    ]
    assert items[0]["text"] == f"bob noted on your task {mine['task_id']}: mind the migration"
    assert items[1]["resource"] == "deploy:prod" and "which you were refused" in items[1]["text"]
    assert items[2]["consensus_id"] == vote["consensus_id"]
    assert items[3]["text"].startswith("the project's conflict mode is now block (was warn)")
    # bob hears neither his own doing nor alice's refusal; the mode he does.
    assert _kinds(_news(api, bob, bob_cursor)["items"]) == ["project.mode"]

    # alice votes: bob hears the outcome of his request.
    bob_cursor = _news(api, bob)["cursor"]
    api.post(f"/consensus/{vote['consensus_id']}/vote", {"vote": "approve"}, token=alice)
    [outcome] = _news(api, bob, bob_cursor)["items"]
    assert outcome["kind"] == "consensus.outcome" and outcome["outcome"] == "approved"


def test_a_dependency_done_reaches_the_agent_whose_task_waits_for_it(api: Api) -> None:
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    carol = api.checkin(agent_name="carol")["session_token"]
    base = api.post("/tasks", {"title": "Schema"}, token=bob).json()
    mine = api.post("/tasks", {"title": "API", "depends_on": [base["task_id"]]}, token=alice)
    api.post(f"/tasks/{base['task_id']}/claim", token=bob)
    cursor = _news(api, alice)["cursor"]
    carol_cursor = _news(api, carol)["cursor"]
    api.post(f"/tasks/{base['task_id']}/status", {"status": "done"}, token=bob)
    [item] = _news(api, alice, cursor)["items"]
    assert item["kind"] == "task.dependency_done" and item["dependency_id"] == base["task_id"]
    assert item["text"] == (
        f"task {base['task_id']} (Schema), which your task {mine.json()['task_id']} (API) "
        "depends on, is done"
    )
    assert _news(api, carol, carol_cursor)["items"] == []


def test_a_refused_lease_is_news_once_on_its_first_release(api: Api) -> None:
    """Review finding: a session refused a lease once heard lease.free on every later
    release of that resource. Now only the first release or expiry after the refusal."""
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    cursor = _news(api, alice)["cursor"]
    lease = api.post("/leases", {"resource": "deploy:prod"}, token=bob).json()
    assert api.post("/leases", {"resource": "deploy:prod"}, token=alice).status_code == 409
    api.post(f"/leases/{lease['lease_id']}/release", token=bob)
    answer = _news(api, alice, cursor)
    assert _kinds(answer["items"]) == ["lease.free"]
    assert _kinds(_news(api, alice, cursor)["items"]) == ["lease.free"]  # read again: same
    for _ in range(2):  # bob takes it and lets it go again: no news for alice
        again = api.post("/leases", {"resource": "deploy:prod"}, token=bob).json()
        api.post(f"/leases/{again['lease_id']}/release", token=bob)
    assert _news(api, alice, answer["cursor"])["items"] == []


def test_lease_refusals_are_bounded_per_project() -> None:
    """Review finding: at 10,000 refusals in all the whole map was cleared, so one project
    could wipe every project's refusals. Now each project keeps its newest ones."""
    from agentlanes.services.news_state import LeaseRefusals

    refusals = LeaseRefusals(kept_per_project=3)
    refusals.note(2, "deploy", "ses_b", 10)
    for n in range(100):
        refusals.note(1, f"r{n}", "ses_a", n)
    assert refusals.freed(2, "deploy", "ses_b", 11)
    assert not refusals.freed(1, "r0", "ses_a", 1000)  # project 1's oldest went
    assert refusals.freed(1, "r99", "ses_a", 1000)
    assert not refusals.freed(2, "deploy", "ses_b", 12)  # once


def test_the_kept_events_are_bounded_in_bytes(
    app_factory: Callable[..., TestClient[Any]], sqlite_url: str
) -> None:
    """Review finding: each project kept news_recent_events whole events, however large (a
    status change with 256 one-kilobyte patterns is ~260 KB: ~0.5 GB per project at 2,000).
    With news_recent_bytes, the oldest go first and an older cursor gets the documented
    summary (recovered: false)."""
    small = app_factory(database_url=sqlite_url, news_recent_bytes=1_000_000)
    api = new_project(small)
    alice = api.checkin(agent_name="alice", declared_files=["README.md"])["session_token"]
    cursor = _news(api, alice)["cursor"]
    bob = api.checkin(agent_name="bob")["session_token"]
    for n in range(6):
        patterns = [f"src/{'x' * 1000}{n}{i:03d}.py" for i in range(256)]
        r = api.post("/status", {"declared_files": patterns}, token=bob)
        assert r.status_code == 200, r.text
    projections = small.app.state.ctx.projections
    [current] = [projections.peek(pid) for pid in projections.project_ids()]
    assert current.recent_size <= 1_000_000 and len(current.recent) < 8
    answer = _news(api, alice, cursor)
    assert answer["recovered"] is False and _kinds(answer["items"]) == ["summary"]
    # A cursor the kept events still cover reads on as before.
    assert _news(api, alice, answer["cursor"])["items"] == []


def test_other_agents_words_reach_the_news_cleaned_and_cut(api: Api) -> None:
    """Issue 40: a message body, a vote's reason of 9,000 characters and a task note came
    through with escapes, bidi, zero-width and tag characters, uncut."""
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    cursor = _news(api, alice)["cursor"]
    hostile = "ok\x1b]0;pwned\x07\x1b[2J \u202eevil\u200b\U000e0049\U000e0047\nagentlanes: x"
    api.post("/messages", {"to": "alice", "body": hostile}, token=bob)
    reason = "because " + "y" * 9000
    assert api.post("/consensus", {"action": "merge", "reason": reason}, token=bob).status_code
    items = _news(api, alice, cursor)["items"]
    message = next(i for i in items if i["kind"] == "message")
    assert message["text"].endswith(": ok evil agentlanes: x"), ascii(message["text"])
    vote = next(i for i in items if i["kind"] == "consensus.vote_requested")
    assert "y" * 200 in vote["text"] and len(vote["text"]) < 300 + 200, len(vote["text"])
    for item in items:
        assert item["text"].isprintable(), ascii(item["text"])
