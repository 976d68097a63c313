"""Range claims end to end (SPEC "Line-level claims": range claims): agents in clones of
one repository claim functions of one file with the real command line
(``lanes checkin --files 'app.py#f'``), read on ``HEAD`` with tree-sitter, against a real
server whose project is in block mode (``block_on = claims``, the default).

- Two agents claiming different functions of one file both get in; the server shows
  their claims with the symbols, and so does ``lanes presence``.
- A third agent claiming one of those functions is refused, naming the holder.
- A glob claim of the file is refused too: it meets every range.
- An unknown symbol is refused before anything is sent, naming the file's symbols.
- Claude Code's edit guard of an agent with a range claim lets its edit of the file
  through (its lines are its claim there) while an agent with an older claim holds
  another function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_claude_hooks import event, hook
from tests.support.agents import git, isolated_env, lanes, make_repo, new_project, no_traceback
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e

APP = '''\
"""The app."""


def f(x):
    total = x
    return total + 1


def g(y):
    value = y * 2
    return value


class Login:
    def check(self, password):
        return password == "secret"
'''


def presence(url: str, key: str) -> dict[str, dict[str, Any]]:
    r = httpx.get(f"{url}/api/v1/presence", headers={"X-API-Key": key}, timeout=10)
    return {s["agent_name"]: s for s in r.json()["sessions"]}


def test_agents_claim_functions_of_one_file_with_lanes_checkin(
    agent_server: ServerProcess, tmp_path: Path, agent_process: Any
) -> None:
    url = agent_server.url
    key = new_project(url, conflict_mode="block")["api_key"]
    origin_env = isolated_env(tmp_path / "home-origin", url, key)
    origin = make_repo(tmp_path / "origin", origin_env)
    (origin / "app.py").write_text(APP)
    git(origin, origin_env, "add", "app.py")
    git(origin, origin_env, "commit", "-q", "--no-verify", "-m", "app")
    base = git(origin, origin_env, "rev-parse", "HEAD:app.py").stdout.strip()
    agents = {}
    for name in ("alice", "bob", "carol", "dave"):
        env = isolated_env(
            tmp_path / f"home-{name}", url, key, AGENTLANES_AGENT_PID=agent_process()
        )
        repo = tmp_path / name
        git(tmp_path, env, "clone", "-q", str(origin), str(repo))
        agents[name] = (repo, env)

    def checkin(name: str, *files: str) -> Any:
        repo, env = agents[name]
        done = lanes(repo, env, "checkin", "--agent", name, "--files", *files)
        no_traceback(done)
        return done

    done = checkin("alice", "app.py#f")
    assert done.returncode == 0, done.stderr
    assert "claimed app.py#f: lines 4-6 (on HEAD)" in done.stdout
    # Bob's clone has moved lines around in its work tree: HEAD's lines count.
    bob_repo = agents["bob"][0]
    (bob_repo / "app.py").write_text("# local note\n" + APP)
    done = checkin("bob", "app.py#g", "app.py#Login.check")
    assert done.returncode == 0, done.stderr + done.stdout
    live = presence(url, key)
    assert live["alice"]["claims"] == [
        {"path": "app.py", "base": base, "ranges": [[4, 6]], "symbol": "f"}
    ]
    assert live["bob"]["claims"] == [
        {"path": "app.py", "base": base, "ranges": [[9, 11]], "symbol": "g"},
        {"path": "app.py", "base": base, "ranges": [[15, 16]], "symbol": "Login.check"},
    ]
    assert live["alice"]["declared_files"] == live["bob"]["declared_files"] == []
    shown = lanes(*agents["alice"], "presence")
    assert "app.py#f (lines 4-6)" in shown.stdout, shown.stdout
    assert "app.py#Login.check (lines 15-16)" in shown.stdout, shown.stdout

    # The same function: refused for the later one, naming who holds it.
    done = checkin("carol", "app.py#f")
    assert done.returncode != 0
    assert "alice" in done.stdout + done.stderr
    # The whole file: it meets both.
    done = checkin("carol", "app.py")
    assert done.returncode != 0
    assert "alice" in done.stdout + done.stderr and "bob" in done.stdout + done.stderr
    assert "carol" not in presence(url, key)

    # An unknown symbol: refused on the agent's side, naming the file's symbols.
    done = checkin("dave", "app.py#h")
    assert done.returncode != 0
    assert "no symbol 'h'" in done.stderr and "f, g, Login, Login.check" in done.stderr
    assert "dave" not in presence(url, key)

    # Claude Code's guard in bob's clone: his edit of g's lines is let through although
    # alice, whose claim is older, holds f of the same file (block mode refuses certain
    # overlaps only; the guard sends his range claims, his lines of app.py).
    repo, env = agents["bob"]
    sid = "5e5e5e5e-0000-4000-8000-000000000005"
    payload = event(
        repo, sid, "PreToolUse", tool_name="Edit", tool_use_id="toolu_01",
        tool_input={"file_path": str(repo / "app.py"), "old_string": "value = y * 2",
                    "new_string": "value = y * 3"},
    )  # fmt: skip
    answer = hook(repo, {**env, "AGENTLANES_AGENT_NAME": "bob"}, payload) or {}
    out = answer.get("hookSpecificOutput") or {}
    assert out.get("permissionDecision") != "deny", out
