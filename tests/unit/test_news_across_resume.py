"""The news cursor outlives a session's end, for the next start under the agent's name
(``claude -p`` → ``claude -p --resume ID``; the real programs' test in
tests/e2e/test_real_agents.py): kept at the end, taken once at the start, and kept at most
``KEPT_CURSOR_DAYS``."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from agentlanes.client.config import LocalConfig
from agentlanes.hooks import news


def config(tmp_path: Path) -> LocalConfig:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    cfg = LocalConfig(root=str(tmp_path))
    session_file = cfg.session_file("claude-abc")
    assert session_file is not None
    os.makedirs(os.path.dirname(session_file), exist_ok=True)
    return cfg


def test_the_cursor_a_session_ended_with_is_taken_once(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    news.keep_cursor(cfg, "claude-abc", {"news_cursor": "41-0a1b"})
    assert news._kept_cursor(cfg, "claude-abc") == "41-0a1b"
    assert news._kept_cursor(cfg, "claude-abc") is None  # taken: a third start is fresh
    assert news._kept_cursor(cfg, "claude-other") is None


def test_no_cursor_or_a_bad_one_is_not_kept(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    news.keep_cursor(cfg, "claude-abc", {})
    news.keep_cursor(cfg, "claude-def", {"news_cursor": "../../etc"})
    assert news._kept_cursor(cfg, "claude-abc") is None
    assert news._kept_cursor(cfg, "claude-def") is None


def test_cursors_of_conversations_never_resumed_go_after_a_week(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    news.keep_cursor(cfg, "claude-old", {"news_cursor": "3-0a1b"})
    path = news._kept_cursor_file(cfg, "claude-old")
    assert path is not None and os.path.exists(path)
    week_ago = time.time() - news.KEPT_CURSOR_DAYS * 86400 - 60
    os.utime(path, (week_ago, week_ago))
    news.keep_cursor(cfg, "claude-new", {"news_cursor": "9-0a1b"})
    assert not os.path.exists(path)
    assert news._kept_cursor(cfg, "claude-new") == "9-0a1b"
