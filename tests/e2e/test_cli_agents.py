"""The agent CLI against a real server: checkin, status, presence, check, checkout, errors."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import httpx
import pytest

from tests.support.agents import (
    git,
    isolated_env,
    lanes,
    lanes_json,
    make_repo,
    new_project,
    no_traceback,
)
from tests.support.server import ServerProcess, free_port

pytestmark = pytest.mark.e2e


@pytest.fixture
def two_agents(agent_server: ServerProcess, tmp_path: Path) -> tuple[Path, Path, dict, dict]:
    key = new_project(agent_server.url)["api_key"]
    env_a = isolated_env(tmp_path / "home-a", agent_server.url, key)
    env_b = isolated_env(tmp_path / "home-b", agent_server.url, key)
    return make_repo(tmp_path / "a", env_a), make_repo(tmp_path / "b", env_b), env_a, env_b


def test_checkin_keeps_the_token_in_git_dir_and_shows_conflicts_as_a_table(
    two_agents: tuple[Path, Path, dict, dict],
) -> None:
    repo_a, repo_b, env_a, env_b = two_agents
    first = lanes(
        repo_a, env_a, "checkin", "--agent", "alice", "--area", "api", "--files", "src/api/**"
    )
    assert first.returncode == 0, first.stderr
    # Each agent keeps its own session file (SPEC: one session per agent, not per checkout).
    saved = repo_a / ".git" / "agentlanes" / "sessions" / "alice.json"
    session = json.loads(saved.read_text())
    assert len(session["session_token"]) == 64 and session["agent_name"] == "alice"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    # Never a tracked (or even visible) file.
    assert git(repo_a, env_a, "status", "--porcelain").stdout == ""
    assert session["session_token"] not in first.stdout

    second = lanes(repo_b, env_b, "checkin", "--agent", "bob", "--files", "src/**/*.ts")
    assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("AGENT"))
    assert lines[header].split() == [
        "AGENT",
        "AREA",
        "THEIR",
        "PATTERN",
        "YOURS",
        "EXAMPLE",
        "CERTAIN",
        "GRADE",
    ]
    row = lines[header + 2].split()
    assert row[:4] == ["alice", "api", "src/api/**", "src/**/*.ts"]
    assert row[4].startswith("src/api/") and row[4].endswith(".ts")
    assert row[-1] == "claims"  # neither has edits (SPEC Line-level claims)

    table = lanes(repo_b, env_b, "presence")
    assert [line.split()[0] for line in table.stdout.splitlines()[2:]] == ["alice", "bob"]
    snap = lanes_json(repo_b, env_b, "presence")
    assert [s["agent_name"] for s in snap["sessions"]] == ["alice", "bob"]
    assert all("session_token" not in s for s in snap["sessions"])


def test_status_check_and_checkout(two_agents: tuple[Path, Path, dict, dict]) -> None:
    repo_a, repo_b, env_a, env_b = two_agents
    lanes_json(repo_a, env_a, "checkin", "--agent", "alice", "--files", "src/api/**")
    lanes_json(repo_b, env_b, "checkin", "--agent", "bob", "--files", "docs/**")

    shown = lanes_json(repo_b, env_b, "status")
    assert shown["agent_name"] == "bob" and shown["declared_files"] == ["docs/**"]
    changed = lanes_json(repo_b, env_b, "status", "--files", "src/**", "--text", "refactoring")
    assert changed["status_text"] == "refactoring"
    assert [c["agent_name"] for c in changed["conflicts"]] == ["alice"]
    saved = json.loads((repo_b / ".git" / "agentlanes" / "sessions" / "bob.json").read_text())
    assert saved["declared_files"] == ["src/**"]  # the guard reads the scope from here

    # `check` takes paths relative to where you stand, and leaves your own session out.
    (repo_b / "src" / "api").mkdir(parents=True)
    hit = lanes(repo_b / "src" / "api", env_b, "check", "handlers.py")
    assert hit.returncode == 1
    assert "alice" in hit.stdout and "src/api/handlers.py" in hit.stdout
    clear = lanes(repo_a, env_a, "check", "src/api/handlers.py", "--json")
    assert clear.returncode == 1  # bob now claims src/** too
    assert json.loads(clear.stdout)["conflicts"][0]["agent_name"] == "bob"
    assert lanes(repo_b, env_b, "check", "docs/x.md").returncode == 0
    # A directory is checked as the directory pattern (its trailing '/'), and --json says so.
    folder = lanes(repo_b, env_b, "check", "src/api", "--json")
    assert folder.returncode == 1
    found = json.loads(folder.stdout)
    assert found["directories_marked"] == ["src/api/"]
    assert [c["agent_name"] for c in found["conflicts"]] == ["alice"]

    out = lanes_json(repo_b, env_b, "checkout", "--outcome", "partial", "--summary", "half done")
    assert out["status"] == "checked_out" and out["outcome_status"] == "partial"
    assert not (repo_b / ".git" / "agentlanes" / "sessions" / "bob.json").exists()
    again = lanes(repo_b, env_b, "status")
    assert again.returncode == 5 and "lanes checkin" in again.stderr
    no_traceback(again)


def test_bad_input_and_errors_are_one_line_with_documented_exit_codes(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    key = new_project(agent_server.url, conflict_mode="block")["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)

    bad = lanes(repo, env, "checkin", "--files", "/etc/passwd", "--json")
    assert bad.returncode == 2
    body = json.loads(bad.stdout)
    assert body["error"]["code"] == "VALIDATION_ERROR" and body["field"] == "declared_files"
    assert len(bad.stderr.strip().splitlines()) == 1
    no_traceback(bad)
    assert lanes_json(repo, env, "presence")["sessions"] == []  # nothing changed

    lanes_json(repo, env, "checkin", "--agent", "alice", "--files", "src/**")
    other = make_repo(tmp_path / "other", env)
    refused = lanes(other, env, "checkin", "--agent", "bob", "--files", "src/x.py")
    assert refused.returncode == 1 and "CONFLICT" in refused.stderr
    assert not (other / ".git" / "agentlanes" / "sessions" / "bob.json").exists()
    # The refusal names who holds what, in text too (not only under --json).
    assert "alice" in refused.stderr and "src/**" in refused.stderr
    assert "src/x.py" in refused.stderr and "for certain" in refused.stderr

    no_key = lanes(repo, isolated_env(tmp_path / "h2", agent_server.url, None), "presence")
    assert no_key.returncode == 2 and "AGENTLANES_API_KEY" in no_key.stderr
    wrong_env = isolated_env(tmp_path / "h3", agent_server.url, "alk_nope")
    wrong_key = lanes(repo, wrong_env, "presence")
    assert wrong_key.returncode == 4 and "UNAUTHORIZED" in wrong_key.stderr
    wrong_stream = lanes(repo, wrong_env, "watch", "--count", "1", timeout=30)
    assert wrong_stream.returncode == 4 and "4401" in wrong_stream.stderr
    no_traceback(wrong_stream)

    down = isolated_env(tmp_path / "h4", f"http://127.0.0.1:{free_port()}", key)
    for args in (("presence",), ("checkin", "--agent", "x"), ("watch", "--count", "1")):
        gone = lanes(repo, down, *args, timeout=30)
        assert gone.returncode == 3, gone.stderr
        assert "cannot reach" in gone.stderr and len(gone.stderr.strip().splitlines()) == 1
        no_traceback(gone)

    usage = lanes(repo, env, "checkout", "--outcome", "maybe")
    assert usage.returncode == 2
    no_traceback(usage)
    bad_toml = make_repo(tmp_path / "badtoml", env)
    (bad_toml / ".agentlanes.toml").write_text("url = [unclosed")
    broken = lanes(bad_toml, env, "presence")
    assert broken.returncode == 2 and "not valid TOML" in broken.stderr
    no_traceback(broken)


def test_config_file_at_the_repo_root_is_read(agent_server: ServerProcess, tmp_path: Path) -> None:
    key = new_project(agent_server.url)["api_key"]
    env = isolated_env(tmp_path / "home", "http://127.0.0.1:1", None)
    del env["AGENTLANES_URL"]
    repo = make_repo(tmp_path / "repo", env)
    (repo / ".agentlanes.toml").write_text(f'url = "{agent_server.url}"\napi_key = "{key}"\n')
    (repo / "deep" / "er").mkdir(parents=True)
    out = lanes_json(repo / "deep" / "er", env, "checkin", "--agent", "carol")
    assert out["agent_name"] == "carol"
    assert (repo / ".git" / "agentlanes" / "sessions" / "carol.json").exists()


def test_keepalive_background_heartbeats_until_checkout(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    ttl = 5
    key = new_project(agent_server.url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=ttl)[
        "api_key"
    ]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    lanes_json(repo, env, "checkin", "--agent", "alice", "--files", "src/**")
    first = _presence(agent_server.url, key)[0]["last_heartbeat_at"]
    started = lanes_json(repo, env, "keepalive", "--background")
    pid = started["pid"]
    # Heartbeats arrive on their own ...
    deadline = time.monotonic() + 20
    while _presence(agent_server.url, key)[0]["last_heartbeat_at"] == first:
        log = repo / ".git/agentlanes/sessions/alice.keepalive.log"
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    # ... and keep the session past its TTL.
    time.sleep(ttl + 1)
    assert [s["agent_name"] for s in _presence(agent_server.url, key)] == ["alice"]
    out = lanes_json(repo, env, "checkout", "--summary", "done")
    assert out["keepalive_stopped"] == pid
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text() if Path(f"/proc/{pid}").exists() else ""
        if "zombie" in status:
            break
        time.sleep(0.1)
    status = Path(f"/proc/{pid}/status").read_text() if Path(f"/proc/{pid}").exists() else ""
    assert not status or "zombie" in status


def test_keepalive_socket_holds_the_session_while_it_runs(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    ttl = 6
    key = new_project(agent_server.url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=ttl)[
        "api_key"
    ]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    lanes_json(repo, env, "checkin", "--agent", "alice")
    import subprocess
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-m", "agentlanes", "keepalive", "--socket", "--json"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        attached = json.loads(holder.stdout.readline())
        assert attached["type"] == "attached"
        time.sleep(ttl + 1.5)  # no heartbeat is sent: only the open socket keeps it
        names = [s["agent_name"] for s in lanes_json(repo, env, "presence")["sessions"]]
        assert names == ["alice"]
    finally:
        holder.terminate()
        holder.wait(timeout=10)
    deadline = time.monotonic() + 15
    while _presence(agent_server.url, key) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _presence(agent_server.url, key) == []  # the TTL ran once the socket closed


def _presence(url: str, key: str) -> list[dict]:
    r = httpx.get(f"{url}/api/v1/presence", headers={"X-API-Key": key}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["sessions"]  # type: ignore[no-any-return]


def test_watch_prints_events_readably_and_as_json_lines(
    two_agents: tuple[Path, Path, dict, dict],
) -> None:
    repo_a, repo_b, env_a, env_b = two_agents
    lanes_json(repo_a, env_a, "checkin", "--agent", "alice", "--area", "api")
    lanes_json(repo_b, env_b, "checkin", "--agent", "bob", "--area", "api")
    raw = lanes(repo_a, env_a, "watch", "--since", "0", "--count", "3", "--json")
    assert raw.returncode == 0, raw.stderr
    frames = [json.loads(line) for line in raw.stdout.splitlines()]
    events = [f for f in frames if f["type"] not in ("replay.complete",)]
    assert [e["type"] for e in events] == ["agent.checkin", "agent.checkin", "agent.conflict"]
    assert [e["offset"] for e in events] == sorted(e["offset"] for e in events)
    human = lanes(repo_a, env_a, "watch", "--since", "0", "--count", "2")
    first = human.stdout.splitlines()[0]
    assert "agent.checkin" in first and "agent=alice" in first and "area=api" in first


def test_times_in_the_readable_output_are_the_servers_own(
    two_agents: tuple[Path, Path, dict, dict],
) -> None:
    """The client hands out datetimes; `presence` and `keepalive --once` still show the
    server's ISO strings, and `watch` the event's time of day."""
    repo_a, _, env_a, _ = two_agents
    url, key = env_a["AGENTLANES_URL"], env_a["AGENTLANES_API_KEY"]
    alice = lanes_json(repo_a, env_a, "checkin", "--agent", "alice", "--area", "api")
    beat = lanes(repo_a, env_a, "keepalive", "--once")
    assert beat.returncode == 0, beat.stderr
    [mine] = _presence(url, key)
    assert beat.stdout == f"session {alice['session_id']} alive until {mine['expires_at']}\n"
    table = lanes(repo_a, env_a, "presence")
    assert table.returncode == 0, table.stderr
    assert mine["last_heartbeat_at"] in table.stdout.splitlines()[2].split()
    log = httpx.get(f"{url}/api/v1/events/log?since=0", headers={"X-API-Key": key}, timeout=10)
    first = log.json()["events"][0]
    watched = lanes(repo_a, env_a, "watch", "--since", "0", "--count", "1")
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout.splitlines()[0] == (
        f"[{first['offset']}] {first['ts'][11:19]} agent.checkin agent=alice area=api"
    )


def test_two_agents_in_one_checkout_keep_two_sessions(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    key = new_project(agent_server.url)["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    (repo / "src" / "api").mkdir(parents=True)
    alice = lanes_json(repo, env, "checkin", "--agent", "alice", "--files", "src/api")
    # A literal naming a directory of the working tree is sent with its trailing '/'.
    assert alice["directories_marked"] == ["src/api/"]
    bob = lanes_json(repo, env, "checkin", "--agent", "bob", "--files", "docs/**")
    assert bob["other_local_agents"] == ["alice"] and bob["replaced_session_id"] is None
    sessions = repo / ".git" / "agentlanes" / "sessions"
    assert sorted(p.name for p in sessions.glob("*.json")) == ["alice.json", "bob.json"]
    assert [s["agent_name"] for s in _presence(agent_server.url, key)] == ["alice", "bob"]

    # Which one? `status` lists both and says how to pick; commands take --agent.
    listed = lanes_json(repo, env, "status")
    assert [s["agent_name"] for s in listed["local_sessions"]] == ["alice", "bob"]
    assert lanes_json(repo, env, "status", "--agent", "bob")["agent_name"] == "bob"
    ambiguous = lanes(repo, env, "checkout")
    assert ambiguous.returncode == 2 and "pick one with --agent" in ambiguous.stderr
    named = {**env, "AGENTLANES_AGENT_NAME": "alice"}
    assert lanes_json(repo, named, "status")["agent_name"] == "alice"

    # The same agent checking in again replaces only its own session, and says so.
    again = lanes_json(repo, env, "checkin", "--agent", "bob", "--files", "docs/**")
    assert again["replaced_session_id"] == bob["session_id"]
    lanes_json(repo, env, "checkout", "--agent", "bob")
    assert [s["agent_name"] for s in _presence(agent_server.url, key)] == ["alice"]
    assert lanes_json(repo, env, "status")["agent_name"] == "alice"  # the only one left


def test_an_old_session_file_is_moved_to_its_agent(
    agent_server: ServerProcess, tmp_path: Path
) -> None:
    key = new_project(agent_server.url)["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    lanes_json(repo, env, "checkin", "--agent", "alice")
    state = repo / ".git" / "agentlanes"
    (state / "sessions" / "alice.json").rename(state / "session.json")  # the old layout
    assert lanes_json(repo, env, "status")["agent_name"] == "alice"
    assert (state / "sessions" / "alice.json").exists() and not (state / "session.json").exists()


def test_version_and_a_url_without_scheme(agent_server: ServerProcess, tmp_path: Path) -> None:
    import subprocess
    import sys

    from agentlanes import __version__

    env = isolated_env(tmp_path / "home", agent_server.url, None)
    repo = make_repo(tmp_path / "repo", env)
    assert lanes(repo, env, "--version").stdout.strip() == f"agentlanes {__version__}"
    short = Path(sys.executable).parent / "lanes"
    done = subprocess.run([short, "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"lanes {__version__}"
    bad = {**env, "AGENTLANES_URL": "localhost:8787", "AGENTLANES_API_KEY": "alk_x"}
    for args in (("presence",), ("checkin", "--agent", "x")):
        done = lanes(repo, bad, *args)
        assert done.returncode == 2, done.stderr
        assert "AGENTLANES_URL: 'localhost:8787' is not a server URL" in done.stderr
        no_traceback(done)
