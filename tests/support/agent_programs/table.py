"""The table of tests/e2e/test_real_agents.py (docs/agents.md, "The real programs"), and
what changed between the pinned run and the newest versions' run (``make agents-latest``).

Each run writes ``var/real-agents.{md,json}`` (pinned versions) or
``var/real-agents-latest.{md,json}`` (``AGENTLANES_AGENT_VERSIONS=latest``);
``python -m tests.support.agent_programs.table compare`` prints the differences.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

# check -> its column in the table (the columns, in its order).
CHECKS = {
    "checkin": "check-in",
    "refusal": "block-mode refusal reaches the model",
    "read": "read passes",
    "shell": "shell write checked",
    "claims": "claims follow edits",
    "message": "message reaches the model once",
    "checkout": "checked out on exit",
}
NAMES = {
    "claude": "Claude Code",
    "gemini": "Gemini CLI",
    "copilot": "Copilot CLI",
    "opencode": "OpenCode",
    "codex": "Codex",
    "cline": "Cline",
}
VAR = Path(__file__).resolve().parents[3] / "var"


@dataclass
class Row:
    agent: str
    version: str
    checks: dict[str, str]  # check -> "yes" or "no: why"


def run_name() -> str:
    latest = os.environ.get("AGENTLANES_AGENT_VERSIONS") == "latest"
    return "real-agents-latest" if latest else "real-agents"


def _cell(row: Row, check: str) -> str:
    value = row.checks.get(check, "—")
    short = value if value in ("yes", "—") else "**no**"
    if check == "message" and "resume" in row.checks:
        resumed = row.checks["resume"]
        short += "; across a resume: " + ("yes" if resumed == "yes" else "**no**")
    return short


def markdown(rows: dict[str, Row]) -> str:
    head = ["program (version)", *CHECKS.values()]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = [a for a in NAMES if a in rows] + sorted(a for a in rows if a not in NAMES)
    for agent in order:
        row = rows[agent]
        name = f"{NAMES.get(agent, agent)} {row.version}"
        lines.append("| " + " | ".join([name, *(_cell(row, c) for c in CHECKS)]) + " |")
    notes = [
        f"- {NAMES.get(a, a)}, {CHECKS.get(c, 'message across a resume')}: {v[4:]}"
        for a in order
        for c, v in rows[a].checks.items()
        if v != "yes"
    ]
    return "\n".join(lines + (["", *notes] if notes else [])) + "\n"


def write_table(rows: dict[str, Row]) -> str:
    """The table as markdown, also written (with the rows as JSON) under var/; rows of
    programs this run did not take stay as the file had them."""
    VAR.mkdir(exist_ok=True)
    name = run_name()
    kept = load(VAR / f"{name}.json")
    merged = {**kept, **rows}
    text = markdown(merged)
    (VAR / f"{name}.md").write_text(text)
    data = {a: {"version": r.version, "checks": r.checks} for a, r in merged.items()}
    (VAR / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    return text


def load(path: Path) -> dict[str, Row]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {a: Row(a, str(v.get("version")), dict(v.get("checks") or {})) for a, v in data.items()}


def compare(pinned: dict[str, Row], latest: dict[str, Row]) -> list[str]:
    """What changed from the pinned run to the latest: versions, and each check whose
    answer differs."""
    out = []
    for agent in sorted(set(pinned) | set(latest)):
        old, new = pinned.get(agent), latest.get(agent)
        name = NAMES.get(agent, agent)
        if old is None or new is None:
            out.append(f"{name}: only in the {'latest' if old is None else 'pinned'} run")
            continue
        if old.version != new.version:
            out.append(f"{name}: {old.version} -> {new.version}")
        for check in sorted(set(old.checks) | set(new.checks)):
            a, b = old.checks.get(check, "—"), new.checks.get(check, "—")
            if (a == "yes") != (b == "yes"):
                out.append(f"{name}, {CHECKS.get(check, check)}: {a} -> {b}")
    return out


def main(argv: list[str]) -> int:
    if argv != ["compare"]:
        print("usage: python -m tests.support.agent_programs.table compare", file=sys.stderr)
        return 2
    pinned, latest = load(VAR / "real-agents.json"), load(VAR / "real-agents-latest.json")
    if not latest:
        print("no run of the newest versions yet (var/real-agents-latest.json): make agents-latest")
        return 1
    print(markdown(latest), end="")
    if not pinned:
        print("no pinned run to compare with (var/real-agents.json): make test-agents")
        return 0
    changes = compare(pinned, latest)
    print("\nchanged against the pinned run:" if changes else "\nsame results as the pinned run")
    for line in changes:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
