"""The agentlanes client: ``Client`` (blocking) and ``AsyncClient`` (asyncio).

    from agentlanes.client import Client

    with Client.from_env() as lanes:            # AGENTLANES_URL / _API_KEY or .agentlanes.toml
        lanes.checkin("alice", "api", ["src/api/**"])
        for conflict in lanes.check_conflicts(paths=["src/api/app.py"]).conflicts: ...

The heavy parts (httpx, pydantic, websockets) load on first use, so the git hook and the
editor guard can import ``agentlanes.client.config`` without paying for them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself is not imported at run time (the hook's budget)
if TYPE_CHECKING:
    from typing import Any

    from agentlanes.client.aio import AsyncClient
    from agentlanes.client.errors import (
        ApiError,
        ClientError,
        ConfigurationError,
        NoSession,
        StreamClosed,
        Unreachable,
    )
    from agentlanes.client.sync import Client

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "ClientError",
    "ConfigurationError",
    "NoSession",
    "StreamClosed",
    "Unreachable",
]

_WHERE = {
    "Client": "agentlanes.client.sync",
    "AsyncClient": "agentlanes.client.aio",
    "ApiError": "agentlanes.client.errors",
    "ClientError": "agentlanes.client.errors",
    "ConfigurationError": "agentlanes.client.errors",
    "NoSession": "agentlanes.client.errors",
    "StreamClosed": "agentlanes.client.errors",
    "Unreachable": "agentlanes.client.errors",
}


def __getattr__(name: str) -> Any:
    # PEP 562: import the module that holds a name only when it is asked for.
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'agentlanes.client' has no attribute {name!r}")
