"""The client is typed for its users: mypy, run on a user's code as on any installed
package (PEP 561: only with ``py.typed``), flags wrong arguments and a missing ``await``
(on the session calls and on the coordination groups).

mypy runs once for the module, in a subprocess, on two files of user code: one that
misuses the client and one that uses it right. The package is found on ``PYTHONPATH``,
which mypy treats like site-packages, so without ``py.typed`` it would skip the package
and report only that (``import-untyped``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import agentlanes

PACKAGE = Path(agentlanes.__file__).parent
ROOT = Path(__file__).resolve().parents[2]

MISUSE = """
import httpx
from agentlanes.client import AsyncClient, Client


def sync_use(lanes: Client) -> None:
    lanes.checkin(agent_name=42)  # line 7: an int as the agent name


async def async_use(lanes: AsyncClient) -> None:
    answer = lanes.checkin(agent_name="alice")  # no await
    print(answer.session_token)  # line 12: a coroutine used as the result


def wrong_transport() -> None:
    AsyncClient("http://lanes.test", "key", transport=httpx.HTTPTransport())  # line 16


async def coordination_use(lanes: AsyncClient) -> None:
    lanes.tasks.claim("t1")  # line 20: a coordination call never awaited
    lease = lanes.leases.acquire("deploy:prod")  # no await
    print(lease["lease_id"])  # line 22: a coroutine used as the answer


def wrong_status(lanes: Client) -> None:
    lanes.tasks.set_status("t1", "finished")  # line 26: not a task status
    lanes.checkout("done")  # line 27: not an outcome
"""

RIGHT = """
import httpx

from agentlanes.client import AsyncClient, Client


def sync_use(lanes: Client) -> str:
    return lanes.checkin(agent_name="alice", declared_files=["src/**"]).session_token


async def async_use(lanes: AsyncClient) -> str:
    answer = await lanes.checkin(agent_name="alice")
    return answer.session_token


def sync_coordination_use(lanes: Client) -> str:
    lanes.tasks.claim("t1")
    lanes.tasks.set_status("t1", "done", note="shipped")
    lanes.consensus.vote("c1", "approve")
    lanes.checkout("partial")
    return str(lanes.leases.acquire("deploy:prod")["lease_id"])


async def async_coordination_use(lanes: AsyncClient) -> str:
    await lanes.tasks.claim("t1")
    lease = await lanes.leases.acquire("deploy:prod")
    return str(lease["lease_id"])


class MyClient(Client):
    def mine(self) -> str:
        return "mine"


class MyAsyncClient(AsyncClient):
    def mine(self) -> str:
        return "mine"


def stream_use(lanes: Client) -> list[str]:
    with lanes.events(idle_timeout=1) as stream:
        return [event.type for event in stream]


async def async_stream_use(lanes: AsyncClient) -> list[str]:
    async with lanes.events(idle_timeout=1) as stream:
        return [event.type async for event in stream]


def subclass_use(transport: httpx.MockTransport) -> str:
    # `with` gives the subclass back (__enter__ returns Self), transport= takes httpx's
    with MyClient("http://lanes.test", "key", transport=transport) as lanes:
        return lanes.mine()


async def async_subclass_use(transport: httpx.MockTransport) -> str:
    async with MyAsyncClient("http://lanes.test", "key", transport=transport) as lanes:
        return lanes.mine()
"""


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[int, str]]]:
    """{file name: [(line, error code), ...]} from one mypy run over both files."""
    work = tmp_path_factory.mktemp("typing")
    (work / "misuse.py").write_text(MISUSE)
    (work / "right.py").write_text(RIGHT)
    (work / "mypy.ini").write_text("[mypy]\n")  # a user's defaults, not this project's
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "misuse.py", "right.py"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    found: dict[str, list[tuple[int, str]]] = {"misuse.py": [], "right.py": []}
    for line in done.stdout.splitlines():
        hit = re.match(r"(\w+\.py):(\d+): error: .*\[([a-z-]+)\]$", line)
        if hit:
            found[hit[1]].append((int(hit[2]), hit[3]))
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2: mypy itself failed
    return found


def test_mypy_flags_a_wrong_argument_type_to_the_client(
    mypy_errors: dict[str, list[tuple[int, str]]],
) -> None:
    assert (7, "arg-type") in mypy_errors["misuse.py"]


def test_mypy_flags_a_missing_await_on_the_async_client(
    mypy_errors: dict[str, list[tuple[int, str]]],
) -> None:
    assert (12, "attr-defined") in mypy_errors["misuse.py"]


def test_mypy_flags_a_coordination_call_of_the_async_client_left_without_await(
    mypy_errors: dict[str, list[tuple[int, str]]],
) -> None:
    # The groups on AsyncClient answer with coroutines: a bare call is an unused one, and
    # its coroutine is not the answer's dict.
    assert (20, "unused-coroutine") in mypy_errors["misuse.py"]
    assert (22, "index") in mypy_errors["misuse.py"]


def test_mypy_flags_a_status_the_contract_does_not_list(
    mypy_errors: dict[str, list[tuple[int, str]]],
) -> None:
    assert (26, "arg-type") in mypy_errors["misuse.py"]
    assert (27, "arg-type") in mypy_errors["misuse.py"]


def test_mypy_flags_a_blocking_transport_given_to_the_async_client(
    mypy_errors: dict[str, list[tuple[int, str]]],
) -> None:
    assert (16, "arg-type") in mypy_errors["misuse.py"]


def test_mypy_finds_nothing_wrong_in_right_use_of_the_client(
    mypy_errors: dict[str, list[tuple[int, str]]],
) -> None:
    assert mypy_errors["right.py"] == []
    assert {code for _, code in mypy_errors["misuse.py"]} == {
        "arg-type",
        "attr-defined",
        "unused-coroutine",
        "index",
    }


def test_the_package_marks_itself_typed_and_lists_the_marker_in_its_package_data() -> None:
    # setuptools (69 and later) puts py.typed in the wheel by itself too; the listing
    # keeps it there whatever the build backend's defaults.
    assert (PACKAGE / "py.typed").is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["agentlanes"]
