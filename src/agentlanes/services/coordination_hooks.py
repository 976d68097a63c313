"""What the coordination features release when a session ends (leases, task claims).

Each hook is ``async (tx, session, reason) -> None`` and writes its own events in ``tx``;
``reason`` is the session's end status (``checked_out``, ``superseded``, ``timed_out``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agentlanes.services.leases import release_session_leases
from agentlanes.services.tasks import release_session_tasks

if TYPE_CHECKING:
    from agentlanes.services.context import ProjectTx
    from agentlanes.store.models import AgentSession

SessionEndHook = Callable[["ProjectTx", "AgentSession", str], Awaitable[None]]

SESSION_END_HOOKS: list[SessionEndHook] = [
    release_session_leases,  # every lease ends with its session (lease.released)
    release_session_tasks,  # timed out: task.stale; otherwise task.released
]
