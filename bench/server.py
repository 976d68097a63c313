"""The `agentlanes serve` a benchmark measures: one way to start it for every bench.

The process is the end-to-end tests' ``ServerProcess`` (a free port on 127.0.0.1, its
output in a log file in the work directory, ready once ``/readyz`` answers). What a bench
chooses is the admin token, the database and any other setting; the log level is
``warning`` unless it says otherwise.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.server import ServerProcess, free_port

__all__ = ["ServerProcess", "bench_server", "free_port"]


def bench_server(
    work: Path,
    admin_token: str,
    *,
    database_url: str | None = None,
    **settings: object,
) -> ServerProcess:
    """A server for a benchmark, not started yet (``.start(timeout=...)``; ``.stop()``):
    run in ``work``, on ``database_url`` (default: ``bench.db``, SQLite, in ``work``),
    with ``settings`` as the server reads them from its environment, by name
    (``redis_url=""``, ``rate_limit_per_minute=0`` become ``AGENTLANES_REDIS_URL=`` and
    ``AGENTLANES_RATE_LIMIT_PER_MINUTE=0``)."""
    env = {
        "AGENTLANES_ADMIN_TOKEN": admin_token,
        "AGENTLANES_LOG_LEVEL": "warning",
        "AGENTLANES_DATABASE_URL": database_url or f"sqlite:///{work / 'bench.db'}",
    }
    env.update({f"AGENTLANES_{name.upper()}": str(value) for name, value in settings.items()})
    return ServerProcess(env, work)
