"""The real agent programs run the guard (SPEC "Real agent programs", issue 41).

Each program with a driver under ``tests/support/agent_programs/programs/`` (Claude Code,
Gemini CLI, Codex, Copilot CLI, OpenCode, Cline), installed from npm at its pinned version,
runs headless in a real git repository set up with ``lanes init --agent NAME`` (then the
driver's ``prepare``: the step ``lanes init`` tells its user), against a real
``agentlanes serve`` and the scripted model (``tests/support/scripted_model``), pointed at
it by the program's own base-URL setting. In a ``block`` project where ``alice`` holds
``src/**`` the script makes the program:

0. read ``src/app.py`` (alice's): the read is never refused;
1. write ``src/app.py``: refused, and the refusal is in the model's next request;
2. ``echo ... > src/other.py`` in its shell: refused (a shell write is checked);
3. write ``docs/new.md``: it goes ahead, and the file joins the agent's claims;
4. read ``docs/free.md``, after alice sends the agent a message (mid-run, over HTTP);
5. read ``README``; then it ends.

Checked: the program checked in before its first model request; each step above; the
message in the last request's conversation exactly once; the session checked out, with
``docs/new.md`` among its files, within 5 s of the program's exit. A program whose driver
can resume a conversation headless also gets a message between two runs, which must
reach the resumed conversation once.

The results make the table of docs/agents.md ("The real programs"): printed at the end
of the run and written to ``var/real-agents[-latest].{md,json}``
(``AGENTLANES_AGENT_VERSIONS=latest``: ``make agents-latest``, which compares the two).
A program that cannot be installed or run here skips with the reason
(``AGENTLANES_REQUIRE_SERVICES=1``: fails).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.agent_programs.base import AgentProgram, Run, all_programs
from tests.support.agent_programs.install import installed_version, last_error, program_bin
from tests.support.agent_programs.table import CHECKS, Row, markdown, write_table
from tests.support.agents import ADMIN, git, isolated_env, lanes, lanes_json, make_repo, new_project
from tests.support.scripted_model import ModelRequest, ModelServer, Script, Step
from tests.support.server import ServerProcess
from tests.support.services import unavailable
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

PROGRAMS = all_programs()
HELD_TEXT = "alice's file: 4f1d\n"
FREE_TEXT = "a free file: 9c2e\n"
CHECKOUT_SECONDS = 5.0
ROWS: dict[str, Row] = {}


class TablePrinter:
    """Prints the table at the end of the run (a plugin registered by the module)."""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if ROWS:
            terminalreporter.write_sep("=", "real agent programs (tests/e2e/test_real_agents.py)")
            write_table(ROWS)
            terminalreporter.write_line(markdown(ROWS))


@pytest.fixture(scope="module", autouse=True)
def table(request: pytest.FixtureRequest) -> Iterator[None]:
    printer = TablePrinter()
    request.config.pluginmanager.register(printer, "agentlanes-real-agents-table")
    yield


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One real server (SQLite) for the module; each program gets a project of its own."""
    workdir = tmp_path_factory.mktemp("real-agents-server")
    process = ServerProcess(
        {
            "AGENTLANES_ADMIN_TOKEN": ADMIN["Authorization"].removeprefix("Bearer "),
            "AGENTLANES_LOG_LEVEL": "warning",
            "AGENTLANES_DATABASE_URL": f"sqlite:///{workdir / 'agentlanes.db'}",
            "AGENTLANES_EXPIRY_CHECK_SECONDS": "0.2",
        },
        workdir,
    )
    try:
        yield process.start(timeout=120)  # the programs share two cores with the rest
    finally:
        process.stop()


def api(url: str, key: str, method: str, path: str, **kwargs: Any) -> Any:
    headers = {"X-API-Key": key, **kwargs.pop("headers", {})}
    r = httpx.request(method, f"{url}{path}", headers=headers, timeout=10, **kwargs)
    assert r.status_code < 300, f"{method} {path}: {r.status_code} {r.text}"
    return r.json()


def sessions_of(url: str, key: str, agent: str) -> list[dict[str, Any]]:
    """The live sessions of this program (``<agent>-...``)."""
    live = api(url, key, "GET", "/api/v1/presence")["sessions"]
    return [s for s in live if str(s["agent_name"]).startswith(f"{agent}-")]


