"""What the tools tell the model about themselves: their hints (read-only, changes, ends
the session) and the descriptions of the arguments several tools share."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.types import ToolAnnotations
from pydantic import Field

# Tools that only read: a client may run them without asking.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
CHANGES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
ENDS = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

Globs = Annotated[
    list[str] | None,
    Field(
        description="File globs relative to the repository root, e.g. ['src/api/**', "
        "'docs/api.md']. `*` stays within a directory, `**` spans directories; a name "
        "ending in '/' claims a whole directory."
    ),
]
Area = Annotated[
    str | None,
    Field(
        description="Your work area, a short label such as 'billing'; the same label as "
        "another live agent counts as a conflict."
    ),
]
TaskId = Annotated[
    str, Field(description="The task's id, e.g. 'task_…' (from task_create or tasks_list).")
]
Limit = Annotated[int | None, Field(description="At most this many results (1-500).")]
Ttl = Annotated[int | None, Field(description="Seconds the lease lasts (default 1,800).")]
LeaseId = Annotated[str, Field(description="The lease's id (from lease_acquire or leases_list).")]
Note = Annotated[str | None, Field(description="A short note kept with the change.")]


def about(text: str) -> Any:
    """An argument's description for the model (inside `Annotated[...]`)."""
    return Field(description=text)
