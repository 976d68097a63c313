"""Lifecycles leak nothing (SPEC, "One agent cannot hurt another"; #24 findings 4 and 5,
#28 "Changes take effect at once everywhere"): a deleted project's sockets close and its
ids are never handed out again; a revoked key's sockets and browser tokens stop at once;
a rotated key's sockets close when its grace ends; a change written to the database by
another process (``agentlanes project … --database``) takes effect here within a second."""

from __future__ import annotations

import queue
import time
from datetime import datetime
from typing import Any

import pytest
from litestar.exceptions import WebSocketDisconnect
from litestar.testing import TestClient

from agentlanes.cli.admin_route import DatabaseRoute
from agentlanes.services import projects
from tests.api.conftest import ADMIN, Api, new_project


def _socket(api: Api, *, key: str | None = None, token: str | None = None) -> Any:
    if token is not None:
        return api.client.websocket_connect(f"/api/v1/events?token={token}")
    return api.client.websocket_connect("/api/v1/events", headers={"X-API-Key": key or api.key})


def _closed_with(ws: Any, within: float = 5.0) -> int:
    """Read frames until the server closes the socket; its close code."""
    deadline = time.monotonic() + within
    while (left := deadline - time.monotonic()) > 0:
        try:
            ws.receive_json(timeout=left)
        except queue.Empty:
            break
        except WebSocketDisconnect as exc:
            return int(exc.code)
    raise AssertionError(f"the socket stayed open for {within} s")


def _token(api: Api, key: str | None = None) -> str:
    r = api.client.post("/api/v1/realtime/token", headers={"X-API-Key": key or api.key})
    assert r.status_code == 201, r.text
    return r.json()["token"]  # type: ignore[no-any-return]


def _admin(client: TestClient[Any], method: str, path: str, **body: Any) -> dict[str, Any]:
    r = client.request(method, f"/api/v1/projects{path}", headers=ADMIN, json=body or None)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_deleting_a_project_closes_its_sockets_and_its_id_is_never_reused(
    client: TestClient[Any],
) -> None:
    old = new_project(client)
    old.checkin(agent_name="alice", declared_area="secret", declared_files=["a/**"])
    token = _token(old)
    with _socket(old) as by_key, _socket(old, token=token) as by_token:
        assert by_key.receive_json()["type"] == "presence.snapshot"
        assert by_token.receive_json()["type"] == "presence.snapshot"
        _admin(client, "DELETE", f"/{old.project['slug']}")
        assert _closed_with(by_key) == 4401
        assert _closed_with(by_token) == 4401
    # Made right after: on SQLite it got the deleted one's id before AUTOINCREMENT.
    new = new_project(client)
    assert new.get("/presence").json()["sessions"] == []
    assert old.get("/presence").status_code == 401
    assert old.post("/checkin", {"agent_name": "x"}).status_code == 401
    with _socket(old) as ws:
        assert _closed_with(ws) == 4401


def test_revoking_the_key_closes_its_sockets_and_ends_its_browser_tokens(
    client: TestClient[Any],
) -> None:
    api = new_project(client)
    other = new_project(client)
    token = _token(api)
    unused = _token(api)
    with (
        _socket(api) as by_key,
        _socket(api, token=token) as by_token,
        _socket(other) as bystander,
    ):
        for ws in (by_key, by_token, bystander):
            assert ws.receive_json()["type"] == "presence.snapshot"
        _admin(client, "POST", f"/{api.project['slug']}/revoke-key")
        assert _closed_with(by_key) == 4401
        assert _closed_with(by_token) == 4401
        bystander.send_json({"type": "ping"})
        assert bystander.receive_json()["type"] == "pong"  # another project's stays
    with _socket(api, token=unused) as ws:
        assert _closed_with(ws) == 4401  # minted before the revoke: refused too


def test_a_rotated_keys_sockets_close_when_its_grace_ends(client: TestClient[Any]) -> None:
    api = new_project(client)
    with _socket(api) as old_socket:
        assert old_socket.receive_json()["type"] == "presence.snapshot"
        rotated = _admin(client, "POST", f"/{api.project['slug']}/rotate-key", grace_seconds=2)
        started = time.monotonic()
        new_key = rotated["api_key"]
        with _socket(api, key=new_key) as new_socket:
            assert new_socket.receive_json()["type"] == "presence.snapshot"
            # In the grace: the old key still opens a socket and mints tokens.
            token = _token(api)
            assert _closed_with(old_socket, within=6) == 4401
            waited = time.monotonic() - started
            assert 1.5 <= waited <= 3.5, waited
            with _socket(api, token=token) as late:
                assert _closed_with(late) == 4401  # the token ended with the grace
            new_socket.send_json({"type": "ping"})
            assert new_socket.receive_json()["type"] == "pong"
    # Grace 0: the old key's sockets close at once.
    with _socket(api, key=new_key) as ws:
        assert ws.receive_json()["type"] == "presence.snapshot"
        _admin(client, "POST", f"/{api.project['slug']}/rotate-key", grace_seconds=0)
        assert _closed_with(ws) == 4401


