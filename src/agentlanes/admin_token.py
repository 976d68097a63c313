"""The admin token must not be guessable: empty turns the admin API off, and a known
placeholder, an unexpanded ``${...}``, a short token or one of little entropy (long runs
of one character or of a sequence, a block repeated, a handful of distinct characters)
stops the server at start instead of opening the API (SPEC, "One agent cannot hurt
another")."""

from __future__ import annotations

import itertools
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
# Placeholder phrases wherever they stand ("your-admin-token-here-000...").
KNOWN_PHRASES = (
    "yourtoken",
    "youradmin",
    "yoursecret",
    "tokenhere",
    "secrethere",
    "changeme",
    "replaceme",
    "placeholder",
    "insertyour",
    "putyour",
    "fillmein",
)
# A run this long of one character ("0000...") or of a sequence ("abcdefgh", "98765432")
# is not in a random token (about 1 in 10^5 for 32 hex characters).
LONGEST_RUN = 8
# Fewest distinct characters in a token of MIN_LENGTH (32 random hex characters hold 14
# or so).
FEWEST_DISTINCT = 8
UNEXPANDED = re.compile(r"\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*\Z")


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
    if (
        plain in KNOWN_DEFAULTS
        or plain.startswith(KNOWN_PREFIXES)
        or any(phrase in plain for phrase in KNOWN_PHRASES)
        or len(set(token)) < 4
    ):
        return f"admin_token is a well-known placeholder ({token!r}); use a random one"
    if len(token) < MIN_LENGTH:
        return f"admin_token is shorter than {MIN_LENGTH} characters; use a random one"
    weak = _low_entropy(token)
    if weak:
        return f"admin_token is guessable ({weak}); use a random one (openssl rand -hex 32)"
    return None


def _low_entropy(token: str) -> str | None:
    """What makes ``token`` guessable though long, or None."""
    run = 1
    step = 0
    for before, ch in itertools.pairwise(token):
        diff = ord(ch) - ord(before)
        if diff in (-1, 0, 1):
            run = run + 1 if run > 1 and diff == step else 2
            step = diff
        else:
            run = 1
        if run >= LONGEST_RUN:
            what = "one character" if step == 0 else "a sequence"
            return f"a run of {LONGEST_RUN} or more of {what}"
    if len(set(token)) < FEWEST_DISTINCT:
        return f"fewer than {FEWEST_DISTINCT} distinct characters"
    for period in range(1, len(token) // 2 + 1):
        if all(token[i] == token[i - period] for i in range(period, len(token))):
            return "a short block repeated"
    return None
