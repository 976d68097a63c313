"""Install an agent program from npm once, into a cache kept between runs.

``program_bin("claude")`` → the path of the pinned Claude Code's ``claude``, installed on
first use into ``$AGENTLANES_AGENT_PROGRAMS`` (default ``~/.cache/agentlanes/agent-programs``)
as ``<package>@<version>/`` with ``npm install --prefix``. A lock file makes concurrent
test processes install it once. ``AGENTLANES_AGENT_VERSIONS=latest`` (``make
agents-latest``) takes the newest published version instead of the pin.

Returns None (the tests then skip, or fail under ``AGENTLANES_REQUIRE_SERVICES=1``) when
npm is missing or the install fails; the reason is in ``last_error``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PINS: dict[str, dict[str, str]] = json.loads((Path(__file__).parent / "pins.json").read_text())
INSTALL_TIMEOUT = 900
last_error: dict[str, str] = {}


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "agentlanes" / "agent-programs"
    return Path(os.environ.get("AGENTLANES_AGENT_PROGRAMS") or default)


def wanted_version(agent: str) -> str | None:
    """The pinned version, or the newest on npm when ``AGENTLANES_AGENT_VERSIONS=latest``."""
    pin = PINS[agent]
    if os.environ.get("AGENTLANES_AGENT_VERSIONS") != "latest":
        return pin["version"]
    npm = shutil.which("npm")
    if npm is None:
        last_error[agent] = "npm is not installed"
        return None
    done = subprocess.run(
        [npm, "view", pin["package"], "version"], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        last_error[agent] = f"npm view {pin['package']}: {done.stderr.strip()[-300:]}"
        return None
    return done.stdout.strip().splitlines()[-1]


def install_dir(agent: str, version: str) -> Path:
    return cache_dir() / f"{PINS[agent]['package'].replace('/', '+')}@{version}"


def program_bin(agent: str) -> Path | None:
    """The program's executable, installed if it is not yet."""
    version = wanted_version(agent)
    if version is None:
        return None
    pin = PINS[agent]
    where = install_dir(agent, version)
    binary = where / "node_modules" / ".bin" / pin["bin"]
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        last_error[agent] = "npm is not installed (make node)"
        return None
    where.mkdir(parents=True, exist_ok=True)
    with open(where.parent / f".{where.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.exists():
            return binary
        done = subprocess.run(
            [npm, "install", "--prefix", str(where), "--no-audit", "--no-fund",
             "--loglevel=error", f"{pin['package']}@{version}"],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )  # fmt: skip
        if done.returncode != 0 or not binary.exists():
            last_error[agent] = (
                f"npm install {pin['package']}@{version} failed: {done.stderr.strip()[-500:]}"
            )
            return None
    return binary


def installed_version(agent: str, binary: Path) -> str:
    """The version the installed package says it is (its package.json)."""
    package = binary.parent.parent / PINS[agent]["package"] / "package.json"
    return str(json.loads(package.read_text()).get("version"))


def main(argv: list[str]) -> int:
    """``python -m tests.support.agent_programs.install [AGENT...]`` (``make agents``):
    install the pinned programs (all six by default, or the newest with
    ``AGENTLANES_AGENT_VERSIONS=latest``) into the cache; exit 1 if one failed."""
    agents = argv or list(PINS)
    unknown = [a for a in agents if a not in PINS]
    if unknown:
        print(f"unknown agent(s) {', '.join(unknown)}; one of {', '.join(PINS)}", file=sys.stderr)
        return 2
    failed = 0
    for agent in agents:
        binary = program_bin(agent)
        if binary is None:
            failed += 1
            print(f"{agent}: not installed: {last_error.get(agent)}", file=sys.stderr)
        else:
            print(f"{agent}: {PINS[agent]['package']} {installed_version(agent, binary)}: {binary}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
