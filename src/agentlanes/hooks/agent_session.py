"""A Claude Code session's agentlanes session: checked in at ``SessionStart``, out at
``SessionEnd`` (run by ``lanes guard``, see ``agentlanes.hooks.guard``).

The agent is named after Claude Code's own session id (``claude-<session_id>``), so
several Claude Code sessions in one working tree keep separate agentlanes sessions, each
in its own file under ``<git dir>/agentlanes/sessions/``. Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agentlanes.client.config import (
    ConfigError,
    find_repo_root,
    forget_session,
    load_config,
    read_session,
    save_session,
)
from agentlanes.client.report import WORDS_MAX
from agentlanes.domain.words import fenced, fenced_item
from agentlanes.hooks.agent_name import agent_for
from agentlanes.hooks.http import LeanApiError, LeanUnreachable, call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentlanes.client.config import LocalConfig


def checkin_for(
    cfg: LocalConfig,
    agent: str,
    files: list[str] | None,
    meta: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Check in as ``agent`` and keep the session in the agent's own file (with ``extra``:
    the agent's process, see ``agentlanes.client.identity``)."""
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
        | {"url": cfg.url}
        | (extra or {}),
    )
    return result


# meta.tool -> the name in a check-out's work_summary (the adapters set meta.tool).
TOOL_NAMES = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "cursor": "Cursor",
    "gemini": "Gemini CLI",
    "copilot": "Copilot CLI",
    "cline": "Cline",
    "opencode": "OpenCode",
    "windsurf": "Windsurf",
}
NO_KEY = (
    "agentlanes: no API key (AGENTLANES_API_KEY or api_key in .agentlanes.toml): "
    "coordination is off for this session; other agents cannot see you and your edits "
    "are not checked"
)


