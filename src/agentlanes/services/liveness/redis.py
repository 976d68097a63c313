"""Liveness in Redis, for several processes sharing one database (see ``base.py``).

Each beat is one key per session, ``{prefix}:beat:{session_id}`` = ``"<ms>:<ttl>:<project>"``
with Redis's own expiry; a session the expiry job has ended gets ``{prefix}:ended:{id}``.
Recording a beat and claiming overdue sessions are Lua scripts, so they are atomic
against each other whichever process runs them. Each process still writes its own beats
through to the database in batches; when it dies, its unwritten beats are still here, and
the expiry job of any other process finds them before it times a session out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis

from .base import ENDED_MARK_SECONDS, Beat, Liveness

# KEYS: beat key, ended key. ARGV: now ms, floor ms (-1: none), value, px.
_RECORD = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 'ended' end
local now = tonumber(ARGV[1])
local floor = tonumber(ARGV[2])
if floor >= 0 and floor <= now then
  local last = redis.call('GET', KEYS[1])
  if not last then return 'overdue' end
  local at, ttl = string.match(last, '^(%d+):(%d+):')
  if tonumber(at) + tonumber(ttl) * 1000 <= now then return 'overdue' end
end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
return 'ok'
"""

# KEYS: beat key, ended key per session. ARGV: now ms, ended mark px.
# Returns per session the fresh beat's value, or '' when it is overdue (now marked ended).
_CLAIM = """
local now = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS, 2 do
  local last = redis.call('GET', KEYS[i])
  local fresh = false
  if last then
    local at, ttl = string.match(last, '^(%d+):(%d+):')
    fresh = tonumber(at) + tonumber(ttl) * 1000 > now
  end
  if fresh then
    out[#out + 1] = last
  else
    redis.call('DEL', KEYS[i])
    redis.call('SET', KEYS[i + 1], '1', 'PX', ARGV[2])
    out[#out + 1] = ''
  end
end
return out
"""


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _parse(value: bytes | str | None) -> Beat | None:
    if not value:
        return None
    text = value.decode() if isinstance(value, bytes) else value
    at, ttl, project = text.split(":")
    return Beat(int(project), datetime.fromtimestamp(int(at) / 1000, UTC), int(ttl))


class RedisLiveness(Liveness):
    overlays_all = False

    def __init__(
        self, url: str, *, prefix: str, flush_seconds: float, attach_refresh_seconds: float = 5.0
    ) -> None:
        super().__init__(flush_seconds, attach_refresh_seconds)
        self.prefix = prefix
        self._redis: Any = aioredis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)
        self._record_script = self._redis.register_script(_RECORD)
        self._claim_script = self._redis.register_script(_CLAIM)

    def _beat_key(self, session_id: str) -> str:
        return f"{self.prefix}:beat:{session_id}"

    def _ended_key(self, session_id: str) -> str:
        return f"{self.prefix}:ended:{session_id}"

    async def _stop_backend(self) -> None:
        await self._redis.aclose()

    async def _record(
        self, session_id: str, beat: Beat, floor: datetime | None, now: datetime
    ) -> str:
        value = f"{_ms(beat.at)}:{beat.ttl_seconds}:{beat.project_id}"
        # Kept a little past the TTL; the row's expiry covers the rest.
        px = beat.ttl_seconds * 1000 + int(ENDED_MARK_SECONDS * 1000)
        outcome = await self._record_script(
            keys=[self._beat_key(session_id), self._ended_key(session_id)],
            args=[_ms(now), -1 if floor is None else _ms(floor), value, px],
        )
        return outcome.decode() if isinstance(outcome, bytes) else str(outcome)

    async def beats(self, session_ids: Sequence[str]) -> dict[str, Beat]:
        if not session_ids:
            return {}
        values = await self._redis.mget([self._beat_key(s) for s in session_ids])
        found = {}
        for session_id, value in zip(session_ids, values, strict=True):
            beat = _parse(value)
            if beat is not None:
                found[session_id] = beat
        return found

    async def claim_overdue(
        self, due: Sequence[str], now: datetime
    ) -> tuple[list[str], dict[str, Beat]]:
        if not due:
            return [], {}
        keys: list[str] = []
        for session_id in due:
            keys += [self._beat_key(session_id), self._ended_key(session_id)]
        values = await self._claim_script(
            keys=keys, args=[_ms(now), int(ENDED_MARK_SECONDS * 1000)]
        )
        overdue: list[str] = []
        fresh: dict[str, Beat] = {}
        for session_id, value in zip(due, values, strict=True):
            beat = _parse(value)
            if beat is None:
                overdue.append(session_id)
                self._dirty.pop(session_id, None)
            else:
                fresh[session_id] = beat
        return overdue, fresh

    async def forget(self, session_ids: Iterable[str]) -> None:
        ids = list(session_ids)
        keys = [self._beat_key(s) for s in ids]
        for session_id in ids:
            self._dirty.pop(session_id, None)
        if ids:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.delete(*keys)
                for session_id in ids:
                    pipe.set(self._ended_key(session_id), "1", px=int(ENDED_MARK_SECONDS * 1000))
                await pipe.execute()
