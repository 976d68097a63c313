"""Write constraints.txt: every runtime dependency of agentlanes, pinned to the version
installed here (the set the tests ran on). The image installs with it.

    .venv/bin/python scripts/pin_constraints.py
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
HEADER = """\
# Pinned versions of every runtime dependency of agentlanes (the tested set).
# The image installs with: pip install -c constraints.txt .
# Regenerate after changing dependencies: .venv/bin/python scripts/pin_constraints.py
"""


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_closure() -> dict[str, str]:
    """Name -> installed version of agentlanes' runtime dependencies, transitively."""
    pinned: dict[str, str] = {}
    todo: list[tuple[str, tuple[str, ...]]] = []
    for spec in distribution("agentlanes").requires or []:
        req = Requirement(spec)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            todo.append((req.name, tuple(req.extras)))
    done: set[tuple[str, tuple[str, ...]]] = set()
    while todo:
        name, extras = todo.pop()
        if (_norm(name), extras) in done:
            continue
        done.add((_norm(name), extras))
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue  # a dependency for another platform
        pinned[_norm(dist.metadata["Name"])] = dist.version
        for spec in dist.requires or []:
            req = Requirement(spec)
            wanted = req.marker is None or any(
                req.marker.evaluate({"extra": e}) for e in ("", *extras)
            )
            if wanted:
                todo.append((req.name, tuple(req.extras)))
    return pinned


def main() -> int:
    lines = [f"{name}=={version}" for name, version in sorted(runtime_closure().items())]
    (ROOT / "constraints.txt").write_text(HEADER + "\n" + "\n".join(lines) + "\n")
    print(f"constraints.txt: {len(lines)} packages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
