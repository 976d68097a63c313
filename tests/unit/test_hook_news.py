"""The hooks' side of the agent's news: the keepalive's file, and the 2,000-character cap."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agentlanes.client.config import LocalConfig
from agentlanes.hooks.news import from_local_file, render


def _agent_state(tmp_path: Path, header: object, items: list[dict[str, object]]) -> LocalConfig:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    cfg = LocalConfig(root=str(tmp_path))
    session_file = cfg.session_file("alice")
    assert session_file is not None
    os.makedirs(os.path.dirname(session_file), exist_ok=True)
    base = session_file[: -len(".json")]
    Path(base + ".keepalive.pid").write_text(str(os.getpid()))  # a live process
    lines = [json.dumps(header)] + [json.dumps(i) for i in items]
    Path(base + ".news.jsonl").write_text("\n".join(lines) + "\n")
    return cfg


def test_the_keepalives_file_stands_in_only_for_what_it_covers(tmp_path: Path) -> None:
    summary = {"cursor": "5-ab", "kind": "summary", "text": "you are alice"}
    message = {"cursor": "7-ab", "kind": "message", "text": "bob to you: hi"}
    cfg = _agent_state(tmp_path, {"from": None}, [summary, message])
    # Started without a cursor: it covers what came after its summary, not before.
    assert from_local_file(cfg, "alice", "3-ab") is None
    assert from_local_file(cfg, "alice", "6-ab") == [message]
    assert from_local_file(cfg, "alice", "7-ab") == []
    assert from_local_file(cfg, "alice", None) is None
    # Another history: everything in it is new.
    assert from_local_file(cfg, "alice", "9-cd") is None


def test_a_file_started_from_a_cursor_covers_what_follows_it(tmp_path: Path) -> None:
    message = {"cursor": "7-ab", "kind": "message", "text": "bob to you: hi"}
    cfg = _agent_state(tmp_path, {"from": "4-ab"}, [message])
    assert from_local_file(cfg, "alice", "4-ab") == [message]
    assert from_local_file(cfg, "alice", "2-ab") is None  # it started later than that


def test_an_injection_stays_within_the_cap_and_says_how_many_more() -> None:
    items = [{"text": f"item {n} " + "x" * 90} for n in range(40)]
    lines, shown = render(items, more=False, max_chars=2000)
    assert len("\n".join(lines)) <= 2000
    assert lines[-1] == f"agentlanes: {40 - shown} more: lanes news"
    assert lines[:shown] == [f"agentlanes: {i['text']}" for i in items[:shown]]
    lines, shown = render(items[:2], more=True, max_chars=2000)
    assert shown == 2 and lines[-1] == "agentlanes: more: lanes news"
    # One item longer than the cap is cut, never dropped.
    lines, shown = render([{"text": "y" * 5000}], more=False, max_chars=2000)
    assert shown == 1 and len(lines[0]) <= 2000 and lines[0].endswith("…")
