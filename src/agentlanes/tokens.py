"""Keys and tokens: random, stored only as hashes, compared in constant time.

Tokens carry 32 random bytes, so a plain SHA-256 is a safe one-way store (no dictionary
to attack); a slow password hash would only slow every request.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

API_KEY_PREFIX = "alk_"
SESSION_TOKEN_RE = re.compile(r"^[0-9a-f]{64}\Z")  # \Z: no trailing newline


def new_session_token() -> str:
    """64 lowercase hex characters (32 random bytes)."""
    return secrets.token_hex(32)


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_hex(32)


def new_realtime_token() -> str:
    return "rt_" + secrets.token_hex(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def same_secret(secret: str, stored_hash: str) -> bool:
    """Constant-time comparison of a presented secret with a stored hash."""
    return hmac.compare_digest(hash_secret(secret), stored_hash)


def is_session_token(value: str) -> bool:
    return bool(SESSION_TOKEN_RE.match(value))
