"""Bounded per-process caches drop their least recently used entries when full, not
everything at once: a hot entry survives a flood of new ones."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentlanes.domain.globs import compiler
from agentlanes.domain.globs.automaton import GLOBSTAR
from agentlanes.hub import Frame
from agentlanes.hub import base as hub_base
from agentlanes.hub.memory import MemoryHub
from agentlanes.services import context, project_cache
from agentlanes.services.context import ServiceContext
from agentlanes.settings import LIMITS, Settings
from agentlanes.store.database import Database


def _frame(offset: int) -> Frame:
    return Frame.of({"offset": offset, "type": "agent.checkin", "data": {}})


def test_the_hub_keeps_the_newest_offset_of_recently_active_projects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hub_base, "NEWEST_KEPT", 3)
    hub = MemoryHub()
    for project_id in (1, 2, 3):
        hub.deliver_local(project_id, [_frame(10)])
    hub.deliver_local(1, [_frame(11)])  # project 1 is active again
    hub.deliver_local(4, [_frame(10)])  # full: the least recently used (2) goes
    assert [hub.newest(p) for p in (1, 2, 3, 4)] == [11, 0, 10, 10]


def test_the_context_keeps_the_tokens_used_recently(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(context, "LIMITS", dataclasses.replace(LIMITS, token_ids_kept=3))
    url = f"sqlite:///{tmp_path / 'a.db'}"
    ctx = ServiceContext(settings=Settings(database_url=url), db=Database(url), hub=MemoryHub())  # type: ignore[call-arg]
    for n in range(3):
        ctx.remember_token(1, f"t{n}", f"s{n}")
    assert ctx.known_token(1, "t0") == "s0"  # used: now the most recent
    ctx.remember_token(1, "t3", "s3")  # full: t1 goes, not every token
    assert [ctx.known_token(1, f"t{n}") for n in range(4)] == ["s0", None, "s2", "s3"]


def test_recent_projects_expire_and_keep_the_recently_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(project_cache.time, "monotonic", lambda: now[0])
    cache = project_cache.RecentProjects(ttl=30, size=3)
    for n in range(3):
        cache.put(f"k{n}", SimpleNamespace(id=n))
    assert cache.get("k0").id == 0  # used: now the most recent
    cache.put("k3", SimpleNamespace(id=3))  # full: k1 goes, not every entry
    assert [cache.get(f"k{n}") is not None for n in range(4)] == [True, False, True, True]
    assert cache.project_ids() == {0, 2, 3}
    now[0] += 31
    assert cache.get("k0") is None and cache.project_ids() == set()


def test_shared_rests_keep_the_recently_used_one_object_per_key() -> None:
    hot = compiler.shared_rest(((GLOBSTAR,),))

    def flood(start: int, n: int) -> None:
        for i in range(start, start + n):
            segment = SimpleNamespace(source=f"flood-{i}")
            compiler.shared_rest(((segment,),))  # type: ignore[arg-type]

    half = compiler.RESTS_KEPT * 2 // 3
    flood(0, half)
    assert compiler.shared_rest(((GLOBSTAR,),)) is hot  # used again
    flood(half, half)  # more than the bound in all, fewer since the last use
    assert compiler.shared_rest(((GLOBSTAR,),)) is hot
