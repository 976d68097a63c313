"""The news step of the PreToolUse hook never costs the guard its answer: not its time
(a server that accepts but never answers), not its decision (an error in the news)."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlanes.client.config import LocalConfig, read_session, save_session
from agentlanes.hooks import guard, news
from agentlanes.hooks.adapters import core


class SilentServer:
    """Accepts connections and never answers; counts them."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections = 0
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            self.held.append(conn)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        for conn in self.held:
            conn.close()
        self.listener.close()


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def _repo_with_session(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".agentlanes.toml").write_text("timeout = 0.5\n")
    env = {
        "AGENTLANES_URL": url,
        "AGENTLANES_API_KEY": "alk_test",
        "AGENTLANES_AGENT_NAME": "alice",
        "AGENTLANES_FAIL_CLOSED": "1",
        "HOME": str(tmp_path / "home"),
    }
    cfg = LocalConfig(root=str(repo))
    save_session(
        cfg,
        {"agent_name": "alice", "session_token": "tok", "session_id": "s1", "news_cursor": "1-a"},
    )
    return repo, env


def _edit(repo: Path) -> dict[str, object]:
    return {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "cwd": str(repo),
        "tool_name": "Edit",
        "tool_input": {"file_path": str(repo / "x.py"), "old_string": "a", "new_string": "b"},
    }


def test_an_unanswered_check_denies_without_waiting_for_the_news(
    tmp_path: Path, silent: SilentServer
) -> None:
    repo, env = _repo_with_session(tmp_path, silent.url)
    started = time.monotonic()
    answer = guard.handle(_edit(repo), env)
    took = time.monotonic() - started
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny", answer
    assert "server unreachable" in out["permissionDecisionReason"]
    # Only the check went out (the session file is fresh: no heartbeat due), no news.
    assert silent.connections == 1 and took < 0.9, (silent.connections, took)

    verdict = core.check(
        "alice", "s1", str(repo), "Write", {"file_path": str(repo / "x.py")}, env, with_news=True
    )
    assert verdict.deny and "server unreachable" in verdict.deny


def test_the_news_call_waits_a_second_at_most(tmp_path: Path, silent: SilentServer) -> None:
    repo, env = _repo_with_session(tmp_path, silent.url)
    (repo / ".agentlanes.toml").write_text("timeout = 5\n")
    started = time.monotonic()
    assert news.take(_edit(repo), env) == []
    assert time.monotonic() - started < 2.0


def test_an_error_in_the_news_leaves_the_guards_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    refusal = guard._deny("agentlanes: edit refused (block mode)")
    allowed = guard._context("PreToolUse", ["agentlanes: bob overlaps"])

    def broken(*args: object, **kwargs: object) -> object:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(news, "take", broken)
    for decided in (refusal, allowed):
        monkeypatch.setattr(guard, "decide", lambda *a, d=decided, **k: d)
        assert guard.handle(_edit(repo), {}) == decided
        verdict = core.check("alice", "s1", str(repo), "Write", {"file_path": "x"}, {}, True)
        if decided is refusal:
            assert verdict.deny
        else:
            assert verdict.context == "agentlanes: bob overlaps"
    assert os.path.isdir(repo)


def test_moving_the_news_cursor_does_not_count_as_a_heartbeat(tmp_path: Path) -> None:
    repo, _ = _repo_with_session(tmp_path, "http://127.0.0.1:9")
    cfg = LocalConfig(root=str(repo))
    path = cfg.session_file("alice")
    assert path is not None
    long_ago = time.time() - 600
    os.utime(path, (long_ago, long_ago))
    session = read_session(cfg, {}, agent="alice")
    assert guard._heartbeat_due(session)
    news._remember(cfg, "alice", "9-a")
    session = read_session(cfg, {}, agent="alice")
    assert session is not None and session["news_cursor"] == "9-a"
    assert guard._heartbeat_due(session)  # still due: no heartbeat was sent