def events(url: str, key: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    since = 0
    while True:
        page = api(url, key, "GET", f"/api/v1/events/log?since={since}&limit=500")
        found += page["events"]
        if not page["events"] or page["offset"] >= page["last_offset"]:
            return found
        since = page["offset"]


@dataclass
class Stage:
    """A program's world: the project, its repository, alice, the program's environment."""

    url: str
    key: str
    repo: Path
    env: dict[str, str]
    alice_token: str
    program: AgentProgram
    seen: dict[str, Any] = field(default_factory=dict)  # what the script's callables saw
    lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, to: str, body: str) -> None:
        api(self.url, self.key, "POST", "/api/v1/messages", json={"to": to, "body": body},
            headers={"X-Session-Token": self.alice_token})  # fmt: skip


def once(stage: Stage, name: str, action: Callable[[], Any]) -> None:
    """Run ``action`` the first time the model is asked for this step (a retried request
    asks again); what it returns, or the error it raised, goes in ``stage.seen``."""
    with stage.lock:
        if name in stage.seen:
            return
        try:
            stage.seen[name] = action()
        except Exception as exc:  # said in the check that needs it
            stage.seen[name] = exc


def set_up(server: ServerProcess, tmp_path: Path, agent: str) -> Stage:
    """A block-mode project where alice holds ``src/**``, the program installed, and a
    repository set up for it by ``lanes init --agent``."""
    binary = program_bin(agent)
    if binary is None:
        unavailable(f"the {agent} program", last_error.get(agent, "not installed"))
    assert binary is not None
    project = new_project(server.url, conflict_mode="block")
    key = project["api_key"]
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
    program = PROGRAMS[agent](binary, tmp_path / "home")
    assert program.init_says in done.stdout, f"lanes init does not tell: {done.stdout}"
    return Stage(server.url, key, repo, env, alice["session_token"], program)


def script_for(stage: Stage, nonce: str) -> Script:
    p, repo = stage.program, stage.repo

    def at_start() -> list[dict[str, Any]]:
        wait_for(lambda: sessions_of(stage.url, stage.key, p.agent), timeout=p.start_grace)
        return sessions_of(stage.url, stage.key, p.agent)

    def first(request: ModelRequest) -> Step:
        once(stage, "at start", at_start)
        return p.read(repo / "src/app.py")

    def fourth(request: ModelRequest) -> Step:
        def claims_then_message() -> list[dict[str, Any]]:
            mine = sessions_of(stage.url, stage.key, p.agent)
            if mine:
                stage.send(mine[0]["agent_name"], f"alice here: {nonce}, please keep out of src/")
            return mine

        once(stage, "after the edits", claims_then_message)
        return p.read(repo / "docs/free.md")

    return Script(
        [
            first,
            p.write(repo / "src/app.py", "mine now\n"),
            p.shell("echo scripted > src/other.py"),
            p.write(repo / "docs/new.md", "new notes\n"),
            fourth,
            p.read(repo / "README"),
        ]
    )


def by_results(model: ModelServer, n: int) -> ModelRequest | None:
    """The first main request that came after ``n`` tool results."""
    return next((r for r in model.recorded.main() if r.tool_results == n), None)


def judge_run(stage: Stage, model: ModelServer, run: Run, nonce: str) -> dict[str, str]:
    """Each check of the table: "yes", or "no: why"."""
    p, repo = stage.program, stage.repo
    out: dict[str, str] = {}

    def check(name: str, ok: bool, why: str) -> None:
        out[name] = "yes" if ok else f"no: {why}"

    started = stage.seen.get("at start")
    check(
        "checkin",
        isinstance(started, list)
        and len(started) == 1
        and (started[0].get("meta") or {}).get("tool") == p.tool,
        f"live {p.agent} sessions at the first model request: {started!r}",
    )
    after_read = by_results(model, 1)
    read_text = after_read.newest_result() if after_read else ""
    check("read", "4f1d" in read_text and "claimed by alice" not in read_text,
          f"the read's result: {read_text[-300:]!r}")  # fmt: skip
    after_write = by_results(model, 2)
    reason = after_write.newest_result() if after_write else ""
    check(
        "refusal",
        "claimed by alice" in reason and (repo / "src/app.py").read_text() == HELD_TEXT,
        f"src/app.py now {(repo / 'src/app.py').read_text()!r}; the write's result: "
        f"{reason[-300:]!r}",
    )
    after_shell = by_results(model, 3)
    shell = after_shell.newest_result() if after_shell else ""
    check(
        "shell",
        "claimed by alice" in shell and not (repo / "src/other.py").exists(),
        f"src/other.py exists: {(repo / 'src/other.py').exists()}; the command's result: "
        f"{shell[-300:]!r}",
    )
    later = stage.seen.get("after the edits")
    claims = (later[0].get("declared_files") or []) if isinstance(later, list) and later else []
    check(
        "claims",
        (repo / "docs/new.md").exists() and "docs/new.md" in claims,
        f"docs/new.md written: {(repo / 'docs/new.md').exists()}; claims then: {later!r}",
    )
    count = model.recorded.count_in_last(nonce)
    check("message", count == 1, f"in the last request {count} times")
    agent_name = started[0]["agent_name"] if isinstance(started, list) and started else None
    check("checkout", *checked_out(stage, run, agent_name))
    return out


