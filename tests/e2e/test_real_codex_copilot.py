"""Codex 0.171.0 and Copilot CLI 1.0.102, the real programs, run the guard (issue 41).

Each, installed from npm at its pin, runs headless in a real git repository set up with
``lanes init --agent NAME`` and then the step ``lanes init`` tells its user (trusting the
hooks: ``lanes init --trust-hooks``), against a real ``agentlanes serve`` and the scripted
model, pointed at it by the program's own base-URL setting (the OpenAI Responses
dialect). In a ``block`` project where ``alice`` holds ``src/**`` the script makes it:
read ``src/app.py``; write it (refused); ``echo ... > src/other.py`` (refused); write
``docs/new.md``; read ``docs/free.md`` after alice sends it a message; read ``README``.

Checked, as the issue's table: checked in before the first model request; the read
passes; the refusal is in the model's next request and the file unchanged; the shell
write refused; ``docs/new.md`` among the claims; the message in the last request exactly
once; the session checked out (``docs/new.md`` among its files) within 5 s of the exit.
"""

from __future__ import annotations

import secrets
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.agent_programs.base import AgentProgram, all_programs
from tests.support.agent_programs.install import last_error, program_bin
from tests.support.agents import git, isolated_env, lanes, lanes_json, make_repo, new_project
from tests.support.scripted_model import ModelRequest, ModelServer, Script, Step
from tests.support.server import ServerProcess
from tests.support.services import unavailable
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

HELD_TEXT = "alice's file: 4f1d\n"
FREE_TEXT = "a free file: 9c2e\n"


def api(url: str, key: str, method: str, path: str, **kwargs: Any) -> Any:
    headers = {"X-API-Key": key, **kwargs.pop("headers", {})}
    r = httpx.request(method, f"{url}{path}", headers=headers, timeout=10, **kwargs)
    assert r.status_code < 300, f"{method} {path}: {r.status_code} {r.text}"
    return r.json()


def live(url: str, key: str, agent: str) -> list[dict[str, Any]]:
    sessions = api(url, key, "GET", "/api/v1/presence")["sessions"]
    return [s for s in sessions if str(s["agent_name"]).startswith(f"{agent}-")]


def last_end(url: str, key: str, agent_name: str) -> dict[str, Any] | None:
    """The newest checkout or timeout event of ``agent_name``."""
    found, since = [], 0
    while True:
        page = api(url, key, "GET", f"/api/v1/events/log?since={since}&limit=500")
        found += [e for e in page["events"] if e["type"] in ("agent.checkout", "agent.timeout")
                  and e["data"].get("agent_name") == agent_name]  # fmt: skip
        if not page["events"] or page["offset"] >= page["last_offset"]:
            return found[-1] if found else None
        since = page["offset"]


def set_up(
    server: ServerProcess, tmp_path: Path, agent: str
) -> tuple[Path, dict[str, str], str, str, AgentProgram]:
    binary = program_bin(agent)
    if binary is None:
        unavailable(f"the {agent} program", last_error.get(agent, "not installed"))
    assert binary is not None
    key = new_project(server.url, conflict_mode="block")["api_key"]
    env = isolated_env(tmp_path / "home", server.url, key)
    repo = make_repo(tmp_path / "repo", env)
    for rel, text in (("src/app.py", HELD_TEXT), ("docs/free.md", FREE_TEXT)):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, env, "add", ".")
    git(repo, env, "commit", "-q", "--no-verify", "-m", "files")
    alice = lanes_json(make_repo(tmp_path / "alice", env), env, "checkin", "--agent", "alice",
                       "--files", "src/**")  # fmt: skip
    done = lanes(repo, env, "init", "--agent", agent)
    assert done.returncode == 0, done.stderr + done.stdout
    program = all_programs()[agent](binary, tmp_path / "home")
    return repo, env, key, alice["session_token"], program


@pytest.mark.parametrize("agent", ["codex", "copilot"])
def test_the_real_program_runs_the_guard(
    agent: str, agent_server: ServerProcess, tmp_path: Path
) -> None:
    url = agent_server.url
    repo, env, key, alice, p = set_up(agent_server, tmp_path, agent)
    nonce = f"nonce-{secrets.token_hex(4)}"
    seen: dict[str, Any] = {}
    lock = threading.Lock()

    def once(name: str, action: Any) -> None:
        with lock:
            if name not in seen:
                seen[name] = action()

    def first(request: ModelRequest) -> Step:
        once("at start", lambda: live(url, key, p.agent))
        return p.read(repo / "src/app.py")

    def fifth(request: ModelRequest) -> Step:
        def claims_then_message() -> list[dict[str, Any]]:
            mine = live(url, key, p.agent)
            body = {"to": mine[0]["agent_name"], "body": f"alice here: {nonce}, keep out"}
            api(url, key, "POST", "/api/v1/messages", headers={"X-Session-Token": alice}, json=body)
            return mine

        once("after the edits", claims_then_message)
        return p.read(repo / "docs/free.md")

    script = Script(
        [
            first,
            p.write(repo / "src/app.py", "mine now\n"),
            p.shell("echo scripted > src/other.py"),
            p.write(repo / "docs/new.md", "new\n"),
            fifth,
            p.read(repo / "README"),
        ]
    )
    with ModelServer(script) as model:
        p.prepare(repo, model.url)
        run = p.run(repo, "Do the scripted steps.", {**env, **p.environment(model.url)})
        ended = time.monotonic()
        requests = model.recorded.main()
        assert requests, f"no model request: {run.stderr[-2000:]}"

        def after(n: int) -> str:
            found = next((r for r in requests if r.tool_results == n), None)
            return found.text if found else ""

        started = seen.get("at start") or []
        agent_name = started[0]["agent_name"] if started else None
        later = seen.get("after the edits") or [{}]
        gone = wait_for(lambda: not live(url, key, p.agent), timeout=5.0)
        after_exit = time.monotonic() - ended
        end = last_end(url, key, agent_name) if agent_name else None
        checks = {
            "check-in": len(started) == 1 and started[0]["meta"].get("tool") == p.tool,
            "read passes": "4f1d" in after(1),
            "refusal reaches the model": "claimed by alice" in after(2)
            and (repo / "src/app.py").read_text() == HELD_TEXT,
            "shell write checked": "claimed by alice" in after(3)
            and not (repo / "src/other.py").exists(),
            "claims follow edits": (repo / "docs/new.md").exists()
            and "docs/new.md" in (later[0].get("declared_files") or []),
            "message reaches the model once": model.recorded.count_in_last(nonce) == 1,
            "checked out on exit": bool(gone)
            and end is not None
            and end["type"] == "agent.checkout"
            and "docs/new.md" in (end["data"].get("files_touched") or []),
        }
    failed = [name for name, ok in checks.items() if not ok]
    assert not failed, (
        f"{agent}: {failed}; started={started}; later={later}; end={end}; "
        f"gone after {after_exit:.1f} s={bool(gone)}; "
        f"run rc={run.returncode} stderr={run.stderr[-1500:]}; "
        f"texts={[after(n)[-400:] for n in range(1, 4)]}"
    )
