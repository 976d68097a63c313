"""The admin token must not be guessable: empty turns the admin API off, and a known
placeholder, an unexpanded ``${...}`` or a short token stops the server at start instead
of opening the API (SPEC, "One agent cannot hurt another")."""

from __future__ import annotations

import re

MIN_LENGTH = 32
# Placeholders found in sample configs (ours had "change-me"), compared case-insensitively
# after dropping what separates words ("change_me", "Change Me").
KNOWN_DEFAULTS = frozenset(
    {
        "changeme",
        "changeit",
        "replaceme",
        "admin",
        "administrator",
        "password",
        "secret",
        "token",
        "default",
        "test",
        "agentlanes",
        "admintoken",
        "yourtoken",
        "yoursecret",
        "yourtokenhere",
        "mysecret",
        "letmein",
        "qwerty",
    }
)
# Placeholder families whatever follows: password123..., 12345678..., changeme-please...
KNOWN_PREFIXES = ("password", "12345678", "changeme", "replaceme", "qwerty", "letmein")
UNEXPANDED = re.compile(r"\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*$")


def admin_token_problem(token: str) -> str | None:
    """Why this admin token cannot be used, or None (an empty token is fine: API off)."""
    if not token:
        return None
    if token.strip() != token:
        return "admin_token has leading or trailing spaces"
    if UNEXPANDED.search(token):
        return (
            f"admin_token is an unexpanded variable ({token!r}): the environment or the "
            "file that should fill it in did not"
        )
    plain = re.sub(r"[^a-z0-9]", "", token.lower())
    if plain in KNOWN_DEFAULTS or plain.startswith(KNOWN_PREFIXES) or len(set(token)) < 4:
        return f"admin_token is a well-known placeholder ({token!r}); use a random one"
    if len(token) < MIN_LENGTH:
        return f"admin_token is shorter than {MIN_LENGTH} characters; use a random one"
    return None
