"""services.scope: the per-project detector, generated names, the pattern limits."""

from __future__ import annotations

from agentlanes.clock import utcnow
from agentlanes.services.scope import DetectorCache
from agentlanes.store.models import AgentSession


def _session(sid: str, name: str, files: list[str], area: str | None = None) -> AgentSession:
    now = utcnow()
    return AgentSession(
        id=sid, project_id=1, agent_name=name, declared_area=area, declared_files=files,
        status="active", started_at=now, last_heartbeat_at=now, expires_at=now,
    )  # fmt: skip


def test_cache_follows_added_changed_and_removed_sessions() -> None:
    cache = DetectorCache()
    a = _session("s1", "alice", ["src/**"])
    b = _session("s2", "bob", ["docs/**"])
    assert [c.agent_name for c in cache.find(1, [a, b], patterns=["src/x.py", "docs/a.md"])] == [
        "alice",
        "bob",
    ]
    b2 = _session("s2", "bob", ["web/**"])
    assert [c.agent_name for c in cache.find(1, [a, b2], patterns=["docs/a.md"])] == []
    assert [c.agent_name for c in cache.find(1, [b2], patterns=["src/x.py", "web/i.js"])] == ["bob"]


def test_projects_are_kept_apart_and_the_cache_is_bounded() -> None:
    cache = DetectorCache(max_projects=2)
    for project_id in range(1, 5):
        s = _session(f"s{project_id}", f"agent{project_id}", [f"p{project_id}/**"])
        [c] = cache.find(project_id, [s], patterns=[f"p{project_id}/a"])
        assert c.session_id == f"s{project_id}"
    assert cache.find(9, [], patterns=["p1/a"]) == []
    assert len(cache._entries) == 2


def test_exclusions_by_session_and_by_name() -> None:
    cache = DetectorCache()
    live = [_session("s1", "alice", ["a/**"]), _session("s2", "bob", ["a/**"])]
    assert [
        c.agent_name for c in cache.find(1, live, patterns=["a/b"], exclude_session_id="s1")
    ] == ["bob"]
    assert [
        c.agent_name for c in cache.find(1, live, patterns=["a/b"], exclude_agent_name="bob")
    ] == ["alice"]


def test_generated_names_avoid_live_names() -> None:
    from agentlanes.services import scope

    every = {f"agent-{a}-{n}" for a in scope._ADJECTIVES for n in range(10, 100)}
    name = scope.generated_agent_name(every)
    assert name not in every and name.startswith("agent-")
    assert scope.AGENT_NAME_RE.match(name)


def test_the_server_limits_are_the_engine_defaults() -> None:
    """The settings file is the one source; the domain's defaults (used by the hook and
    the editor guard without settings) must say the same."""
    from agentlanes.domain.patterns import PatternLimits
    from agentlanes.services.scope import limits
    from agentlanes.settings import Settings

    assert limits(Settings()) == PatternLimits()
