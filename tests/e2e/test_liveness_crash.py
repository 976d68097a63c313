"""kill -9 of a real server inside a heartbeat batching window, then a restart: no session
that heartbeated within its TTL times out, and no acknowledged write is lost."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import create_project
from tests.support.server import ServerProcess

pytestmark = [pytest.mark.e2e]

# Wide enough for the restart itself: a server start takes 7-10 s on a loaded 2-core
# machine, and the sessions' TTL runs while it is down (an 8 s TTL timed them out there).
TTL = 16
FLUSH = 2.0  # the widest batching window the settings allow


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(params=["sqlite", "postgres"])
def crash_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'crash.db'}"
    return str(request.getfixturevalue("pg_database"))


def test_kill_9_in_a_batching_window_loses_no_live_session_and_no_acknowledged_write(
    crash_db: str, tmp_path: Path
) -> None:
    server = ServerProcess(
        {
            "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
            "AGENTLANES_LOG_LEVEL": "warning",
            "AGENTLANES_DATABASE_URL": crash_db,
            "AGENTLANES_EXPIRY_CHECK_SECONDS": "0.2",
            "AGENTLANES_LIVENESS_FLUSH_SECONDS": str(FLUSH),
        },
        tmp_path,
    )
    server.start()
    try:
        key = create_project(server.url, heartbeat_interval_seconds=1, heartbeat_ttl_seconds=TTL)[
            "api_key"
        ]
        h = {"X-API-Key": key}
        with httpx.Client(base_url=server.url, headers=h, timeout=10) as http:
            tokens: dict[str, str] = {}
            for i in range(20):
                r = http.post("/api/v1/checkin", json={"agent_name": f"s{i}"})
                assert r.status_code == 201, r.text
                tokens[r.json()["session_id"]] = r.json()["session_token"]

            acked: dict[str, datetime] = {}

            def beat_all() -> None:
                for session_id, token in tokens.items():
                    r = http.post("/api/v1/heartbeat", headers={"X-Session-Token": token})
                    assert r.status_code == 200, r.text
                    acked[session_id] = _when(r.json()["last_heartbeat_at"])

            # Beat well past the check-ins' own expiry, so the database holds what the
            # batches wrote through.
            started = time.monotonic()
            while time.monotonic() - started < TTL + 4:
                beat_all()
                time.sleep(0.5)
            # Acknowledged writes made just before the crash (inside the window).
            late = http.post("/api/v1/checkin", json={"agent_name": "late"})
            assert late.status_code == 201
            lease = http.post(
                "/api/v1/leases",
                json={"resource": "deploy:prod"},
                headers={"X-Session-Token": late.json()["session_token"]},
            )
            assert lease.status_code == 201, lease.text
            beat_all()
            server.kill()

        server.start()
        with httpx.Client(base_url=server.url, headers=h, timeout=10) as http:
            # The crash lost at most one batching window of heartbeat time (plus the
            # half-second between two of our rounds): the database has the rest.
            stored = {
                s["session_id"]: _when(s["last_heartbeat_at"])
                for s in http.get("/api/v1/presence").json()["sessions"]
            }
            for session_id, last in acked.items():
                lost = last - stored[session_id]
                assert lost <= timedelta(seconds=FLUSH + 1.0), (session_id, lost)
            # Every session beat within its TTL (less the one window a crash may lose).
            for session_id, token in tokens.items():
                r = http.post("/api/v1/heartbeat", headers={"X-Session-Token": token})
                assert r.status_code == 200, (session_id, r.text)
            time.sleep(1.0)  # the expiry job runs every 0.2 s
            events = http.get("/api/v1/events/log?limit=1000").json()["events"]
            assert [e for e in events if e["type"] == "agent.timeout"] == []
            live = {s["agent_name"] for s in http.get("/api/v1/presence").json()["sessions"]}
            assert live == {f"s{i}" for i in range(20)} | {"late"}
            leases: Any = http.get("/api/v1/leases").json()
            held = leases["leases"] if isinstance(leases, dict) else leases
            assert [x["resource"] for x in held] == ["deploy:prod"]
            assert held[0]["fencing_token"] == lease.json()["fencing_token"]
    finally:
        server.stop()
