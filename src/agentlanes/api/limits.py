"""Request rate limit (Litestar's RateLimitMiddleware), counted per project.

A request is counted against the project its ``X-API-Key`` opens; a request whose key
opens nothing (unknown, revoked, a random key per request), or that sends none (the
admin API, the dashboard), is counted against its client address. So neither a key per
request nor guessing the admin token escapes the limit (SPEC, "One agent cannot hurt
another"). Over it: 429 RATE_LIMITED with ``Retry-After``.

One process keeps the counts in memory. With ``redis_url`` set they live in Redis, so
N processes share one limit instead of allowing N times it; there each request is
counted by one atomic script (Litestar's own middleware reads, then writes back, and
two processes could both let the last allowed request through). The window is the same
fixed one Litestar uses: it starts at a key's first request and lasts a minute. If Redis
is unreachable the limit is not applied (fail open, logged once per outage): Redis
carries no data here, and losing it must not turn every request into an error.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from time import time
from typing import Any

from litestar import Request
from litestar.exceptions import TooManyRequestsException
from litestar.middleware.base import DefineMiddleware
from litestar.middleware.rate_limit import (
    DURATION_VALUES,
    CacheObject,
    RateLimitConfig,
    RateLimitMiddleware,
    get_remote_address,
)
from litestar.stores.base import Store
from litestar.stores.redis import RedisStore
from litestar.types import Receive, Scope, Send
from redis.asyncio import ConnectionPool, Redis
from redis.exceptions import RedisError

from agentlanes.errors import AgentlanesError
from agentlanes.services.projects import project_for_key
from agentlanes.settings import Settings

STORE_NAME = "rate_limit"
log = logging.getLogger("agentlanes.limits")
# Where the middleware leaves what it counted the request against (the scope's state).
COUNTED_AS = "rate_limit_identity"


async def identify(request: Request[Any, Any, Any]) -> str:
    """What a request is counted against: ``project:<id>`` for a key that opens a
    project, else ``addr:<client address>``."""
    key = request.headers.get("x-api-key")
    ctx = getattr(request.app.state, "ctx", None)
    if key and ctx is not None:
        try:
            project = await project_for_key(ctx, key)
        except AgentlanesError:
            project = None  # opens nothing: counted by address
        except Exception:
            project = None  # the database is away: the guard answers 503 after this
        if project is not None:
            return f"project:{project.id}"
    return "addr:" + get_remote_address(request)


def _identifier(request: Request[Any, Any, Any]) -> str:
    counted = request.scope.get("state", {}).get(COUNTED_AS)
    return str(counted) if counted else "addr:" + get_remote_address(request)


def rate_limit(per_minute: int) -> DefineMiddleware:
    """Limit every route but health, readiness and metrics (probes must always answer)."""
    return RateLimitConfig(
        rate_limit=("minute", per_minute),
        identifier_for_request=_identifier,
        exclude=["^/healthz", "^/readyz", "^/metrics"],
        store=STORE_NAME,
        middleware_class=SharedRateLimitMiddleware,
    ).middleware


class SharedRateLimitMiddleware(RateLimitMiddleware):
    """Litestar's limiter, counting atomically in Redis when the store is Redis."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = scope["litestar_app"]
        store = self.config.get_store_from_app(app)
        request: Request[Any, Any, Any] = app.request_class(scope)
        # Resolved here, once, so that the (synchronous) identifier can read it.
        scope.setdefault("state", {})[COUNTED_AS] = await identify(request)
        if not isinstance(store, FailOpenRedisStore):
            await super().__call__(scope, receive, send)
            return
        if await self.should_check_request(request=request):
            window = DURATION_VALUES[self.unit]
            counted = await store.count_hit(self.cache_key_from_request(request), window)
            if counted is not None:  # None: Redis is down, fail open
                count, ttl = counted
                cache_object = CacheObject(history=[0] * count, reset=int(time()) + ttl)
                headers = (
                    self.create_response_headers(cache_object)
                    if self.config.set_rate_limit_headers
                    else None
                )
                if count > self.max_requests:
                    raise TooManyRequestsException(headers=headers)
                if headers is not None:
                    send = self.create_send_wrapper(send=send, cache_object=cache_object)
        await self.app(scope, receive, send)


class FailOpenRedisStore(RedisStore):
    """A RedisStore whose reads find nothing and whose writes do nothing while Redis is
    down, so the limiter lets requests through instead of failing them. Each store (one
    per app) keeps its own outage state."""

    _down = False  # the instance's own once set: two apps never share an outage
    # One step: count this request, start the window on the first, report count and TTL.
    _COUNT_HIT = """
    local n = redis.call('INCR', KEYS[1])
    if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
    local ttl = redis.call('TTL', KEYS[1])
    if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
    return {n, ttl}
    """

    async def count_hit(self, key: str, window_seconds: int) -> tuple[int, int] | None:
        """Count one request in the key's window: (requests so far, seconds left), or
        None while Redis is unreachable."""
        try:
            count, ttl = await self._redis.eval(
                self._COUNT_HIT, 1, self._make_key(key), window_seconds
            )
        except (RedisError, OSError) as exc:
            self._failed(exc)
            return None
        self._ok()
        return int(count), int(ttl)

    def _failed(self, exc: Exception) -> None:
        if not self._down:
            self._down = True
            log.warning("rate limit not applied: redis unavailable (%s)", exc)

    def _ok(self) -> None:
        if self._down:
            self._down = False
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