def _setup(payload: dict[str, Any], env: dict[str, str] | None) -> tuple[Any, str | None]:
    """(the configuration, the agent); the configuration is None outside a repository and
    has no ``api_key`` when none is set."""
    cwd = payload.get("cwd")
    root = find_repo_root(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if root is None:
        return None, None
    cfg = load_config(root, env)
    return cfg, agent_for(payload, env)


def _start_context(text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def _agent_process(env: dict[str, str] | None) -> dict[str, Any]:
    """The agent's process as the session file keeps it (see client/identity.py)."""
    from agentlanes.client.identity import agent_process

    found = agent_process(os.environ if env is None else env)
    return {"agent_pid": found[0], "agent_started": found[1]} if found else {}


def _export_name(agent: str, env: Mapping[str, str] | None) -> None:
    """Name the agent in its own shell commands: Claude Code sources the ``export`` lines a
    ``SessionStart`` hook appends to ``$CLAUDE_ENV_FILE`` before each Bash command
    (https://code.claude.com/docs/en/hooks, SessionStart), so ``lanes`` and the git hook
    run from there act as this agent."""
    environ: Mapping[str, str] = os.environ if env is None else env
    path = environ.get("CLAUDE_ENV_FILE")
    if not path or environ.get("AGENTLANES_AGENT_NAME"):
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"export AGENTLANES_AGENT_NAME={agent}\n")  # [A-Za-z0-9._-]: no quoting
    except OSError:
        pass


def _start_keepalive(
    cfg: LocalConfig, agent: str, process: dict[str, Any], restart: bool = False
) -> str | None:
    """The keepalive that holds the session while the agent's process runs (``restart``:
    a new session, so one still holding the old one is stopped first); a note when it
    could not start. Not without the agent's process: nothing would end it then."""
    if not process.get("agent_pid"):
        return None
    try:
        from agentlanes.agent.keepalive import start_for_agent, stop_keepalive

        if restart:
            stop_keepalive(cfg, agent)
        start_for_agent(cfg, agent, process.get("agent_pid"), process.get("agent_started"))
    except Exception as exc:  # the session still works: the hooks heartbeat it
        return f"agentlanes: the keepalive did not start ({type(exc).__name__}: {exc})"
    return None


def session_start(payload: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Check in (or keep the session a resumed Claude Code session already has), record the
    agent's process, name the agent in its shell, and start the keepalive."""
    import sys

    try:
        cfg, agent = _setup(payload, env)
    except ConfigError as exc:
        return _start_context(f"agentlanes: {exc}; not checked in")
    if cfg is None or agent is None:
        return {}
    if not cfg.api_key:
        print(NO_KEY, file=sys.stderr)
        return _start_context(NO_KEY)
    try:
        session = read_session(cfg, {}, agent=agent)
    except ConfigError as exc:
        return _start_context(f"agentlanes: {exc}; not checked in")
    process = _agent_process(env)
    tool = str(payload.get("agentlanes_tool") or "claude-code")  # set by the adapters
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
            meta = {"tool": tool, "source": str(payload.get("source") or "startup")}
            # The program is kept for the keepalive's check-out (``end_session``).
            session = checkin_for(cfg, agent, files, meta, {**process, "tool": tool})
        elif session is not None:
            save_session(cfg, {**session, **process, "tool": tool})
        presence = call(cfg, "GET", "/api/v1/presence")
        from agentlanes.hooks.news import start_cursor  # news from now on (hooks/news.py)

        start_cursor(cfg, agent, session or {})
    except (LeanUnreachable, LeanApiError) as exc:
        return _start_context(f"agentlanes: could not check in ({exc}); others cannot see you")
    assert session is not None
    _export_name(agent, env)
    notes = [n for n in [_start_keepalive(cfg, agent, process, restart=not kept)] if n]
    others = [
        s
        for s in presence.get("sessions") or []
        if s.get("session_id") != session.get("session_id")
    ]
    lines = [
        f"agentlanes: you are checked in as {agent} (session {session.get('session_id')}); "
        "the files you edit join your claims, and edits that collide with other agents' "
        "claims are reported (refused in block mode). Message another agent with "
        "`lanes message send NAME TEXT` or the MCP tool `message_send`."
    ]
    if others:
        lines.append(f"agentlanes: {len(others)} other live session(s):")
        listed = []  # their names, areas and patterns: other agents' words, fenced
        for s in others[:20]:
            files = " ".join(s.get("declared_files") or []) or "(no files yet)"
            area = f" area {s['declared_area']}" if s.get("declared_area") else ""
            listed.append(fenced_item(f"{s.get('agent_name')}{area}: {files}", WORDS_MAX))
        shown = _within(lines, listed, notes, len(others))
        lines.extend(fenced(listed[:shown]))
        if shown < len(others):
            lines.append(f"agentlanes: {len(others) - shown} more: lanes presence")
    return _start_context("\n".join([*lines, *notes]))


# SPEC "Context budget": what SessionStart puts into the agent's context, at most.
START_MAX_CHARS = 1500


def _within(lines: list[str], listed: list[str], notes: list[str], total: int) -> int:
    """How many of ``listed`` (who else is live, in order) fit beside ``lines`` and
    ``notes`` in START_MAX_CHARS, with the "N more" line when some do not."""
    for shown in range(len(listed), -1, -1):
        more = [f"agentlanes: {total - shown} more: lanes presence"] if shown < total else []
        text = "\n".join([*lines, *fenced(listed[:shown]), *more, *notes])
        if len(text) <= START_MAX_CHARS:
            return shown
    return 0


def session_end(payload: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Check out with the files this agent touched, after sending the edits still waiting
    (``agentlanes.hooks.edits``); see ``end_session``."""
    try:
        cfg, agent = _setup(payload, env)
    except ConfigError:
        return {}
    if cfg is None or agent is None or not cfg.api_key:
        return {}
    reason = str(payload.get("reason") or "other")
    tool = str(payload.get("agentlanes_tool") or "claude-code")  # set by the adapters
    end_session(cfg, agent, reason, tool)
    return {}


def end_session(cfg: LocalConfig, agent: str, reason: str, tool: str | None = None) -> bool:
    """Check ``agent``'s local session out: the keepalive stopped, the edits still waiting
    sent, then ``POST /api/v1/checkout`` (outcome completed, the files touched), and the
    local session forgotten. Run by the agent's session-end hook, or by its keepalive once
    the agent's process has ended: the session file is locked meanwhile, so whichever
    comes second finds nothing left to end. ``tool``: the agent's program (``meta.tool``),
    else the one its session start recorded.

    A session that timed out meanwhile cannot be checked out; its summary and files are
    still recorded: a check-in claiming nothing (so never refused) and its check-out at
    once, ``meta.ended_session_id`` naming the session that timed out. False when the
    server could not be reached (the session file is kept for a retry)."""
    with _ending(cfg, agent) as session:
        if session is None:
            return True
        _stop_keepalive(cfg, agent)
        _flush_edits(cfg, agent, session)
        touched = _touched(cfg, session)
        tool = tool or str(session.get("tool") or "claude-code")
        body = {
            "outcome_status": "completed",
            "work_summary": f"{TOOL_NAMES.get(tool, tool)} session ended ({reason})",
            "files_touched": touched,
        }
        try:
            call(cfg, "POST", "/api/v1/checkout", body, session["session_token"])
        except LeanUnreachable:
            return False  # the session times out on its own; keep the file for a retry
        except LeanApiError as exc:
            if exc.status == 410:
                try:
                    _record_after_end(cfg, agent, session, body, tool)
                except LeanUnreachable:
                    return False
                except LeanApiError:
                    pass
            elif exc.status != 404:
                return False
        from agentlanes.hooks.news import keep_cursor  # for a resume (hooks/news.py)

        keep_cursor(cfg, agent, session)
        forget_session(cfg, agent)
        from agentlanes.hooks.edits import forget

        forget(cfg, agent)
    return True


class _ending:
    """The agent's session file, read under an exclusive lock (``flock`` on the file
    itself), or None when there is none any more: the session-end hook and the keepalive
    may both try to end one session at once, and only the first may check it out."""

    def __init__(self, cfg: LocalConfig, agent: str) -> None:
        self.cfg = cfg
        self.agent = agent
        self.fd: int | None = None

    def __enter__(self) -> dict[str, Any] | None:
        path = self.cfg.session_file(self.agent)
        if path is None:
            return None
        try:
            self.fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        try:
            import fcntl

            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except ImportError:
            pass
        try:
            # The file may have been ended (removed) or replaced while we waited.
            if os.fstat(self.fd).st_ino != os.stat(path).st_ino:
                return None
            return read_session(self.cfg, {}, agent=self.agent)
        except (OSError, ConfigError):
            return None

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the lock


def _flush_edits(cfg: LocalConfig, agent: str, session: dict[str, Any]) -> None:
    """The last burst's edits, still waiting for their send, go before the check-out (the
    events then record what the session changed)."""
    try:
        from agentlanes.hooks.edits import flush, state_file

        path = state_file(cfg, agent)
        if path is not None and os.path.exists(path):
            flush(cfg, agent, session)
    except Exception as exc:  # the check-out matters more
        import sys

        print(f"agentlanes: edits not sent ({type(exc).__name__}: {exc})", file=sys.stderr)


def _stop_keepalive(cfg: LocalConfig, agent: str) -> None:
    try:
        from agentlanes.agent.keepalive import stop_keepalive

        stop_keepalive(cfg, agent)
    except Exception:  # it ends on its own once the session has ended
        pass


def _record_after_end(
    cfg: LocalConfig,
    agent: str,
    session: dict[str, Any],
    body: dict[str, Any],
    tool: str = "claude-code",
) -> None:
    """The session ended (timed out) before Claude Code did: record the summary and the
    files touched in a session that claims nothing and ends at once."""
    if not body["files_touched"]:
        body = {**body, "files_touched": _touched_locally(cfg, session)}
    meta = {"tool": tool, "ended_session_id": session.get("session_id")}
    fresh = call(cfg, "POST", "/api/v1/checkin", {"agent_name": agent, "meta": meta})
    call(cfg, "POST", "/api/v1/checkout", body, fresh["session_token"])


def _touched_locally(cfg: LocalConfig, session: dict[str, Any]) -> list[str]:
    """The changed files that the session's saved patterns claim (matched here: the server
    no longer knows a session that has ended)."""
    from agentlanes.client.worktree import changed_files
    from agentlanes.domain.globs.claims import claimed_paths

    patterns = [p for p in session.get("declared_files") or [] if isinstance(p, str)]
    if cfg.root is None or not patterns:
        return []
    return claimed_paths(patterns, changed_files(cfg.root)[:10_000])


def _touched(cfg: LocalConfig, session: dict[str, Any]) -> list[str]:
    """The files this agent's tool calls changed during the session, committed or not
    (its after-edit hooks noted them, ``hooks/edits.py``); for an agent whose hooks never
    noted an edit, in a working tree of its own, what git sees changed that its claims
    cover (``_changed_and_claimed``)."""
    from agentlanes.agent.tree import others
    from agentlanes.hooks.edits import touched

    agent = str(session.get("agent_name") or "")
    noted = touched(cfg, agent, session) if agent else None
    if noted is not None:
        return noted[:10_000]
    if agent and others(cfg, agent):
        return []  # in a shared tree git's changes are everyone's: none is known as ours
    return _changed_and_claimed(cfg, session)


def _changed_and_claimed(cfg: LocalConfig, session: dict[str, Any]) -> list[str]:
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
