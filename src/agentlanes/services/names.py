"""Names and ids the server makes up: random, so they reveal nothing about volume or
order."""

from __future__ import annotations

import random
import secrets
from collections.abc import Collection

_ADJECTIVES = (
    "swift", "quiet", "bold", "calm", "keen", "brisk", "bright", "steady", "nimble", "clever",
    "gentle", "lucky", "merry", "proud", "sharp", "wise", "eager", "fair", "grand", "jolly",
)  # fmt: skip


def new_id(prefix: str) -> str:
    """``<prefix>_<24 hex>``: random, so ids reveal nothing about volume or order."""
    return f"{prefix}_{secrets.token_hex(12)}"


def generated_agent_name(taken: Collection[str] = ()) -> str:
    """A readable name such as ``agent-swift-42`` for a check-in that gave none, never one
    in ``taken`` (a live name would supersede that agent's session)."""
    for _ in range(20):
        name = f"agent-{random.choice(_ADJECTIVES)}-{random.randint(10, 99)}"
        if name not in taken:
            return name
    return f"agent-{random.choice(_ADJECTIVES)}-{secrets.token_hex(4)}"


# The agent kind in a display name is cut here, so that ``<kind>-<n>`` is itself an agent
# name (at most 64 characters) and can be typed wherever one is taken.
KIND_MAX = 56
DEFAULT_KIND = "agent"


def agent_kind(agent_name: str) -> str:
    """The kind of agent a name says: the part before its first ``-`` (``claude`` of
    ``claude-18a3…``), or the whole name."""
    kind = agent_name.split("-", 1)[0][:KIND_MAX]
    return kind or DEFAULT_KIND


def display_name(agent_name: str, taken: Collection[str]) -> str:
    """A short name people can read and type, ``<kind>-<n>`` (``claude-1``, ``codex-2``):
    the smallest ``n`` whose name is not in ``taken`` (the other live sessions' display
    names and agent names, so that a name the project resolves means one session). A name
    that is already of that form and free is kept as it is."""
    kind = agent_kind(agent_name)
    tail = agent_name[len(kind) + 1 :] if agent_name.startswith(kind + "-") else ""
    if tail.isascii() and tail.isdigit() and not tail.startswith("0") and agent_name not in taken:
        return agent_name
    n = 1
    while f"{kind}-{n}" in taken:
        n += 1
    return f"{kind}-{n}"
