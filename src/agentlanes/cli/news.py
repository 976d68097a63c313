"""``lanes news``: what concerns your session since you last heard (SPEC "The agent's
news"), and the keepalive's news file that lets the hooks read it with no network call.

``lanes news`` reads from the cursor kept in the agent's session file (the one the hooks
advance), prints every unseen item, one line each, and moves the cursor past them; the
messages among them count as delivered. ``--json``: the items and the new cursor.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from agentlanes.cli.local import local_config, local_session, make_client
from agentlanes.cli.output import add_json, client_errors, emit_json

AGENT_HELP = "the agent whose session to use (default: AGENTLANES_AGENT_NAME, or the only one)"
# Pages read at most by one `lanes news` (50 items each).
MAX_PAGES = 20


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("news", help="what concerns your session since you last heard")
    p.add_argument("--agent", help=AGENT_HELP)
    add_json(p)
    p.set_defaults(func=news)


def news(args: argparse.Namespace) -> int:
    from agentlanes.hooks.news import _remember

    cfg = local_config()
    session = local_session(cfg, args.agent)
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
    for item in items:
        print(f"agentlanes: {item.get('text')}")
    return 0


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
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(self.path, "w", encoding="utf-8") as fh:
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
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(item, separators=(",", ":")) + "\n")
        self.last = item.get("cursor") or self.last
