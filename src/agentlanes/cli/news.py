"""``lanes news``: what concerns your session since you last heard (SPEC "The agent's
news"), and the keepalive's news file that lets the hooks read it with no network call.

``lanes news`` reads from the cursor kept in the agent's session file (the one the hooks
advance), prints every unseen item, one line each inside the fenced block of other
agents' words (SPEC "Context budget"), and moves the cursor past them; the
messages among them count as delivered. ``--json``: the items and the new cursor.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from agentlanes.cli.local import local_config, local_session, make_client
from agentlanes.cli.output import add_json, client_errors, emit_json
from agentlanes.client.private_files import private_open
from agentlanes.domain.words import fenced, fenced_item

AGENT_HELP = "the agent whose session to use (default: AGENTLANES_AGENT_NAME, or the only one)"
# Pages read at most by one `lanes news` (50 items each).
MAX_PAGES = 20


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("news", help="what concerns your session since you last heard")
    p.add_argument("--agent", help=AGENT_HELP)
    p.add_argument(
        "--wait",
        action="store_true",
        help="wait (on the event socket) for an item that needs the agent: a message to it or "
        "a certain overlap; print it on stderr and exit 2 (a hook that wakes the agent)",
    )
    p.add_argument(
        "--timeout", type=float, default=600.0, metavar="S", help="with --wait: give up after S"
    )
    add_json(p)
    p.set_defaults(func=news)


def news(args: argparse.Namespace) -> int:
    from agentlanes.hooks.news import _remember

    cfg = local_config()
    session = local_session(cfg, args.agent)
    if args.wait:
        return wait(cfg, session, args.timeout)
    cursor = session.get("news_cursor")
    items: list[dict[str, Any]] = []
    recovered = True
    with client_errors(), make_client(cfg, session["session_token"]) as client:
        for _ in range(MAX_PAGES):
            answer = client.news(after=cursor, deliver=True)
            items.extend(answer.get("items") or [])
            recovered = recovered and bool(answer.get("recovered", True))
            cursor = answer.get("cursor") or cursor
            if not answer.get("more"):
                break
    agent = session.get("agent_name")
    if agent and session.get("source") != "AGENTLANES_SESSION_TOKEN":
        _remember(cfg, agent, cursor)
    if args.json:
        emit_json({"items": items, "cursor": cursor, "recovered": recovered})
        return 0
    if not items:
        print("agentlanes: nothing new")
    for line in news_lines(items):
        print(line)
    return 0


def news_lines(items: list[dict[str, Any]]) -> list[str]:
    """Items as lines for a terminal or an agent's context: other agents' words, cleaned
    and inside the fence of SPEC "Context budget", one line each."""
    return fenced([fenced_item(item.get("text") or "") for item in items])


EXIT_WAKE = 2  # Claude Code: a hook's exit 2 puts its stderr before the model


def wait(cfg: Any, session: dict[str, Any], timeout: float) -> int:
    """Hold an attached socket subscribed to the session's news until an item needs the
    agent (a message to it, a certain overlap), then print the unseen items on stderr, mark
    them seen and delivered, and exit 2; exit 0 after ``timeout`` with nothing to say.

    For Claude Code's background hooks: an ``"async": true`` hook's exit 2 can wake an
    idle agent where ``asyncRewake`` is supported (not in the official hooks reference;
    docs/agents.md, "Waking")."""
    import sys
    import time

    from agentlanes.hooks.news import CERTAIN_KINDS, URGENT_KINDS, _remember

    agent = session.get("agent_name")
    cursor = session.get("news_cursor")
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    with client_errors(), make_client(cfg, session["session_token"]) as client:
        frames = client.events(
            attach=True, news=lambda: cursor, idle_timeout=max(0.1, timeout), max_failures=3
        )
        for frame in frames:
            if time.monotonic() > deadline:
                return 0
            item = (frame.model_extra or {}).get("item") if frame.type == "news" else None
            if not isinstance(item, dict) or item.get("kind") == "summary":
                continue
            seen.append(item)
            urgent = item.get("kind") in URGENT_KINDS or (
                item.get("kind") in CERTAIN_KINDS and item.get("certain")
            )
            if not urgent:
                continue
            for line in news_lines(seen):
                print(line, file=sys.stderr)
            if agent and session.get("source") != "AGENTLANES_SESSION_TOKEN":
                _remember(cfg, agent, item.get("cursor"))
            ids = [i["message_id"] for i in seen if i.get("kind") == "message"]
            if ids:
                client.run(_delivered_call(ids))
            return EXIT_WAKE
    return 0


def _delivered_call(ids: list[int]) -> Any:
    from agentlanes.client.calls import API, Call, as_json

    return Call("POST", f"{API}/news/delivered", as_json, {"message_ids": ids}, token="required")


class NewsFile:
    """The keepalive's side: the news frames of its socket, appended one JSON line each to
    ``sessions/<agent>.news.jsonl``; the first line says which cursor it started from."""

    def __init__(self, cfg: Any, agent: str | None) -> None:
        from agentlanes.hooks.news import news_file

        self.path = news_file(cfg, agent) if agent else None
        self.cfg = cfg
        self.agent = agent
        self.last: str | None = None
        if self.path is not None:
            self.last = self._saved_cursor()
            # 0600 in 0700: it holds other agents' messages to this one.
            with os.fdopen(private_open(self.path, "w"), "w", encoding="utf-8") as fh:
                fh.write(json.dumps({"from": self.last}) + "\n")

    def _saved_cursor(self) -> str | None:
        from agentlanes.client.config import ConfigError, read_session

        try:
            session = read_session(self.cfg, {}, agent=self.agent)
        except ConfigError:
            return None
        return (session or {}).get("news_cursor")

    def cursor(self) -> str | None:
        """Where the socket's news starts (again, after a reconnect)."""
        return self.last

    def write(self, frame: Any) -> None:
        item = (frame.model_extra or {}).get("item")
        if self.path is None or not isinstance(item, dict):
            return
        with os.fdopen(private_open(self.path, "a"), "a", encoding="utf-8") as fh:
            fh.write(json.dumps(item, separators=(",", ":")) + "\n")
        self.last = item.get("cursor") or self.last
