"""The agent-name rule (SPEC: 1-64 of ``A-Z a-z 0-9 . _ -``), in one place: the server's
check, the OpenAPI document's pattern, the client's file names and the hooks' made-up
names all read it here. Standard library only, no ``re`` (the hooks import it)."""

from __future__ import annotations

# As a regular-expression class body (``[^A-Za-z0-9._-]``: a character outside the rule).
NAME_CHARS = "A-Za-z0-9._-"
NAME_MAX = 64
ALLOWED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def is_agent_name(value: object) -> bool:
    """Whether ``value`` is an agent name the server accepts."""
    return isinstance(value, str) and 0 < len(value) <= NAME_MAX and ALLOWED.issuperset(value)


def safe_name(text: str, prefix: str = "") -> str:
    """``prefix`` + ``text`` made into an agent name: each character outside the rule
    becomes ``-``, cut at the length limit."""
    return (prefix + "".join(c if c in ALLOWED else "-" for c in text))[:NAME_MAX]
