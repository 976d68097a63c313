"""The Dockerfile, built and run: `docker build --network host` on the base image (a
stand-in made from Debian's packages where it cannot be pulled, scripts/ensure-docker-base.sh)
and `docker run --network host` (loopback only: no bridge network)."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.support.docker import ROOT, docker, require_docker
from tests.support.server import free_port

# Building the image (on the layer cache) and starting it: minutes on a busy machine.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

IMAGE = "agentlanes:test"  # one tag, rebuilt on top of the layer cache by every run
ADMIN_TOKEN = "admin-secret-for-the-image-test-2026"


class Container:
    def __init__(self, name: str, port: int) -> None:
        self.name = name
        self.port = port
        self.url = f"http://127.0.0.1:{port}"

    def exec(self, *args: str) -> str:
        return docker("exec", self.name, *args)

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        logs = docker("logs", "--tail", "50", self.name, check=False)
        raise AssertionError(f"the container never answered /readyz:\n{logs}")

    def health(self) -> str:
        return docker("inspect", "-f", "{{.State.Health.Status}}", self.name)


@pytest.fixture(scope="module")
def container() -> Iterator[Container]:
    require_docker()
    docker("build", "--network", "host", "-t", IMAGE, str(ROOT), timeout=900)
    name = f"agentlanes-test-{secrets.token_hex(4)}"
    volume = f"{name}-data"
    port = free_port()
    docker("volume", "create", volume)
    try:
        docker(
            "run",
            "-d",
            "--name",
            name,
            "--network",
            "host",
            # The image's HEALTHCHECK command as shipped; only checked more often here.
            "--health-interval",
            "1s",
            "--health-start-period",
            "60s",
            "-e",
            f"AGENTLANES_PORT={port}",
            "-e",
            "AGENTLANES_HOST=127.0.0.1",
            "-e",
            f"AGENTLANES_ADMIN_TOKEN={ADMIN_TOKEN}",
            "-v",
            f"{volume}:/data",
            IMAGE,
        )
        box = Container(name, port)
        box.wait_ready()
        yield box
    finally:
        docker("rm", "-f", name, check=False)
        docker("volume", "rm", "-f", volume, check=False)


def test_the_image_serves_runs_as_its_user_turns_healthy_and_keeps_data_on_its_volume(
    container: Container,
) -> None:
    assert httpx.get(f"{container.url}/readyz").status_code == 200

    # The process (pid 1, `agentlanes serve`) runs as the image's non-root user.
    status = container.exec("cat", "/proc/1/status")
    uid = next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:"))
    assert uid == "10001"
    assert container.exec("id", "-un") == "agentlanes"
    cmdline = container.exec("cat", "/proc/1/cmdline").replace("\0", " ")
    assert "agentlanes serve" in cmdline

    # The CLI inside the container, through the server it runs.
    out = json.loads(container.exec("agentlanes", "project", "create", "in-image", "--json"))
    key = out["api_key"]
    h = {"X-API-Key": key}
    r = httpx.post(f"{container.url}/api/v1/checkin", json={"agent_name": "a1"}, headers=h)
    assert r.status_code == 201, r.text
    session_id = r.json()["session_id"]

    deadline = time.monotonic() + 60
    while container.health() != "healthy":
        assert time.monotonic() < deadline, f"health: {container.health()}"
        time.sleep(0.5)

    docker("restart", container.name, timeout=60)
    container.wait_ready()
    r = httpx.get(f"{container.url}/api/v1/events/log?limit=100", headers=h)
    assert r.status_code == 200, r.text  # the project and its key survived on /data
    log = r.json()["events"]
    checkins = [e["data"]["session"]["session_id"] for e in log if e["type"] == "agent.checkin"]
    assert checkins == [session_id]
    presence = httpx.get(f"{container.url}/api/v1/presence", headers=h).json()
    assert [s["agent_name"] for s in presence["sessions"]] == ["a1"]