def checked_out(stage: Stage, run: Run, agent_name: str | None) -> tuple[bool, str]:
    """Whether the session ended (by a check-out, with docs/new.md among its files) within
    CHECKOUT_SECONDS of the program's exit."""
    if agent_name is None:
        return False, "never checked in"
    gone = wait_for(
        lambda: all(s["agent_name"] != agent_name
                    for s in sessions_of(stage.url, stage.key, stage.program.agent)),
        timeout=max(0.1, run.ended + CHECKOUT_SECONDS - time.monotonic()),
    )  # fmt: skip
    after = time.monotonic() - run.ended
    if not gone:
        return False, f"still live {after:.1f} s after the program's exit"
    ends = [e for e in events(stage.url, stage.key)
            if e["type"] in ("agent.checkout", "agent.timeout")
            and e["data"].get("agent_name") == agent_name]  # fmt: skip
    if not ends or ends[-1]["type"] != "agent.checkout":
        return False, f"ended without a check-out: {ends!r}"
    touched = ends[-1]["data"].get("files_touched") or []
    if "docs/new.md" not in touched:
        return False, f"checked out without docs/new.md in its files: {touched!r}"
    return True, ""


def between_runs(stage: Stage, model: ModelServer, first: Run, agent_name: str | None) -> str:
    """A message sent between two runs reaches the resumed conversation exactly once (and
    the one of the first run is not given again)."""
    p = stage.program
    session = p.session_of(first)
    argv = p.resume_command(stage.repo, "go on", session) if session else None
    if argv is None or agent_name is None:
        return "no: cannot resume (no conversation id in its output)"
    nonce = f"between-{secrets.token_hex(4)}"
    # Its session has checked out, so only a registered agent's name takes a message now
    # (SPEC: any other name is 404 AGENT_NOT_FOUND); the resumed run checks in under it.
    api(stage.url, stage.key, "PUT", f"/api/v1/agents/{agent_name}")
    stage.send(agent_name, f"alice here: {nonce}, one more thing")
    done = model.recorded.last_main()
    n = done.tool_results if done else 0
    model.script = Script([Step.say("-")] * n + [p.read(stage.repo / "README")])
    env = {**stage.env, **p.environment(model.url)}
    again = p.run(stage.repo, "go on", env, argv=argv)
    if again.returncode != 0:
        return f"no: the resumed run exited {again.returncode}: {again.stderr[-300:]}"
    count = model.recorded.count_in_last(nonce)
    return "yes" if count == 1 else f"no: in the resumed conversation {count} times"


@pytest.mark.timeout(900)  # two runs of a real program, on a machine shared with others
@pytest.mark.parametrize("agent", sorted(PROGRAMS))
def test_real_program_runs_the_guard(agent: str, server: ServerProcess, tmp_path: Path) -> None:
    stage = set_up(server, tmp_path, agent)
    p = stage.program
    version = installed_version(agent, p.binary)
    nonce = f"nonce-{secrets.token_hex(4)}"
    with ModelServer(script_for(stage, nonce)) as model:
        p.prepare(stage.repo, model.url)
        env = {**stage.env, **p.environment(model.url)}
        run = p.run(stage.repo, "Do the scripted steps.", env)
        if not model.recorded.main():
            unavailable(
                f"the {agent} program (v{version})",
                f"it never asked the model (exit {run.returncode}): {run.stderr[-500:]}",
            )
        ROWS[agent] = Row(agent, version, {})  # filled as it goes: a check not reached is "—"
        checks = ROWS[agent].checks
        checks.update(judge_run(stage, model, run, nonce))
        if p.resumes:
            started = stage.seen.get("at start")
            name = started[0]["agent_name"] if isinstance(started, list) and started else None
            checks["resume"] = between_runs(stage, model, run, name)
    failed = {CHECKS.get(k, k): v for k, v in checks.items() if v != "yes"}
    assert not failed, (
        f"{agent} {version}: {json.dumps(failed, indent=1)}\nexit {run.returncode}, "
        f"{run.seconds:.1f} s\nstderr: {run.stderr[-1500:]}\nstdout: {run.stdout[-1500:]}"
    )
