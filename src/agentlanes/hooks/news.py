"""The agent's news in its context (SPEC "The agent's news"), for Claude Code's hooks.

Each hook call (``UserPromptSubmit``, ``PreToolUse`` for every tool, ``PostToolUse``) puts
the items the agent has not seen yet into ``additionalContext``, once per agent: the
cursor of the last item injected is kept in the agent's session file (``news_cursor``).
At most ``news_max_chars`` (2,000) per injection, ending with ``N more: lanes news``
when some did not fit (they come with the next call, or at once with ``lanes news``).
The items are other agents' words: cleaned (agentlanes.domain.words) and inside the
fenced ``<agentlanes-news ...>`` block of SPEC "Context budget", one line each.

Where the items come from:
- the keepalive's local news file (``sessions/<agent>.news.jsonl``), when the agent's
  keepalive runs and holds its socket subscribed to the news: no network call;
- else one ``GET /api/v1/news?after=<cursor>``.
The messages injected are then marked delivered (``POST /api/v1/news/delivered``).

``Stop`` blocks the stop once, with the items as the reason, when the agent has an
undelivered message or an unseen certain overlap (never when ``stop_hook_active``).

Claude Code's hook reference: https://code.claude.com/docs/en/hooks (see docs/agents.md).
Standard library only, like the rest of the guard.
"""

from __future__ import annotations

import json
import os

from agentlanes.agent.keepalive import running_keepalive
from agentlanes.client.config import ConfigError, find_repo_root, load_config, read_session
from agentlanes.domain.words import FENCE_CLOSE, FENCE_OPEN, fenced, fenced_item
from agentlanes.hooks.agent_name import agent_for
from agentlanes.hooks.http import LeanApiError, LeanUnreachable, call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentlanes.client.config import LocalConfig

NEWS_MAX_CHARS = 2000
# Seconds one news call may wait (at most the configured ``timeout``).
NEWS_TIMEOUT = 1.0
PREFIX = "agentlanes: "
# Items that need the agent before it stops.
URGENT_KINDS = ("message",)
CERTAIN_KINDS = ("overlap.began", "area.shared")


def news_file(cfg: LocalConfig, agent: str) -> str | None:
    """``sessions/<agent>.news.jsonl`` beside the agent's session file."""
    session_file = cfg.session_file(agent)
    return None if session_file is None else session_file[: -len(".json")] + ".news.jsonl"


def keepalive_running(cfg: LocalConfig, agent: str) -> bool:
    """The agent's keepalive (its pid file beside the session file) runs and holds the
    socket, so it writes the news file."""
    session_file = cfg.session_file(agent)
    if session_file is None:
        return False
    pid_file = session_file[: -len(".json")] + ".keepalive.pid"
    return running_keepalive(pid_file, socket=True) is not None


def _position(cursor: str | None) -> tuple[int, str] | None:
    if not isinstance(cursor, str) or "-" not in cursor:
        return None
    offset, _, epoch = cursor.partition("-")
    return (int(offset), epoch) if offset.isdigit() else None


def _after(item_cursor: str | None, cursor: str | None) -> bool:
    """Whether an item at ``item_cursor`` comes after ``cursor`` (another history: yes)."""
    mine, seen = _position(item_cursor), _position(cursor)
    if mine is None or seen is None or mine[1] != seen[1]:
        return True
    return mine[0] > seen[0]


def from_local_file(cfg: LocalConfig, agent: str, cursor: str | None) -> list[Any] | None:
    """The unseen items the keepalive wrote, or None when its file cannot stand in for a
    news call (no keepalive, no file, or it started after ``cursor``)."""
    path = news_file(cfg, agent)
    if path is None or not keepalive_running(cfg, agent):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    if not lines:
        return None
    try:
        head = json.loads(lines[0])
    except ValueError:
        return None
    start = head.get("from") if isinstance(head, dict) else None
    written = []
    for line in lines[1:]:
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a line being written
        if isinstance(item, dict):
            written.append(item)
    if start is None and written and written[0].get("kind") == "summary":
        # Started without a cursor: its news begins where its summary stood.
        start = written[0].get("cursor")
    if cursor is None or start is None or _after(start, cursor):
        return None  # the file does not cover what came right after our cursor
    return [item for item in written if _after(item.get("cursor"), cursor)]


