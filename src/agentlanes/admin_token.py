"""The admin token must not be guessable: empty turns the admin API off, and a known
default or a short token stops the server at start instead of opening the API."""

from __future__ import annotations

MIN_LENGTH = 8
# Placeholders found in sample configs (ours had "change-me"), compared case-insensitively.
KNOWN_DEFAULTS = frozenset(
    {
        "change-me",
        "changeme",
        "change_me",
        "changeit",
        "admin",
        "administrator",
        "password",
        "secret",
        "token",
        "default",
        "test",
        "agentlanes",
    }
)


def admin_token_problem(token: str) -> str | None:
    """Why this admin token cannot be used, or None (an empty token is fine: API off)."""
    if not token:
        return None
    if token.strip() != token:
        return "admin_token has leading or trailing spaces"
    if token.lower() in KNOWN_DEFAULTS:
        return f"admin_token is a well-known placeholder ({token!r}); use a random one"
    if len(token) < MIN_LENGTH:
        return f"admin_token is shorter than {MIN_LENGTH} characters; use a random one"
    return None
