"""The coordination features on top of sessions: tasks (claims, gates, the ready list),
leases with fencing tokens, checkpoints, consensus votes, messages, agent configs, and
the boards the dashboard reads.

``register(ctx)`` hooks what must end with a session (its leases, its task claims) into
the service context; the app calls it once where it builds the context."""

from __future__ import annotations

from agentlanes.services import queue
from agentlanes.services.context import ServiceContext
from agentlanes.services.coordination.leases import release_session_leases
from agentlanes.services.coordination.tasks import release_session_tasks


def register(ctx: ServiceContext) -> None:
    """Release a session's leases (``lease.released``) and task claims (``task.stale``
    when it timed out, else ``task.released``) in the transaction that ends it."""
    ctx.on_session_end(release_session_leases)
    ctx.on_session_end(release_session_tasks)
    # Its waits for a lane end with it, and what it held goes to the next in line.
    queue.register(ctx)