def unseen(
    cfg: LocalConfig, agent: str, session: dict[str, Any], *, local_ok: bool = True
) -> tuple[list[Any], str | None, bool, bool]:
    """(items not yet in the agent's context, the cursor after all of them, whether the
    server has more, whether they came from the local file). ``local_ok=False``: ask the
    server even when a keepalive writes the local file (which may lag an event by a few
    hundred milliseconds)."""
    cursor = session.get("news_cursor")
    local = from_local_file(cfg, agent, cursor) if local_ok else None
    if local is not None:
        return local, (local[-1]["cursor"] if local else cursor), False, True
    path = "/api/v1/news" + (f"?after={cursor}" if cursor else "")
    answer = call(cfg, "GET", path, None, session["session_token"])
    return list(answer.get("items") or []), answer.get("cursor"), bool(answer.get("more")), False


def render(items: list[Any], more: bool, max_chars: int) -> tuple[list[str], int]:
    """The lines to inject and how many items they hold, within ``max_chars`` including
    the closing ``N more: lanes news`` line. The items are other agents' words: cleaned
    and fenced (SPEC "Context budget"), one line each; the service's own line after the
    fence starts with ``agentlanes:``."""
    fence = len(FENCE_OPEN) + len(FENCE_CLOSE) + 2
    body: list[str] = []
    used = fence
    shown = 0
    for k, item in enumerate(items):
        line = fenced_item(item.get("text") or "")
        rest = len(items) - k - 1
        tail = len(f"{PREFIX}{rest + 1}+ more: lanes news") + 1 if (rest or more) else 0
        if used + len(line) + 1 + tail > max_chars:
            if shown == 0:  # one long item: cut it rather than show nothing
                room = max_chars - used - 1 - len(f"{PREFIX}{len(items)}+ more: lanes news") - 2
                body.append(line[: max(room, 0)] + "…")
                shown = 1
            break
        body.append(line)
        used += len(line) + 1
        shown += 1
    lines = fenced(body)
    left = len(items) - shown
    if left:
        lines.append(f"{PREFIX}{left}{'+' if more else ''} more: lanes news")
    elif more:
        lines.append(f"{PREFIX}more: lanes news")
    return lines, shown


def _remember(cfg: LocalConfig, agent: str, cursor: str | None) -> None:
    """Keep the cursor in the agent's session file (re-read: others write it too)."""
    from agentlanes.client.config import save_session

    if not cursor:
        return
    try:
        fresh = read_session(cfg, {}, agent=agent)
    except ConfigError:
        return
    if fresh is not None and fresh.get("news_cursor") != cursor:
        fresh["news_cursor"] = cursor
        # The file's mtime is the last heartbeat (guard._heartbeat_due): keep it.
        source = fresh.get("source")
        try:
            beat = os.stat(source).st_mtime if source else None
        except OSError:
            beat = None
        path = save_session(cfg, fresh)
        if path and beat is not None:
            try:  # noqa: SIM105 - contextlib is one more import on every hook
                os.utime(path, (beat, beat))
            except OSError:
                pass


def _delivered(cfg: LocalConfig, session: dict[str, Any], items: list[Any]) -> None:
    ids = [i.get("message_id") for i in items if i.get("kind") == "message"]
    if ids:
        try:  # noqa: SIM105 - contextlib is one more import on every hook
            call(
                cfg,
                "POST",
                "/api/v1/news/delivered",
                {"message_ids": ids},
                session["session_token"],
            )
        except (LeanUnreachable, LeanApiError):
            pass  # delivered_at stays unset: the dashboard says so; the agent has them


