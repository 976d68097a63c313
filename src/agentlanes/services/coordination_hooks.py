"""What the coordination features release when a session ends (leases, task claims).

Each hook is ``async (tx, session, reason) -> None`` and writes its own events in ``tx``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentlanes.services.context import ProjectTx
    from agentlanes.store.models import AgentSession

SessionEndHook = Callable[["ProjectTx", "AgentSession", str], Awaitable[None]]

SESSION_END_HOOKS: list[SessionEndHook] = []
