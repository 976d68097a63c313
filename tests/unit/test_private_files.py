"""Files the agent side writes are 0600 in 0700 folders (issue 40: the news file, which
held another agent's private message, the keepalive's pid and log were 0644 in 0755)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentlanes.agent.keepalive import spawn
from agentlanes.cli.news import NewsFile
from agentlanes.client.config import LocalConfig, save_session


def _mode(path: str | Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_session_news_pid_and_log_files_are_the_agents_own(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    sessions = tmp_path / ".git" / "agentlanes" / "sessions"
    sessions.mkdir(parents=True)
    os.chmod(sessions, 0o755)  # made by an older version: narrowed
    old_umask = os.umask(0o022)
    try:
        cfg = LocalConfig(root=str(tmp_path))
        path = save_session(cfg, {"agent_name": "alice", "session_token": "t" * 64})
        assert path is not None
        news = NewsFile(cfg, "alice")

        class Frame:
            model_extra: dict[str, Any] = {"item": {"cursor": "1-a", "text": "secret"}}

        news.write(Frame())
        pid_file = str(sessions / "alice.keepalive.pid")
        spawn(cfg, pid_file, [sys.executable, "-c", "pass"])
    finally:
        os.umask(old_umask)
    assert _mode(sessions) == 0o700
    for name in ("alice.json", "alice.news.jsonl", "alice.keepalive.pid", "alice.keepalive.log"):
        assert _mode(sessions / name) == 0o600, name
