"""Request rate limit (Litestar's RateLimitMiddleware), keyed by API key.

One process keeps the counts in memory. With ``redis_url`` set they live in Redis, so
N processes share one limit instead of allowing N times it. If Redis is unreachable the
limit is not applied (fail open, logged once per outage): Redis carries no data here,
and losing it must not turn every request into an error.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from litestar import Request
from litestar.middleware.base import DefineMiddleware
from litestar.middleware.rate_limit import RateLimitConfig, get_remote_address
from litestar.stores.base import Store
from litestar.stores.redis import RedisStore
from redis.asyncio import ConnectionPool, Redis
from redis.exceptions import RedisError

from agentlanes.secrets import hash_secret
from agentlanes.settings import Settings

STORE_NAME = "rate_limit"
log = logging.getLogger("agentlanes.limits")


def _identifier(request: Request[Any, Any, Any]) -> str:
    key = request.headers.get("x-api-key")
    # Hash so that no key is held in the limiter's store in clear.
    return "key:" + hash_secret(key) if key else "addr:" + get_remote_address(request)


def rate_limit(per_minute: int) -> DefineMiddleware:
    """Limit every route but health, readiness and metrics (probes must always answer)."""
    return RateLimitConfig(
        rate_limit=("minute", per_minute),
        identifier_for_request=_identifier,
        exclude=["^/healthz", "^/readyz", "^/metrics"],
        store=STORE_NAME,
    ).middleware


class FailOpenRedisStore(RedisStore):
    """A RedisStore whose reads find nothing and whose writes do nothing while Redis is
    down, so the limiter lets requests through instead of failing them."""

    _down = False

    def _failed(self, exc: Exception) -> None:
        if not FailOpenRedisStore._down:
            FailOpenRedisStore._down = True
            log.warning("rate limit not applied: redis unavailable (%s)", exc)

    def _ok(self) -> None:
        if FailOpenRedisStore._down:
            FailOpenRedisStore._down = False
            log.warning("rate limit applied again: redis available")

    async def get(self, key: str, renew_for: int | timedelta | None = None) -> bytes | None:
        try:
            value = await super().get(key, renew_for)
        except (RedisError, OSError) as exc:
            self._failed(exc)
            return None
        self._ok()
        return value

    async def set(
        self, key: str, value: str | bytes, expires_in: int | timedelta | None = None
    ) -> None:
        try:
            await super().set(key, value, expires_in)
        except (RedisError, OSError) as exc:
            self._failed(exc)


def rate_limit_stores(settings: Settings) -> dict[str, Store]:
    """The limiter's store: Redis when configured (shared by every process), else none
    (Litestar's default, in memory)."""
    if not settings.redis_url:
        return {}
    pool = ConnectionPool.from_url(
        settings.redis_url, socket_connect_timeout=0.5, socket_timeout=0.5
    )
    store = FailOpenRedisStore(
        redis=Redis(connection_pool=pool),
        namespace=f"{settings.redis_channel_prefix}:ratelimit",
        handle_client_shutdown=True,
    )
    return {STORE_NAME: store}
