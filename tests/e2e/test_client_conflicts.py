"""The client's conflicts endpoint and epoch against a real server process."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentlanes.client import ApiError, AsyncClient, Client
from tests.support.agents import new_project

pytestmark = pytest.mark.e2e


def test_clients_read_a_sessions_full_conflicts_and_the_epoch(agent_server: Any) -> None:
    key = new_project(agent_server.url)["api_key"]
    with Client(agent_server.url, key) as alice, Client(agent_server.url, key) as bob:
        a = alice.checkin("alice", None, ["docs/**"])
        bob.checkin("bob", None, ["docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md"])
        got = alice.session_conflicts(a.session_id)
        assert got.session_id == a.session_id and got.conflicts_total == 1
        [conflict] = got.conflicts
        assert conflict.agent_name == "bob" and len(conflict.overlapping_files) == 4
        epoch = alice.presence().epoch
        assert epoch and alice.event_log(since=0, epoch=epoch).recovered is True
        assert alice.event_log(since=0, epoch="another").recovered is False
        with pytest.raises(ApiError) as unknown:
            alice.session_conflicts("ses_000000000000000000000000")
        assert unknown.value.status == 404 and unknown.value.code == "SESSION_NOT_FOUND"
        alice.checkout()
        with pytest.raises(ApiError) as ended:
            bob.session_conflicts(a.session_id)
        assert ended.value.status == 410 and ended.value.code == "SESSION_ENDED"

    async def in_async() -> None:
        async with AsyncClient(agent_server.url, key) as carol:
            c = await carol.checkin("carol", None, ["docs/a.md"])
            got = await carol.session_conflicts(c.session_id)
            assert [x.agent_name for x in got.conflicts] == ["bob"]

    asyncio.run(in_async())
