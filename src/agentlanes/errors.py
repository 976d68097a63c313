"""Errors as values: raised by services, turned into HTTP answers in one place (api/errors.py).

Each carries the contract's code, a message for a person, and the extra fields that the
contract puts at the top level of the error body (``field``, ``conflicts``, ``status`` ...).
"""

from __future__ import annotations

from typing import Any


class AgentlanesError(Exception):
    status_code: int = 400
    code: str = "VALIDATION_ERROR"

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}, **self.extra}


class InvalidInput(AgentlanesError):
    """Bad input; ``field`` names what is wrong."""

    status_code = 400
    code = "VALIDATION_ERROR"

    def __init__(self, field: str, message: str, **extra: Any) -> None:
        super().__init__(f"{field}: {message}", field=field, **extra)
        self.field = field


class Unauthorized(AgentlanesError):
    status_code = 401
    code = "UNAUTHORIZED"


class NotFound(AgentlanesError):
    status_code = 404
    code = "NOT_FOUND"


class SessionNotFound(AgentlanesError):
    status_code = 404
    code = "SESSION_NOT_FOUND"


class SessionEnded(AgentlanesError):
    status_code = 410
    code = "SESSION_ENDED"

    def __init__(self, session_id: str, status: str) -> None:
        super().__init__(
            f"session {session_id} has ended ({status})", session_id=session_id, status=status
        )


class StateConflict(AgentlanesError):
    """409 CONFLICT: the request collides with the current state (a check-in refused in
    block mode, a vote cast twice, a slug taken). Not an overlap record: that is
    ``agentlanes.domain.Conflict``."""

    status_code = 409
    code = "CONFLICT"


class LeaseConflict(AgentlanesError):
    status_code = 409
    code = "LEASE_CONFLICT"


class TaskAlreadyClaimed(AgentlanesError):
    status_code = 409
    code = "TASK_ALREADY_CLAIMED"


class AgentNotFound(AgentlanesError):
    """404 AGENT_NOT_FOUND: a name that is no live session's name or display name and no
    registered agent; ``live_agents`` names the ones there are."""

    status_code = 404
    code = "AGENT_NOT_FOUND"
