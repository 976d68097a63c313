"""What the client raises: the server's error code and fields, or why it could not ask."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: the git hook imports this
if TYPE_CHECKING:
    from typing import Any


class ClientError(Exception):
    """Base of every error the agentlanes client raises."""


class ConfigurationError(ClientError):
    """Something the client needs is missing locally (an API key, a session token)."""


class NoSession(ConfigurationError):
    """No session token: check in first (``lanes checkin``) or set AGENTLANES_SESSION_TOKEN."""


class Unreachable(ClientError):
    """The server could not be reached (refused, timed out, DNS) at ``url``."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot reach the agentlanes server at {url}: {reason}")
        self.url = url
        self.reason = reason


class ApiError(ClientError):
    """The server answered with an error: its HTTP status, ``code`` and ``message``.

    The extra top-level fields of the error body (``field``, ``conflicts``, ``status``,
    ``lease_holder`` ...) are in ``extra`` and, for the common ones, properties.
    """

    def __init__(
        self, status: int, code: str, message: str, extra: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra or {}

    @property
    def field(self) -> str | None:
        """The input field a ``VALIDATION_ERROR`` names."""
        return self.extra.get("field")

    @property
    def conflicts(self) -> list[dict[str, Any]]:
        """The conflicts a ``CONFLICT`` answer in block mode carries."""
        return list(self.extra.get("conflicts") or [])

    @classmethod
    def from_response(cls, status: int, body: Any, text: str = "") -> ApiError:
        """Build from an error answer, as the subclass its ``code`` names (``ApiError``
        itself for a code this client does not know); tolerate bodies that are not the
        contract's shape."""
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            err = body["error"]
            extra = {k: v for k, v in body.items() if k != "error"}
            code = str(err.get("code") or "ERROR")
            kind = BY_CODE.get(code, cls) if cls is ApiError else cls
            return kind(status, code, str(err.get("message") or text or status), extra)
        return cls(status, "HTTP_ERROR", (text or f"HTTP {status}").strip()[:300])


class ValidationError(ApiError):
    """400 ``VALIDATION_ERROR``: ``field`` names what is wrong."""


class Unauthorized(ApiError):
    """401 ``UNAUTHORIZED``: no key, or a key that opens nothing (revoked, rotated)."""


class NotFound(ApiError):
    """404 ``NOT_FOUND`` (and ``SESSION_NOT_FOUND``: :class:`SessionNotFound`)."""


class SessionNotFound(NotFound):
    """404 ``SESSION_NOT_FOUND``: no session with this token in this project."""


class SessionEnded(ApiError):
    """410 ``SESSION_ENDED``: the session ended (``status``: timed_out, checked_out ...)."""

    @property
    def session_status(self) -> str | None:
        return self.extra.get("status")


class StateConflict(ApiError):
    """409 ``CONFLICT``: refused by the current state (block mode, a vote cast twice);
    ``conflicts`` lists the overlaps of a refused check-in or scope change."""


class LeaseConflict(ApiError):
    """409 ``LEASE_CONFLICT``: someone else holds the lease."""


class TaskAlreadyClaimed(ApiError):
    """409 ``TASK_ALREADY_CLAIMED``."""


class RateLimited(ApiError):
    """429 ``RATE_LIMITED``: slow down (the answer's ``Retry-After`` says how long)."""


BY_CODE: dict[str, type[ApiError]] = {
    "VALIDATION_ERROR": ValidationError,
    "UNAUTHORIZED": Unauthorized,
    "NOT_FOUND": NotFound,
    "SESSION_NOT_FOUND": SessionNotFound,
    "SESSION_ENDED": SessionEnded,
    "CONFLICT": StateConflict,
    "LEASE_CONFLICT": LeaseConflict,
    "TASK_ALREADY_CLAIMED": TaskAlreadyClaimed,
    "RATE_LIMITED": RateLimited,
}


class StreamClosed(ClientError):
    """The event stream was closed for good (unauthorised or bad request)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(f"event stream closed ({code}): {reason}")
        self.code = code
        self.reason = reason
