"""The files in a Codex ``apply_patch`` envelope (stdlib only: the guard imports it)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PATCH_HEADERS = ("*** Update File:", "*** Add File:", "*** Delete File:", "*** Move to:")


def patch_paths(text: Any) -> list[str]:
    """The files an ``apply_patch`` envelope adds, updates, deletes or moves to (Codex's
    patch format: ``*** Update File: PATH`` and its siblings, one per line)."""
    if not isinstance(text, str):
        return []
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        for header in PATCH_HEADERS:
            if stripped.startswith(header):
                path = stripped[len(header) :].strip()
                if path and path not in out:
                    out.append(path)
    return out
