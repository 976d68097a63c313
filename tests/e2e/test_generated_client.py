"""A client generated from the served OpenAPI document by openapi-python-client (the most
used Python generator, a dev dependency) has every operation, and works: it checks in,
heartbeats and checks out against a real server.

openapi-python-client 0.29 could not parse the recursive ``JsonWithoutNul`` schema when it
was an ``anyOf`` that refers to itself: it dropped the bodies that use it and their
operations (``POST /api/v1/checkin``, ``PUT /api/v1/agents/{name}``), with a warning.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.support.agents import new_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e

METHODS = {"get", "put", "post", "patch", "delete", "head", "options", "trace"}
PACKAGE = "lanes_generated_client"


@pytest.fixture(scope="module")
def generated(
    agent_server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[dict[str, Any], Path, str]]:
    """The served document, the generated package's folder, the generator's output."""
    work = tmp_path_factory.mktemp("generated")
    document = httpx.get(f"{agent_server.url}/schema/openapi.json", timeout=10).json()
    (work / "openapi.json").write_text(json.dumps(document))
    # No post hooks: the generator would run ruff over its output; the test needs none.
    (work / "config.json").write_text(json.dumps({"post_hooks": []}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(work / "openapi.json"),
            "--output-path",
            str(work / PACKAGE),
            "--meta",
            "none",
            "--config",
            str(work / "config.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(work))
    try:
        yield document, work / PACKAGE, done.stdout + done.stderr
    finally:
        sys.path.remove(str(work))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def test_every_operation_is_generated_without_a_warning(
    generated: tuple[dict[str, Any], Path, str],
) -> None:
    document, package, output = generated
    assert "Warning" not in output and "Unable to" not in output, output
    wanted = {
        (method, path)
        for path, item in document["paths"].items()
        for method in item
        if method in METHODS
    }
    made = set()
    for module in (package / "api").rglob("*.py"):
        made.update(re.findall(r'"method": "(\w+)",\s*"url": "([^"]+)"', module.read_text()))
    assert wanted - made == set()
    assert ("post", "/api/v1/checkin") in made and ("put", "/api/v1/agents/{name}") in made


def generated_module(name: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_the_generated_client_checks_in_heartbeats_and_checks_out(
    generated: tuple[dict[str, Any], Path, str], agent_server: ServerProcess
) -> None:
    key = new_project(agent_server.url)["api_key"]
    client_module = generated_module("client")
    models = generated_module("models")
    checkin = generated_module("api.sessions.api_v1_checkin_checkin")
    heartbeat = generated_module("api.sessions.api_v1_heartbeat_heartbeat")
    checkout = generated_module("api.sessions.api_v1_checkout_checkout")
    presence = generated_module("api.sessions.api_v1_presence_presence")
    # The project key as the generator's own authenticated client sends it.
    client = client_module.AuthenticatedClient(
        base_url=agent_server.url, token=key, prefix="", auth_header_name="X-API-Key"
    )

    meta = models.CheckinBodyMetaType0.from_dict({"tool": "generated", "nested": {"n": [1]}})
    body = models.CheckinBody(agent_name="gen-1", declared_files=["src/**"], meta=meta)
    answer = checkin.sync_detailed(client=client, body=body)
    assert answer.status_code == 201, answer.content
    session = answer.parsed
    assert isinstance(session, models.CheckinAnswer) and session.status == "active"

    as_agent = client.with_headers({"X-Session-Token": session.session_token})
    beat = heartbeat.sync_detailed(client=as_agent)
    assert beat.status_code == 200, beat.content
    assert isinstance(beat.parsed, models.HeartbeatAnswer)
    assert beat.parsed.session_id == session.session_id
    assert beat.parsed.expires_at >= session.expires_at  # a datetime, parsed

    live = presence.sync(client=client)
    assert [s.agent_name for s in live.sessions] == ["gen-1"]

    done = checkout.sync_detailed(
        client=as_agent, body=models.CheckoutBody(work_summary="generated client")
    )
    assert done.status_code == 200, done.content
    assert presence.sync(client=client).sessions == []
    # An ended session: the documented error answer, typed.
    again = heartbeat.sync_detailed(client=as_agent)
    assert again.status_code == 410 and isinstance(again.parsed, models.Error)
