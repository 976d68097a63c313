"""The README's Quick start, pasted as is on a fresh clone, works.

The test clones this repository (its committed state) into a temporary directory and runs
the Quick start's blocks in order: the first (`make run`) in the background as the first
terminal, the others in one shell as the second terminal, after the server says it is
running, as a person would wait for it.

Two liberties, neither touching what the blocks say:
* the clone's `.venv` is prepared from the test's own interpreter (its packages, the
  clone's `src/` first) instead of a one-minute `pip install`: what `make` would build;
* port 8787 may be taken on a shared machine: a free port replaces it in the blocks and
  in AGENTLANES_PORT.
"""

from __future__ import annotations

import json
import os
import re
import signal
import site
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.server import free_port

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def quick_start_blocks(readme: str) -> list[str]:
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.S)


def prepare_venv(clone: Path) -> None:
    """A .venv whose `agentlanes` runs the clone's code on this interpreter's packages."""
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "agentlanes-test.pth").write_text(
        f"{clone / 'src'}\n" + "\n".join(site.getsitepackages()) + "\n"
    )
    script = venv / "bin" / "agentlanes"
    script.write_text(
        f"#!{py}\nimport sys\nfrom agentlanes.cli.main import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    time.sleep(0.01)
    for stamp in (".serve-stamp", ".installed-stamp"):
        (venv / stamp).touch()  # newer than pyproject.toml: make installs nothing


def test_readme_quick_start_works_pasted_on_a_fresh_clone(tmp_path: Path) -> None:
    clone = tmp_path / "agentlanes"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    readme = (clone / "README.md").read_text()
    # The README opens with the two commands.
    first = re.findall(r"```sh\n(.*?)```", readme, flags=re.S)[0].splitlines()
    assert first[0].startswith("make run") and first[1].startswith("make test")
    blocks = quick_start_blocks(readme)
    assert blocks[0].strip() == "make run", blocks[0]
    prepare_venv(clone)

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLANES_")}
    env["AGENTLANES_PORT"] = str(port)
    blocks = [b.replace("8787", str(port)) for b in blocks]
    log_path = tmp_path / "terminal-1.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            ["bash", "-c", blocks[0]],
            cwd=clone,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while "Uvicorn running on" not in log_path.read_text(errors="replace"):
            assert server.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        terminal_2 = subprocess.run(
            ["bash", "-e", "-c", "\n".join(blocks[1:])],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert terminal_2.returncode == 0, terminal_2.stderr
        decoder = json.JSONDecoder()
        alice, end = decoder.raw_decode(terminal_2.stdout)
        bob, _ = decoder.raw_decode(terminal_2.stdout[end:].lstrip())
        assert alice["agent_name"] == "alice" and alice["conflicts"] == []
        assert len(alice["session_token"]) == 64
        [conflict] = bob["conflicts"]
        assert conflict["agent_name"] == "alice"
        assert conflict["overlapping_files"][0]["their_pattern"] == "src/api/**"
        assert "via database sqlite:///" in terminal_2.stderr
        assert f"the server at http://127.0.0.1:{port} uses it" in terminal_2.stderr
        # The server's terminal stays readable: a few start-up lines, nothing per request.
        server_log = log_path.read_text().splitlines()
        assert len(server_log) < 15, "\n".join(server_log)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=15)
