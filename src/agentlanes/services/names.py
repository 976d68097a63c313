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
