"""The client's local pieces: configuration precedence, the session file, errors, resume."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from agentlanes.client import Client
from agentlanes.client.base import Reconnects, Resume, backoff
from agentlanes.client.config import (
    ConfigError,
    find_repo_root,
    forget_session,
    git_dir,
    list_sessions,
    load_config,
    read_session,
    save_session,
)
from agentlanes.client.errors import ApiError, StreamClosed, Unreachable


def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    (tmp_path / "a" / "b").mkdir(parents=True)
    return tmp_path


def test_env_beats_file_beats_default(tmp_path: Path) -> None:
    root = repo(tmp_path)
    assert load_config(root, env={}).url == "http://127.0.0.1:8787"
    (root / ".agentlanes.toml").write_text(
        'url = "http://file:1/"\napi_key = "alk_file"\nfail_closed = true\ntimeout = 2\n'
    )
    cfg = load_config(root / "a" / "b", env={})
    assert (cfg.url, cfg.api_key, cfg.fail_closed, cfg.timeout) == (
        "http://file:1",
        "alk_file",
        True,
        2.0,
    )
    assert cfg.root == str(root)
    env = {"AGENTLANES_URL": "http://env:2", "AGENTLANES_API_KEY": "alk_env"}
    cfg = load_config(root, env=env)
    assert (cfg.url, cfg.api_key) == ("http://env:2", "alk_env")
    assert cfg.source == {"url": "AGENTLANES_URL", "api_key": "AGENTLANES_API_KEY"}


@pytest.mark.parametrize(
    ("text", "needle"),
    [("url = [", "not valid TOML"), ("fail_closed = 'yes'", "fail_closed must be a bool")],
)
def test_bad_config_file_names_the_problem(tmp_path: Path, text: str, needle: str) -> None:
    root = repo(tmp_path)
    (root / ".agentlanes.toml").write_text(text)
    with pytest.raises(ConfigError, match=needle):
        load_config(root, env={})


def test_session_lives_in_the_git_dir_of_each_worktree(tmp_path: Path) -> None:
    main = repo(tmp_path / "main")
    linked = tmp_path / "linked"
    linked.mkdir()
    (main / ".git" / "worktrees" / "linked").mkdir(parents=True)
    (linked / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'linked'}\n")
    assert find_repo_root(linked) == str(linked)
    assert git_dir(linked) == str(main / ".git" / "worktrees" / "linked")

    cfg = load_config(linked, env={})
    assert read_session(cfg, env={}) is None
    path = save_session(cfg, {"session_token": "t" * 64, "session_id": "ses_1", "agent_name": "a"})
    linked_git = main / ".git" / "worktrees" / "linked"
    assert path == str(linked_git / "agentlanes" / "sessions" / "a.json")
    assert stat.S_IMODE(Path(path).stat().st_mode) == 0o600
    assert read_session(cfg, env={})["session_id"] == "ses_1"  # type: ignore[index]
    # The environment wins over the file.
    env_session = read_session(cfg, env={"AGENTLANES_SESSION_TOKEN": "e" * 64})
    assert env_session == {"session_token": "e" * 64, "source": "AGENTLANES_SESSION_TOKEN"}
    Path(path).write_text("{broken")
    assert read_session(cfg, env={}) is None
    forget_session(cfg, "a")
    assert not Path(path).exists()


def test_one_session_per_agent_and_no_guessing_between_several(tmp_path: Path) -> None:
    root = repo(tmp_path)
    cfg = load_config(root, env={})
    for name in ("alice", "bob"):
        save_session(cfg, {"session_token": name[0] * 64, "session_id": name, "agent_name": name})
    assert [s["agent_name"] for s in list_sessions(cfg)] == ["alice", "bob"]
    # Two agents here and no name given: whose session it is cannot be told.
    assert read_session(cfg, env={}) is None
    assert read_session(cfg, env={}, agent="bob")["session_id"] == "bob"  # type: ignore[index]
    named = load_config(root, env={"AGENTLANES_AGENT_NAME": "alice"})
    assert read_session(named, env={})["session_id"] == "alice"  # type: ignore[index]
    assert read_session(cfg, env={}, agent="carol") is None
    with pytest.raises(ConfigError, match="agent name"):
        read_session(cfg, env={}, agent="../escape")


def test_the_old_single_session_file_moves_to_its_agent(tmp_path: Path) -> None:
    root = repo(tmp_path)
    legacy = root / ".git" / "agentlanes" / "session.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(
        json.dumps({"session_token": "x" * 64, "agent_name": "old", "session_id": "s"})
    )
    cfg = load_config(root, env={})
    assert read_session(cfg, env={})["session_id"] == "s"  # type: ignore[index]
    assert not legacy.exists()
    assert (root / ".git" / "agentlanes" / "sessions" / "old.json").exists()


@pytest.mark.parametrize(
    "url", ["localhost:8787", "127.0.0.1:8787", "ftp://x", "http://", "http://h:port"]
)
def test_a_server_url_without_scheme_or_host_is_bad_input(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError, match="AGENTLANES_URL"):
        load_config(repo(tmp_path), env={"AGENTLANES_URL": url})


def test_outside_a_repository_there_is_no_session_file(tmp_path: Path) -> None:
    cfg = load_config(tmp_path, env={})
    if cfg.root is None:  # tmp_path is not inside some repository
        assert cfg.session_file("a") is None
        assert save_session(cfg, {"session_token": "x", "agent_name": "a"}) is None


def test_api_error_keeps_code_and_top_level_fields() -> None:
    body = {
        "error": {"code": "CONFLICT", "message": "taken"},
        "outcome_status": "blocked",
        "conflicts": [{"agent_name": "alice"}],
    }
    err = ApiError.from_response(409, body)
    assert (err.status, err.code, err.message) == (409, "CONFLICT", "taken")
    assert err.conflicts == [{"agent_name": "alice"}]
    assert err.extra["outcome_status"] == "blocked"
    odd = ApiError.from_response(502, None, "<html>bad gateway</html>")
    assert odd.code == "HTTP_ERROR" and "bad gateway" in odd.message


def test_resume_skips_what_was_seen_and_follows_snapshots() -> None:
    resume = Resume(None)
    snap = resume.accept(json.dumps({"type": "presence.snapshot", "offset": 5, "data": {}}))
    assert snap is not None and resume.offset == 5
    assert resume.accept(json.dumps({"type": "agent.checkin", "offset": 5})) is None
    assert resume.accept(json.dumps({"type": "agent.checkin", "offset": 6})) is not None
    assert resume.accept(json.dumps({"type": "pong"})) is not None
    assert resume.offset == 6
    # Equal jitter: half the step fixed, half random.
    assert [backoff(n, lambda: 1.0) for n in (0, 1, 10)] == [0.2, 0.4, 5.0]
    assert [backoff(n, lambda: 0.0) for n in (0, 1, 10)] == [0.1, 0.2, 2.5]
    waits = {round(backoff(3), 6) for _ in range(50)}
    assert len(waits) > 40 and all(0.8 <= w <= 1.6 for w in waits)  # spread, within the step


def test_reconnects_give_up_only_when_they_should() -> None:
    client = Client("http://127.0.0.1:1", "alk_x")
    first = Reconnects(client, None, max_failures=None)
    with pytest.raises(Unreachable):  # never reached at all: at once
        first.failed(OSError("refused"))
    stream = Reconnects(client, 7, max_failures=2)
    assert stream.url().endswith("since=7")
    stream.opened()
    stream.closed(1006, "")  # an abnormal close: reconnect
    stream.closed(None, "")
    stream.failed(OSError("refused"))  # one failure after a connect: keep trying
    assert 0.2 <= stream.delay() <= 0.4  # the second step, jittered
    with pytest.raises(Unreachable):
        stream.failed(OSError("refused"))
    stream.opened()
    assert 0.1 <= stream.delay() <= 0.2  # a connect starts the steps again
    with pytest.raises(StreamClosed) as closed:
        stream.closed(4401, "token expired")  # reconnecting cannot help
    assert closed.value.code == 4401


def test_the_config_file_is_read_as_toml(tmp_path: Path) -> None:
    """Any TOML (tomllib): escapes, comments, underscores, tables the client ignores."""
    root = repo(tmp_path)
    (root / ".agentlanes.toml").write_text(
        '# a comment\nurl = "http://h:1/p" # trailing\napi_key = "alk_\\u0061"\n'
        "timeout = 1_0\nagent_name = 'a#b'\n[elsewhere]\nurl = 5\n"
    )
    cfg = load_config(root, env={})
    assert (cfg.url, cfg.api_key, cfg.timeout, cfg.agent_name) == (
        "http://h:1/p",
        "alk_a",
        10.0,
        "a#b",
    )
    (root / ".agentlanes.toml").write_bytes(b'url = "\xff"\n')
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(root, env={})
