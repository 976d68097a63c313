"""What a bad pattern or path raises, and the limits a client's patterns are held to."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PatternLimits:
    """Guard rails on what a client may send. The server passes its settings.

    The defaults keep every pair of allowed patterns decidable in a few
    milliseconds (``bench/conflicts.py`` shows the adversarial pairs): each
    ``**`` counts as two wildcards, and all brace alternatives together may
    hold at most ``EXPANSION_LENGTH_FACTOR`` times ``max_length`` characters.
    """

    max_length: int = 1024
    max_wildcards: int = 32
    max_brace_alternatives: int = 64


DEFAULT_LIMITS = PatternLimits()
EXPANSION_LENGTH_FACTOR = 4


class PatternError(ValueError):
    """Bad pattern or path; ``str(exc)`` is a message for a person that quotes it."""

    def __init__(self, pattern: str, message: str) -> None:
        self.pattern = pattern
        self.message = message
        super().__init__(f"{message}: {pattern!r}")
