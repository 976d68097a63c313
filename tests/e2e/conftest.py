"""End-to-end helpers: a real server, admin-created projects, a websockets client."""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.server import ServerProcess

ADMIN = {"Authorization": "Bearer admin-secret-for-the-test-suite-2026"}


def create_project(base_url: str, **body: Any) -> dict[str, Any]:
    body.setdefault("name", f"e2e-{secrets.token_hex(4)}")
    r = httpx.post(f"{base_url}/api/v1/projects", json=body, headers=ADMIN, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def agent_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One real server (SQLite) shared by a module's agent-side tests; each test makes
    its own project, so they stay apart."""
    workdir = tmp_path_factory.mktemp("agent-server")
    server = ServerProcess(
        {
            "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
            "AGENTLANES_LOG_LEVEL": "warning",
            "AGENTLANES_DATABASE_URL": f"sqlite:///{workdir / 'agentlanes.db'}",
            "AGENTLANES_EXPIRY_CHECK_SECONDS": "0.2",
        },
        workdir,
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def agent_process() -> Iterator[Callable[..., str]]:
    """``agent_process()``: a stand-in for an agent's process (a sleeper) that lives as long
    as the test; its pid, for ``AGENTLANES_AGENT_PID`` in the hooks' environment. The
    keepalives that SessionStart spawns watch it, so they end with the test (about a
    second after teardown kills it) instead of outliving pytest. ``agent_process(*argv)``
    adds arguments to its command line (e.g. to look like a keepalive)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*argv: str) -> str:
        proc = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(3600)", *argv],
            stdin=subprocess.DEVNULL,
        )
        started.append(proc)
        for _ in range(200):  # until it has exec'd (its command line is its own)
            if b"time.sleep" in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
                break
            time.sleep(0.01)
        return str(proc.pid)

    yield start
    for proc in started:
        proc.kill()
        proc.wait()
    # The keepalives that watched them end within about a second (they poll): wait, so
    # none outlives its test.
    pids = {str(proc.pid).encode() for proc in started}
    deadline = time.monotonic() + 10
    while watching(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = watching(pids)
    assert not left, f"keepalives still running after the test: {left}"


def watching(pids: set[bytes]) -> list[int]:
    """The processes whose command line has ``--watch-pid P`` for one of ``pids``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        for k, arg in enumerate(args[:-1]):
            if arg == b"--watch-pid" and args[k + 1] in pids:
                found.append(int(entry.name))
    return found
