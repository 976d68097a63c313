"""What the client raises: the server's error code and fields, or why it could not ask."""

from __future__ import annotations

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
        """Build from an error answer; tolerate bodies that are not the contract's shape."""
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            err = body["error"]
            extra = {k: v for k, v in body.items() if k != "error"}
            return cls(
                status,
                str(err.get("code") or "ERROR"),
                str(err.get("message") or text or status),
                extra,
            )
        return cls(status, "HTTP_ERROR", (text or f"HTTP {status}").strip()[:300])


class StreamClosed(ClientError):
    """The event stream was closed for good (unauthorised or bad request)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(f"event stream closed ({code}): {reason}")
        self.code = code
        self.reason = reason
