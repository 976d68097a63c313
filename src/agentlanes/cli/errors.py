"""Exit codes and the one-line error every command reports instead of a traceback."""

from __future__ import annotations

EXIT_OK = 0
EXIT_CONFLICT = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_SERVER_ERROR = 4
EXIT_NO_SESSION = 5


class CommandError(Exception):
    """A failure to report as one line on stderr, with an exit code."""

    def __init__(
        self,
        message: str,
        exit_code: int = EXIT_USAGE,
        payload: dict[str, object] | None = None,
        details: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        # The error as JSON, printed on stdout under --json (agents parse stdout).
        self.payload = payload
        # Lines after the one-line error (a refusal's table: who holds what).
        self.details = details or []
