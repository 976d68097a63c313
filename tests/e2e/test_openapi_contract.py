"""The OpenAPI document is the contract: schemathesis drives a real server from it.

A real `agentlanes serve` process, a real project (its API key from the admin API) and real
sessions (tokens from check-in, one per schemathesis worker; see
tests/support/schemathesis_hooks.py); schemathesis runs every phase over every operation
with every check (`--checks all`), and any finding fails the test: a 5xx, a status or
content type the document does not list, a body that is not the documented shape, a
request the document allows but the server refuses or the other way round, an undeclared
method answered without 405 and `Allow`, an operation that ignores its credentials.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import create_project
from tests.support.server import ServerProcess

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
MIN_CASES = 1000
# Per operation in the fuzzing phase; the coverage phase adds its own (boundary values and
# each constraint broken in turn), so the run stays well above MIN_CASES.
MAX_EXAMPLES = 15


def _operations(document: dict[str, object]) -> int:
    methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
    paths = document["paths"]
    assert isinstance(paths, dict)
    return sum(1 for item in paths.values() for method in item if method in methods)


@pytest.mark.timeout(900)
def test_schemathesis_finds_nothing_over_every_operation(tmp_path: Path) -> None:
    server = ServerProcess(
        {
            "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
            "AGENTLANES_LOG_LEVEL": "warning",
            "AGENTLANES_DATABASE_URL": f"sqlite:///{tmp_path / 'agentlanes.db'}",
        },
        tmp_path,
    ).start()
    try:
        # A random slug (fuzzing the admin API may delete or re-key projects it names).
        api_key = create_project(server.url)["api_key"]
        document = httpx.get(f"{server.url}/schema/openapi.json", timeout=10).json()
        operations = _operations(document)
        env = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "tests.support.schemathesis_hooks",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "AGENTLANES_ST_URL": server.url,
            "AGENTLANES_ST_API_KEY": api_key,
            "AGENTLANES_ST_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
        }
        run = subprocess.run(
            [
                str(Path(sys.executable).parent / "st"),
                "run",
                f"{server.url}/schema/openapi.json",
                "--checks",
                "all",
                "--max-examples",
                str(MAX_EXAMPLES),
                "--workers",
                "2",
                "--request-timeout",
                "30",
                "--generation-database",
                "none",
                "--no-color",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=840,
        )
    finally:
        server.stop()
    out = run.stdout + run.stderr
    assert run.returncode == 0, f"schemathesis found problems:\n{out[-20000:]}"
    tested = re.search(r"Tested:\s+(\d+)", out)
    assert tested and int(tested.group(1)) == operations, out[-3000:]
    generated = re.search(r"(\d+) generated", out)
    assert generated and int(generated.group(1)) >= MIN_CASES, out[-3000:]
    assert "Traceback" not in server.log(), server.log()[-5000:]
