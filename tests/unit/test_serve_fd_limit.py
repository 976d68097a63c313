"""`agentlanes serve` raises its open-file limit to the hard one and says so (#30: 10,000
event sockets on one process need more than the usual 1,024 descriptors)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import logging, resource, sys
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
from agentlanes.cli.serve import raise_fd_limit
before, after = raise_fd_limit()
print("result", before, after, resource.getrlimit(resource.RLIMIT_NOFILE)[0], hard)
"""


def test_serve_raises_the_soft_fd_limit_to_the_hard_one_and_logs_it() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
    ).stdout
    result = next(line for line in out.splitlines() if line.startswith("result")).split()
    before, after, now, hard = (int(x) for x in result[1:])
    assert before == 256
    assert after == now == min(hard, 1_048_576) > 256
    assert f"open-file limit raised from 256 to {now}" in out
