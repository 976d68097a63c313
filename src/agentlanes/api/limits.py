"""Request rate limit (Litestar's RateLimitMiddleware), keyed by API key."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.middleware.base import DefineMiddleware
from litestar.middleware.rate_limit import RateLimitConfig, get_remote_address

from agentlanes.secrets import hash_secret


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
    ).middleware
