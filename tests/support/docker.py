"""Docker for the image test: a daemon that answers and the Dockerfile's base image.

Under AGENTLANES_REQUIRE_SERVICES=1 (CI) the scripts install what is missing (docker.io,
debootstrap, dockerd, the stand-in base made from Debian's packages) and a failure is a
failure; elsewhere a missing piece skips the test with the reason.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from tests.support.services import required, unavailable

ROOT = Path(__file__).resolve().parents[2]


def base_image() -> str:
    """The Dockerfile's FROM (its tag; a pinned digest cannot be made here)."""
    match = re.search(r"^FROM\s+(\S+)", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert match, "the Dockerfile has no FROM"
    return match.group(1).split("@", 1)[0]


def docker(*args: str, timeout: float = 120, check: bool = True) -> str:
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip()


def _answers() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0


def _has_base() -> bool:
    return (
        subprocess.run(
            ["docker", "image", "inspect", base_image()], capture_output=True, timeout=30
        ).returncode
        == 0
    )


def require_docker() -> None:
    """Skip (or, in CI, install and start) until a daemon answers and the base exists."""
    if required():
        subprocess.run(["bash", str(ROOT / "scripts/ensure-docker.sh")], timeout=900)
    if not _answers():
        unavailable("Docker", "no daemon answers `docker info` (scripts/ensure-docker.sh)")
    if not _has_base() and required():
        subprocess.run(["bash", str(ROOT / "scripts/ensure-docker-base.sh")], timeout=1800)
    if not _has_base():
        unavailable(
            "the Dockerfile's base image",
            f"{base_image()} is not here and cannot be pulled "
            "(scripts/ensure-docker-base.sh makes a stand-in from Debian's packages)",
        )
