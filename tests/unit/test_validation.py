"""The per-project live projection and its detector, generated names, the pattern limits."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agentlanes.clock import iso, utcnow
from agentlanes.services.liveness import MemoryLiveness
from agentlanes.services.projection import LiveProject, Projections


def _checkin(offset: int, sid: str, name: str, files: list[str], area: str | None = None) -> Any:
    now = utcnow()
    view = {
        "session_id": sid, "agent_name": name, "declared_area": area, "declared_files": files,
        "status_text": None, "meta": {}, "started_at": iso(now), "last_heartbeat_at": iso(now),
        "expires_at": iso(now + timedelta(seconds=60)),
    }  # fmt: skip
    return {"offset": offset, "type": "agent.checkin", "data": {"session": view}}


def _names(project: LiveProject, **kw: Any) -> list[str]:
    return [c.agent_name for c in project.find(list(project.sessions.values()), **kw)]


def test_projection_follows_checkins_scope_changes_and_ends_by_offset() -> None:
    project = LiveProject(1, 0, [])
    assert project.apply(_checkin(1, "s1", "alice", ["src/**"]))
    assert project.apply(_checkin(2, "s2", "bob", ["docs/**"]))
    assert _names(project, patterns=["src/x.py", "docs/a.md"]) == ["alice", "bob"]
    changed = _checkin(3, "s2", "bob", ["web/**"])
    changed["type"] = "agent.status"
    assert project.apply(changed)
    assert _names(project, patterns=["docs/a.md"]) == []
    assert project.apply({"offset": 4, "type": "agent.checkout", "data": {"session_id": "s1"}})
    assert _names(project, patterns=["src/x.py", "web/i.js"]) == ["bob"]
    # Offsets apply once and in order: a repeat is ignored, a gap refused.
    assert project.apply(_checkin(2, "s9", "late", ["src/**"]))
    assert "s9" not in project.sessions
    assert not project.apply(_checkin(6, "s9", "late", ["src/**"]))
    assert project.offset == 4


def test_exclusions_by_session_and_by_name() -> None:
    project = LiveProject(1, 0, [])
    project.apply(_checkin(1, "s1", "alice", ["a/**"]))
    project.apply(_checkin(2, "s2", "bob", ["a/**"]))
    assert _names(project, patterns=["a/b"], exclude_session_id="s1") == ["bob"]
    assert _names(project, patterns=["a/b"], exclude_agent_name="bob") == ["alice"]


async def _overdue_left_out() -> None:
    project = LiveProject(1, 0, [])
    project.apply(_checkin(1, "s1", "alice", ["a/**"]))
    project.apply(_checkin(2, "s2", "bob", ["a/**"]))
    project.sessions["s1"].expires_at = utcnow() - timedelta(seconds=1)
    liveness = MemoryLiveness(1.0)
    live = await project.live(liveness, utcnow())
    assert [s.agent_name for s in live] == ["bob"]
    assert [c.agent_name for c in project.find(live, patterns=["a/b"])] == ["bob"]
    # A heartbeat not yet written through keeps it live.
    await liveness.beat(1, "s1", 60, floor=None)
    live = await project.live(liveness, utcnow())
    assert [c.agent_name for c in project.find(live, patterns=["a/b"])] == ["alice", "bob"]


def test_overdue_sessions_are_left_out_unless_a_beat_keeps_them() -> None:
    import asyncio

    asyncio.run(_overdue_left_out())


def test_projections_are_bounded() -> None:
    projections = Projections(max_projects=2)
    for project_id in range(1, 5):
        projections._keep(LiveProject(project_id, 0, []))
    assert projections.peek(1) is None and projections.peek(4) is not None
    assert len(projections._projects) == 2


def test_generated_names_avoid_live_names() -> None:
    from agentlanes.services import names, validation

    every = {f"agent-{a}-{n}" for a in names._ADJECTIVES for n in range(10, 100)}
    name = names.generated_agent_name(every)
    assert name not in every and name.startswith("agent-")
    assert validation.AGENT_NAME_RE.match(name)


def test_the_server_limits_are_the_engine_defaults() -> None:
    """The settings file is the one source; the domain's defaults (used by the hook and
    the editor guard without settings) must say the same."""
    from agentlanes.domain import PatternLimits
    from agentlanes.services.validation import pattern_limits
    from agentlanes.settings import Settings

    assert pattern_limits(Settings()) == PatternLimits()
