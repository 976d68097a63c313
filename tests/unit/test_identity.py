"""Which agent a process acts for (client/identity.py), on real processes, and the older
claim as the hooks read it (client/report.py ``claimed_earlier``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from agentlanes.client.identity import (
    agent_process,
    ancestors,
    is_alive,
    process_info,
    session_by_ancestry,
)
from agentlanes.client.report import claimed_earlier

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")

# A child that runs, through a shell as hooks are run, a grandchild which reports what
# identity.py sees from there.
PROBE = (
    "import json, sys; sys.path[:0] = {path!r}; "
    "from agentlanes.client import identity as i; "
    "print(json.dumps({{'agent': i.agent_process({{}}), "
    "'found': (i.session_by_ancestry({sessions!r}) or {{}}).get('agent_name')}}))"
)


def run_under_shell(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    code = PROBE.format(path=sys.path, sessions=sessions)
    inner = f"{sys.executable} -c {json.dumps(code)}"
    done = subprocess.run(
        ["/bin/sh", "-c", inner + "; true"], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def me(name: str, pid: int | None = None, started: str | None = None) -> dict[str, Any]:
    pid = os.getpid() if pid is None else pid
    info = process_info(pid)
    return {
        "agent_name": name,
        "agent_pid": pid,
        "agent_started": info[2] if started is None and info else started,
    }


def test_the_agent_is_the_nearest_ancestor_that_is_not_a_shell() -> None:
    seen = run_under_shell([])
    assert seen["agent"] == [os.getpid(), process_info(os.getpid())[2]]  # type: ignore[index]


def test_a_process_below_the_agent_finds_its_session() -> None:
    sessions = [me("alice"), me("bob", pid=1)]
    assert run_under_shell(sessions)["found"] == "alice"
    assert session_by_ancestry(sessions)["agent_name"] == "alice"  # type: ignore[index]


def test_a_reused_pid_or_one_process_for_two_agents_is_nobody() -> None:
    assert run_under_shell([me("alice", started="1")])["found"] is None
    assert run_under_shell([me("alice"), me("bob")])["found"] is None


def test_liveness_and_ancestry() -> None:
    chain = [pid for pid, _ in ancestors()]
    assert chain[0] == os.getpid() and os.getppid() in chain
    assert is_alive(os.getpid(), process_info(os.getpid())[2])  # type: ignore[index]
    assert not is_alive(os.getpid(), "1")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert not is_alive(dead.pid, None)
    assert agent_process({"AGENTLANES_AGENT_PID": str(os.getpid())})[0] == os.getpid()  # type: ignore[index]


def overlap(session: str, agent: str, at: str | None, path: str = "src/a.py") -> dict[str, Any]:
    f: dict[str, Any] = {"pattern": path, "their_pattern": path, "example": path, "certain": True}
    if at is not None:
        f["claimed_at"] = at
    return {"session_id": session, "agent_name": agent, "certain": True, "overlapping_files": [f]}


def test_only_an_earlier_claim_refuses() -> None:
    mine = [overlap("s-me", "me", "2026-01-01T10:00:00.000000Z")]
    older = overlap("s-a", "alice", "2026-01-01T09:00:00.000000Z")
    newer = overlap("s-b", "bob", "2026-01-01T11:00:00.000000Z")
    assert [c["agent_name"] for c in claimed_earlier([older, newer], mine)] == ["alice"]
    # Not claimed by me yet (a new file): every overlap counts.
    assert len(claimed_earlier([older, newer], [])) == 2
    # A server without claim times: every overlap counts, as before.
    assert len(claimed_earlier([overlap("s-c", "carol", None)], mine)) == 1
