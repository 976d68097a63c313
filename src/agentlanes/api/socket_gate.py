"""Who may open an event socket now (SPEC "One agent cannot hurt another": bursts are
fair).

Opening a socket costs the server a handshake, a credential check and a snapshot of the
project; thousands opened at once by one project delayed another project's heartbeats
by hundreds of milliseconds. Two buckets bound that, per process:

- a project's accepts: ``socket_accepts_per_second`` (as a burst, then at that rate).
  A socket over it waits for its turn, which costs the server nothing; one that would
  wait more than ``ACCEPT_WAIT_MAX`` seconds is refused with 1013 (try again later);
- a client address's refused credentials: ``socket_bad_credentials_per_minute``. Past
  it, the address's upgrades are answered 429 with ``Retry-After`` before the
  handshake and before any credential is looked up, so random keys cost no database
  reads. (The address is the peer's, or the one ``forwarded_allow_ips`` vouches for.)

What is kept is bounded: at most ``KEPT`` buckets of each kind, the least recently used
dropped first (a dropped bucket was full, or is as good as new).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

# The longest a socket waits for its project's turn before it is refused with 1013.
ACCEPT_WAIT_MAX = 10.0
KEPT = 100_000


class Buckets:
    """Token buckets by key: ``capacity`` tokens, refilled at ``rate`` per second."""

    def __init__(self, capacity: float, rate: float, kept: int = KEPT) -> None:
        self.capacity = capacity
        self.rate = rate
        self.kept = kept
        self._buckets: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()

    def _level(self, key: Hashable, now: float) -> float:
        found = self._buckets.get(key)
        if found is None:
            return self.capacity
        tokens, at = found
        return min(self.capacity, tokens + (now - at) * self.rate)

    def _set(self, key: Hashable, tokens: float, now: float) -> None:
        self._buckets[key] = (tokens, now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self.kept:
            self._buckets.popitem(last=False)

    def reserve(self, key: Hashable, most_wait: float, now: float | None = None) -> float | None:
        """Take a token, now or the next one due: the seconds to wait for it, or None
        (nothing taken) when that would be more than ``most_wait``."""
        now = time.monotonic() if now is None else now
        tokens = self._level(key, now)
        wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
        if wait > most_wait:
            return None
        self._set(key, tokens - 1, now)
        return wait

    def spend(self, key: Hashable, now: float | None = None) -> None:
        """Take a token whatever the level (a refusal counted)."""
        now = time.monotonic() if now is None else now
        self._set(key, max(self._level(key, now) - 1, -self.capacity), now)

    def empty_for(self, key: Hashable, now: float | None = None) -> float:
        """Seconds until the bucket holds a token again (0: it holds one now)."""
        now = time.monotonic() if now is None else now
        tokens = self._level(key, now)
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate


class SocketGate:
    """The process's socket buckets (one per app: ``gate_of``)."""

    def __init__(self, accepts_per_second: float, bad_credentials_per_minute: float) -> None:
        self.accepts = Buckets(accepts_per_second, accepts_per_second)
        self.refusals = Buckets(bad_credentials_per_minute, bad_credentials_per_minute / 60)

    def accept_wait(self, project_id: int) -> float | None:
        """How long a socket of this project waits for its turn, or None: refuse it."""
        return self.accepts.reserve(project_id, ACCEPT_WAIT_MAX)

    def refused_credentials(self, address: str) -> None:
        self.refusals.spend(address)

    def address_blocked(self, address: str) -> float:
        """Seconds until this address may try a credential again (0: now)."""
        return self.refusals.empty_for(address)


def gate_of(app: Any) -> SocketGate:
    """The app's gate, made on first use from its settings."""
    state = app.state
    gate: SocketGate | None = getattr(state, "socket_gate", None)
    if gate is None:
        settings = state.ctx.settings
        gate = SocketGate(
            settings.socket_accepts_per_second, settings.socket_bad_credentials_per_minute
        )
        state.socket_gate = gate
    return gate
