"""`agentlanes serve` runs with the garbage-collector set-up the benchmarks measure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The thresholds the benchmarks measured and docs/benchmarks.md states: written here, not
# read from the implementation, so a changed value fails until the measurement is redone.
THRESHOLDS = (100_000, 20, 10)

# Runs `agentlanes serve` with uvicorn.run replaced, then reports the collector's state.
PROBE = """
import gc, sys, uvicorn
uvicorn.run = lambda app, **kw: None
from agentlanes.cli.main import main
assert gc.get_threshold() != {thresholds!r}
code = main(["serve", "--port", "1"])
print(code, gc.get_threshold(), gc.get_freeze_count() > 0)
"""


def test_serve_widens_the_young_generation_and_freezes_start_up(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "AGENTLANES_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite'}",
        "AGENTLANES_LOG_LEVEL": "warning",
    }
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(thresholds=THRESHOLDS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.split("\n")[-2] == f"0 {THRESHOLDS} True"
