"""What ``lanes init`` and ``lanes init --agent`` share: a planned file change and how to
read, merge and write the JSON files it touches (one module, so neither imports the other)."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

from agentlanes.cli.errors import EXIT_USAGE, CommandError

GUARD_SPELLINGS = ("lanes guard", "agentlanes.hooks.guard", "agentlanes.guard")


class Change:
    """One file's planned content and how it differs from what is there."""

    def __init__(self, path: Path, before: str | None, after: str, what: str) -> None:
        self.path = path
        self.before = before
        self.after = after
        self.what = what

    @property
    def action(self) -> str:
        if self.before is None:
            return "created"
        return "unchanged" if self.before == self.after else "updated"

    def diff(self, root: Path) -> str:
        name = os.path.relpath(self.path, root)
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile="/dev/null" if self.before is None else f"a/{name}",
                tofile=f"b/{name}",
            )
        )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read ({exc.strerror})", EXIT_USAGE) from None


def _json_file(path: Path) -> tuple[str | None, dict[str, Any]]:
    text = _read(path)
    if text is None or not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"{path}: not valid JSON ({exc}); fix it or move it away") from None
    if not isinstance(data, dict):
        raise CommandError(f"{path}: expected a JSON object at the top", EXIT_USAGE)
    return text, data


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


def _is_ours(group: Any) -> bool:
    """A hook group that runs the guard (however it was spelled: ``lanes guard``,
    ``agentlanes guard``, ``python -m agentlanes.hooks.guard``, or the module's former
    name ``agentlanes.guard``)."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict)
        and any(spelling in str(h.get("command")) for spelling in GUARD_SPELLINGS)
        for h in hooks
    )
