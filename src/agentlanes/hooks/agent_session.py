"""A Claude Code session's agentlanes session: checked in at ``SessionStart``, out at
``SessionEnd`` (run by ``lanes guard``, see ``agentlanes.hooks.guard``).

The agent is named after Claude Code's own session id (``claude-<session_id>``), so
several Claude Code sessions in one working tree keep separate agentlanes sessions, each
in its own file under ``<git dir>/agentlanes/sessions/``. Standard library only.
"""

from __future__ import annotations

import os

from agentlanes.client.config import (
    ConfigError,
    find_repo_root,
    forget_session,
    load_config,
    read_session,
    save_session,
)
from agentlanes.hooks.agent_name import agent_for
from agentlanes.hooks.http import LeanApiError, LeanUnreachable, call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentlanes.client.config import LocalConfig


def checkin_for(
    cfg: LocalConfig, agent: str, files: list[str] | None, meta: dict[str, Any]
) -> dict[str, Any]:
    """Check in as ``agent`` and keep the session in the agent's own file."""
    body: dict[str, Any] = {"agent_name": agent, "meta": meta}
    if files:
        body["declared_files"] = files
    result = call(cfg, "POST", "/api/v1/checkin", body)
    save_session(
        cfg,
        {
            key: result.get(key)
            for key in (
                "session_id",
                "session_token",
                "agent_name",
                "declared_area",
                "declared_files",
                "heartbeat_interval_seconds",
                "heartbeat_ttl_seconds",
            )
        }
        | {"url": cfg.url},
    )
    return result  # type: ignore[no-any-return]


def _setup(payload: dict[str, Any], env: dict[str, str] | None) -> tuple[Any, str | None]:
    cwd = payload.get("cwd")
    root = find_repo_root(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if root is None:
        return None, None
    cfg = load_config(root, env)
    return (cfg if cfg.api_key else None), agent_for(payload, env)


def _start_context(text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def session_start(payload: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Check in (or keep the session a resumed Claude Code session already has)."""
    try:
        cfg, agent = _setup(payload, env)
    except ConfigError as exc:
        return _start_context(f"agentlanes: {exc}; not checked in")
    if cfg is None or agent is None:
        return {}
    try:
        session = read_session(cfg, {}, agent=agent)
    except ConfigError as exc:
        return _start_context(f"agentlanes: {exc}; not checked in")
    try:
        if session is not None:
            try:
                call(cfg, "POST", "/api/v1/heartbeat", {}, session["session_token"])
                kept = True
            except LeanApiError as exc:
                if exc.status not in (404, 410):
                    raise
                kept = False
        else:
            kept = False
        if not kept:
            files = (session or {}).get("declared_files") or None
            meta = {"tool": "claude-code", "source": str(payload.get("source") or "startup")}
            session = checkin_for(cfg, agent, files, meta)
        presence = call(cfg, "GET", "/api/v1/presence")
        from agentlanes.hooks.news import start_cursor  # news from now on (hooks/news.py)

        start_cursor(cfg, agent, session)
    except (LeanUnreachable, LeanApiError) as exc:
        return _start_context(f"agentlanes: could not check in ({exc}); others cannot see you")
    assert session is not None
    others = [
        s
        for s in presence.get("sessions") or []
        if s.get("session_id") != session.get("session_id")
    ]
    lines = [
        f"agentlanes: you are checked in as {agent} (session {session.get('session_id')}); "
        "the files you edit join your claims, and edits that collide with other agents' "
        "claims are reported (refused in block mode)."
    ]
    if others:
        lines.append(f"agentlanes: {len(others)} other live session(s):")
        for s in others[:20]:
            files = " ".join(s.get("declared_files") or []) or "(no files yet)"
            area = f" area {s['declared_area']}" if s.get("declared_area") else ""
            lines.append(f"agentlanes:   {s.get('agent_name')}{area}: {files}")
    return _start_context("\n".join(lines))


def session_end(payload: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Check out with the changed files (as git sees them) that this session claims."""
    try:
        cfg, agent = _setup(payload, env)
    except ConfigError:
        return {}
    if cfg is None or agent is None:
        return {}
    try:
        session = read_session(cfg, {}, agent=agent)
    except ConfigError:
        return {}
    if session is None:
        return {}
    touched = _touched(cfg, session)
    reason = payload.get("reason") or "other"
    body = {
        "outcome_status": "completed",
        "work_summary": f"Claude Code session ended ({reason})",
        "files_touched": touched,
    }
    try:
        call(cfg, "POST", "/api/v1/checkout", body, session["session_token"])
    except LeanUnreachable:
        return {}  # the session times out on its own; keep the file for a retry
    except LeanApiError as exc:
        if exc.status not in (404, 410):
            return {}
    forget_session(cfg, agent)
    return {}


def _touched(cfg: LocalConfig, session: dict[str, Any]) -> list[str]:
    """The files git sees changed or untracked that this session's claims cover.

    Other agents may work in the same tree, so not every change is ours: the server says
    which changed files our own patterns claim (the check without a token reports our own
    session too). Outside a repository, or when the server cannot say: none.
    """
    from agentlanes.client.worktree import changed_files

    if cfg.root is None:
        return []
    changed = changed_files(cfg.root)[:10_000]
    if not changed:
        return []
    try:
        answer = call(cfg, "POST", "/api/v1/conflicts/check", {"paths": changed})
    except (LeanUnreachable, LeanApiError):
        return []
    mine = session.get("session_id")
    claimed = {
        f.get("example")
        for c in answer.get("conflicts") or []
        if c.get("session_id") == mine
        for f in c.get("overlapping_files") or []
    }
    return [p for p in changed if p in claimed]