@pytest.mark.parametrize(
    "change",
    ["rotate-key grace 0", "revoke-key", "delete", "mode", "ttl"],
)
def test_a_change_written_to_the_database_by_another_process_applies_within_a_second(
    client: TestClient[Any], make_settings: Any, database_url: str, change: str
) -> None:
    """``agentlanes project … --database`` (or the admin API off) writes the database
    from another process: this server applies it within a second (project watch), with
    no 30 s cache in the way, and a deleted project's key is a 401, never a 500."""
    api = new_project(client)
    slug = api.project["slug"]
    tok = api.checkin(agent_name="alice")["session_token"]
    assert api.get("/project").status_code == 200  # the key is cached now
    route = DatabaseRoute(make_settings(database_url=database_url))
    with _socket(api) as ws:
        assert ws.receive_json()["type"] == "presence.snapshot"
        if change == "rotate-key grace 0":
            route.run(projects.rotate_key, slug, 0)
        elif change == "revoke-key":
            route.run(projects.revoke_key, slug)
        elif change == "delete":
            route.run(projects.delete_project, slug)
        elif change == "mode":
            route.run(projects.update_project, slug, projects.ProjectChanges(conflict_mode="block"))
        else:
            route.run(
                projects.update_project, slug, projects.ProjectChanges(heartbeat_ttl_seconds=300)
            )
        started = time.monotonic()
        if change in ("mode", "ttl"):
            field, value = (
                ("conflict_mode", "block") if change == "mode" else ("heartbeat_ttl_seconds", 300)
            )
            while api.get("/project").json()[field] != value:
                assert time.monotonic() - started < 1.0, "the change took over a second"
                time.sleep(0.05)
            r = api.post("/heartbeat", {}, token=tok)
            assert r.status_code == 200, r.text
            if change == "ttl":
                beat = r.json()
                lasts = datetime.fromisoformat(beat["expires_at"]) - datetime.fromisoformat(
                    beat["last_heartbeat_at"]
                )
                assert lasts.total_seconds() == pytest.approx(300, abs=1)
            return
        while (status := api.get("/project").status_code) == 200:
            assert time.monotonic() - started < 1.0, "the old key worked for over a second"
            time.sleep(0.05)
        assert status == 401
        assert _closed_with(ws, within=1.5) == 4401
        assert time.monotonic() - started < 1.5
        for path, body in (("/checkin", {"agent_name": "bob"}), ("/heartbeat", {})):
            r = api.post(path, body, token=tok)
            assert r.status_code == 401, (path, r.status_code, r.text)


def test_over_max_sockets_per_project_the_next_socket_closes_with_4429(
    app_factory: Any, sqlite_url: str
) -> None:
    client = app_factory(database_url=sqlite_url, max_sockets_per_project=2)
    api = new_project(client)
    other = new_project(client)
    with _socket(api) as first, _socket(api) as second:
        for ws in (first, second):
            assert ws.receive_json()["type"] == "presence.snapshot"
        with _socket(api) as third:
            refusal = third.receive_json()
            assert refusal["error"]["code"] == "TOO_MANY_SOCKETS"
            assert "max_sockets_per_project" in refusal["error"]["message"]
            assert _closed_with(third) == 4429
        with _socket(other) as elsewhere:  # counted per project
            assert elsewhere.receive_json()["type"] == "presence.snapshot"
    # The count goes down as the server ends their handlers (a moment after the close).
    deadline = time.monotonic() + 3
    while True:
        with _socket(api) as again:
            if again.receive_json()["type"] == "presence.snapshot":
                break
        assert time.monotonic() < deadline, "the closed sockets were still counted"
        time.sleep(0.1)


def test_messages_older_than_message_retention_days_are_pruned(
    app_factory: Any, sqlite_url: str
) -> None:
    client = app_factory(
        database_url=sqlite_url, message_retention_days=1 / 86_400, event_prune_seconds=0.2
    )
    api = new_project(client)
    alice = api.checkin(agent_name="alice")["session_token"]
    bob = api.checkin(agent_name="bob")["session_token"]
    old = api.post("/messages", {"to": "bob", "body": "old"}, token=alice).json()
    api.post(f"/messages/{old['message_id']}/read", token=bob)
    deadline = time.monotonic() + 5
    while api.get("/messages/inbox", token=bob).json()["total"]:
        assert time.monotonic() < deadline, "the old message was never pruned"
        time.sleep(0.2)
    fresh = api.post("/messages", {"to": "bob", "body": "new"}, token=alice).json()
    inbox = api.get("/messages/inbox", token=bob).json()
    assert [m["message_id"] for m in inbox["messages"]] == [fresh["message_id"]]
