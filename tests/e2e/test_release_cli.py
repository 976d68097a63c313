"""``lanes release PATH...`` from a shell against a real server (SPEC "Many agents, one
working tree"): claims given back by name or by the file they name (from a subfolder too),
a file held only through a glob named with that glob, nothing changed on a wrong path, and
the session file the hooks read kept current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.agents import isolated_env, lanes, lanes_json, make_repo, new_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e


def test_claims_given_back_from_a_shell(agent_server: ServerProcess, tmp_path: Path) -> None:
    key = new_project(agent_server.url)["api_key"]
    env = isolated_env(tmp_path / "home", agent_server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    (repo / "src").mkdir()
    files = ["src/app.py", "src/db.py", "docs/**"]
    lanes_json(repo, env, "checkin", "--agent", "bob", "--files", *files)

    # A file, named from the folder it is in.
    done = lanes(repo / "src", env, "release", "app.py", "--agent", "bob")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "released: src/app.py",
        "your claims now: src/db.py docs/**",
    ]

    # A file held only through a glob: the glob is named, nothing changes.
    held = lanes(repo, env, "release", "docs/guide.md", "--agent", "bob")
    assert held.returncode == 2
    assert "docs/guide.md: held by your pattern docs/** (release the pattern" in held.stderr
    assert "nothing released" in held.stderr and "Traceback" not in held.stderr
    wrong = lanes(repo, env, "release", "lib/x.py", "--agent", "bob")
    assert wrong.returncode == 2 and "lib/x.py: not among your claims" in wrong.stderr
    live = lanes_json(repo, env, "presence")
    [bob] = [s for s in live["sessions"] if s["agent_name"] == "bob"]
    assert bob["declared_files"] == ["src/db.py", "docs/**"]

    # The rest: no claims left, and the session file the hooks read says so.
    gone = lanes_json(repo, env, "release", "src/db.py", "docs/**", "--agent", "bob")
    assert gone["released"] == ["src/db.py", "docs/**"] and gone["declared_files"] == []
    saved = json.loads((repo / ".git/agentlanes/sessions/bob.json").read_text())
    assert saved["declared_files"] == []

    # `--files ''` is no claims at all, as `declared_files: []` is.
    lanes_json(repo, env, "status", "--agent", "bob", "--files", "src/**")
    none = lanes_json(repo, env, "status", "--agent", "bob", "--files", "")
    assert none["declared_files"] == []