def _setup(payload: dict[str, Any], env: dict[str, str] | None) -> Any:
    """(config, agent, session) for the hook's agent, or None when there is none."""
    cwd = payload.get("cwd")
    root = find_repo_root(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if root is None:
        return None
    try:
        cfg = load_config(root, env)
        agent = agent_for(payload, env)
        if not cfg.api_key or agent is None:
            return None
        session = read_session(cfg, {}, agent=agent)
    except ConfigError:
        return None
    if not session or not session.get("session_token"):
        return None
    return cfg, agent, session


def _quick(cfg: LocalConfig) -> LocalConfig:
    """The configuration with a short timeout: the news is extra, the hook's own time
    (10 s in Claude Code) belongs to the guard's check."""
    import copy

    quick = copy.copy(cfg)
    quick.timeout = min(cfg.timeout, NEWS_TIMEOUT)
    return quick


def take(payload: dict[str, Any], env: dict[str, str] | None = None) -> list[str]:
    """The lines of news to put in the agent's context now (marked seen and delivered)."""
    found = _setup(payload, env)
    if found is None:
        return []
    cfg, agent, session = found
    cfg = _quick(cfg)
    try:
        items, cursor, more, _ = unseen(cfg, agent, session)
    except (LeanUnreachable, LeanApiError):
        return []  # the news waits for the next call
    if not items:
        _remember(cfg, agent, cursor)
        return []
    lines, shown = render(items, more, cfg.news_max_chars)
    _remember(cfg, agent, cursor if shown == len(items) else items[shown - 1]["cursor"])
    _delivered(cfg, session, items[:shown])
    return lines


def context(event: str, payload: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    """``UserPromptSubmit`` / ``PostToolUse``: the news as ``additionalContext``."""
    lines = take(payload, env)
    if not lines:
        return {}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": "\n".join(lines)}}


def add_to(answer: dict[str, Any], payload: dict[str, Any], env: dict[str, str] | None) -> Any:
    """``PreToolUse``: the news joins the guard's answer as ``additionalContext`` only;
    the decision (if any) stays the guard's own."""
    lines = take(payload, env)
    if not lines:
        return answer
    out = dict(answer.get("hookSpecificOutput") or {"hookEventName": "PreToolUse"})
    before = out.get("additionalContext")
    out["additionalContext"] = "\n".join([before, *lines] if before else lines)
    return {**answer, "hookSpecificOutput": out}


def stop(payload: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    """``Stop``: block once when something needs the agent first (the items, as the
    reason, are then seen); never when ``stop_hook_active`` (a stop already blocked)."""
    if payload.get("stop_hook_active") is True:
        return {}
    found = _setup(payload, env)
    if found is None:
        return {}
    cfg, agent, session = found
    try:
        # A stop comes once a turn, and letting one through with a message just sent
        # would leave it unread: ask the server, not the keepalive's file.
        items, cursor, more, _ = unseen(cfg, agent, session, local_ok=False)
    except (LeanUnreachable, LeanApiError):
        return {}
    urgent = [
        i
        for i in items
        if i.get("kind") in URGENT_KINDS or (i.get("kind") in CERTAIN_KINDS and i.get("certain"))
    ]
    if not urgent:
        return {}
    lines, shown = render(items, more, cfg.news_max_chars)
    _remember(cfg, agent, cursor if shown == len(items) else items[shown - 1]["cursor"])
    _delivered(cfg, session, items[:shown])
    reason = "agentlanes: before you stop, other agents need you:\n" + "\n".join(lines)
    return {"decision": "block", "reason": reason}


def start_cursor(cfg: LocalConfig, agent: str, session: dict[str, Any]) -> None:
    """At ``SessionStart`` (which shows who is live already): the news starts from now,
    unless a resumed session has a cursor of its own (it then hears what it missed): the
    live session's, or the one its agent's last session ended with (``keep_cursor``)."""
    try:
        saved = read_session(cfg, {}, agent=agent)
    except ConfigError:
        return
    if saved is None or saved.get("news_cursor") or not session.get("session_token"):
        return
    kept = _kept_cursor(cfg, agent)
    if kept:
        _remember(cfg, agent, kept)
        return
    try:
        answer = call(cfg, "GET", "/api/v1/news", None, session["session_token"])
    except (LeanUnreachable, LeanApiError):
        return
    _remember(cfg, agent, answer.get("cursor"))


# -- across a resume -------------------------------------------------------------------------
# ``claude -p`` ends its session (SessionEnd checks out) and ``claude -p --resume ID``
# starts one again under the same name: the news read up to the end goes on from there,
# so a message sent in between reaches the resumed conversation (once: it is then
# delivered, and the cursor moves past it).

KEPT_CURSOR_DAYS = 7  # an ended agent's cursor is kept this long for a resume


def _kept_cursor_file(cfg: LocalConfig, agent: str) -> str | None:
    session_file = cfg.session_file(agent)
    return None if session_file is None else session_file[: -len(".json")] + ".news-cursor"


def keep_cursor(cfg: LocalConfig, agent: str, session: dict[str, Any]) -> None:
    """At the session's end: keep its news cursor beside the session files (the session
    file goes), for the next start under this agent's name; older kept cursors of
    conversations never resumed are removed."""
    cursor = session.get("news_cursor")
    path = _kept_cursor_file(cfg, agent)
    if path is None or not isinstance(cursor, str) or _position(cursor) is None:
        return
    import time

    folder = os.path.dirname(path)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(cursor)
        old = time.time() - KEPT_CURSOR_DAYS * 86400
        for name in os.listdir(folder):
            if name.endswith(".news-cursor"):
                other = os.path.join(folder, name)
                if os.path.getmtime(other) < old:
                    os.unlink(other)
    except OSError:
        pass  # the resumed session's news then starts from its start


def _kept_cursor(cfg: LocalConfig, agent: str) -> str | None:
    """The cursor the agent's last session ended with (taken: removed as read)."""
    path = _kept_cursor_file(cfg, agent)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            cursor = fh.read(100).strip()
        os.unlink(path)
    except OSError:
        return None
    return cursor if _position(cursor) is not None else None
