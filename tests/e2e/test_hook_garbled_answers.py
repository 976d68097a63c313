"""The git hook and the guard, as real processes, against a server that answers garbage.

A proxy's HTML error page, a bad Content-Length, a chunk size that is not hex: each is
"server unreachable" to the hooks. Fail-open (the default) lets the commit or the edit
through with a message; ``fail_closed`` refuses it. Never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agents import git, isolated_env, lanes, make_repo, no_traceback, write_files
from tests.support.raw_server import RawServer

pytestmark = pytest.mark.e2e

PROXY_PAGE = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
GARBLED = {
    "bad-content-length": b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\n{}",
    "negative-content-length": b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n{}",
    "proxy-error-page": b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n"
    b"Content-Length: %d\r\n\r\n" % len(PROXY_PAGE) + PROXY_PAGE,
    "proxy-page-as-200": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + PROXY_PAGE,
    "bad-chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"xyz\r\n{}\r\n0\r\n\r\n",
    "cut-short": b'HTTP/1.1 200 OK\r\nContent-Length: 400\r\n\r\n{"conflicts": [',
}


@pytest.fixture(scope="module")
def raw() -> Iterator[RawServer]:
    with RawServer() as server:
        yield server


@pytest.mark.parametrize("kind", sorted(GARBLED))
def test_the_git_hook_fails_open_or_closed_on_garbage(
    raw: RawServer, tmp_path: Path, kind: str
) -> None:
    raw.answer = GARBLED[kind]
    env = isolated_env(tmp_path / "home", raw.url, "alk_garbled")
    repo = make_repo(tmp_path / "repo", env)
    assert lanes(repo, env, "hook", "install").returncode == 0
    write_files(repo, "a.py")
    git(repo, env, "add", ".")
    before = raw.requests
    allowed = git(repo, env, "commit", "-q", "-m", "a", check=False)
    assert raw.requests > before  # the hook did ask the garbling server
    no_traceback(allowed)
    assert allowed.returncode == 0, allowed.stderr
    assert "server unreachable" in allowed.stderr and "commit not checked" in allowed.stderr

    (repo / ".agentlanes.toml").write_text("fail_closed = true\n")
    write_files(repo, "b.py")
    git(repo, env, "add", ".")
    refused = git(repo, env, "commit", "-q", "-m", "b", check=False)
    no_traceback(refused)
    assert refused.returncode != 0
    assert "server unreachable" in refused.stderr
    assert "commit refused (fail_closed)" in refused.stderr


@pytest.mark.parametrize("kind", sorted(GARBLED))
def test_the_guard_fails_open_or_closed_on_garbage(
    raw: RawServer, tmp_path: Path, kind: str
) -> None:
    raw.answer = GARBLED[kind]
    env = isolated_env(tmp_path / "home", raw.url, "alk_garbled")
    repo = make_repo(tmp_path / "repo", env)
    edit = json.dumps(
        {
            "session_id": "s1",
            "hook_event_name": "PreToolUse",
            "cwd": str(repo),
            "tool_name": "Edit",
            "tool_input": {"file_path": str(repo / "x.py"), "old_string": "a", "new_string": "b"},
        }
    )
    for fail_closed, decision in (("0", None), ("1", "deny")):
        done = lanes(repo, {**env, "AGENTLANES_FAIL_CLOSED": fail_closed}, "guard", stdin=edit)
        no_traceback(done)
        assert done.returncode == 0, done.stderr  # exit 2 would block the tool call
        assert "internal error" not in done.stderr
        answer = json.loads(done.stdout)["hookSpecificOutput"]
        assert answer.get("permissionDecision") == decision, answer
        said = answer.get("permissionDecisionReason") or answer.get("additionalContext")
        assert "server unreachable" in said, answer
