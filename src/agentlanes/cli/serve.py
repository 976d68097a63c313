"""`agentlanes serve`: run the server with uvicorn."""

from __future__ import annotations

import argparse
import logging.config
from typing import Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the server (settings: config file and AGENTLANES_*)")
    p.add_argument("--host", help="bind address (setting: host)")
    p.add_argument("--port", type=int, help="port (setting: port, default 8787)")
    p.set_defaults(func=run)


def _migrate(database_url: str) -> None:
    """Apply pending migrations before listening (one process migrates, others wait)."""
    from sqlalchemy.exc import DBAPIError

    from agentlanes.cli.errors import EXIT_UNREACHABLE, EXIT_USAGE, CommandError
    from agentlanes.store.identity import database_label
    from agentlanes.store.migrate import MigrationError, upgrade_url

    log = logging.getLogger("agentlanes")
    where = database_label(database_url)
    try:
        result = upgrade_url(database_url)
    except MigrationError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    except (OSError, DBAPIError) as exc:
        raise CommandError(f"cannot reach the database {where}: {exc}", EXIT_UNREACHABLE) from None
    if result.changed:
        before = result.before or ("0001_baseline" if result.stamped_baseline else "(empty)")
        log.info("schema of %s upgraded: %s -> %s", where, before, result.after)
    else:
        log.info("schema of %s at %s", where, result.after)


def run(args: argparse.Namespace) -> int:
    from agentlanes.api.app import create_app
    from agentlanes.server.gc_tuning import tune_for_serving
    from agentlanes.server.log_redaction import logging_config
    from agentlanes.settings import get_settings

    settings = get_settings()
    # One redacting handler for every logger, uvicorn's too: no key or token in the log.
    log_config = logging_config(settings.log_level, known_secrets=[settings.admin_token])
    logging.config.dictConfig(log_config)
    if args.host:
        settings.host = args.host
    if args.port:
        settings.port = args.port
    try:
        app = create_app(settings)
    except ValueError as exc:
        from agentlanes.cli.errors import EXIT_USAGE, CommandError

        raise CommandError(str(exc), EXIT_USAGE) from None
    _migrate(settings.database_url)
    raise_fd_limit()
    # Everything loaded so far lives as long as the process: freeze it out of the garbage
    # collector's full passes, and widen the young generation (gc_tuning says why).
    tune_for_serving()
    # Beside the database: where `project` commands with these settings find this server.
    from agentlanes.cli.admin_route import server_url
    from agentlanes.server import address

    recorded = address.record(settings.database_url, server_url(settings, None))
    _forget_on_sigterm(recorded)
    try:
        _serve(app, settings, log_config)
    finally:
        address.forget(recorded)
    return 0


def raise_fd_limit() -> tuple[int, int]:
    """Every socket is a file descriptor: raise the soft limit (often 1,024) to the hard one
    the OS allows, so one process can hold tens of thousands of event sockets, and log it.
    Returns (before, after)."""
    import resource

    log = logging.getLogger("agentlanes")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1_048_576
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("open-file limit stays at %d (the OS refused %d: %s)", soft, target, exc)
            return soft, soft
        log.info("open-file limit raised from %d to %d (the hard limit)", soft, target)
        return soft, target
    log.info("open-file limit %s (already the hard limit)", soft)
    return soft, soft


def _forget_on_sigterm(recorded: Any) -> None:
    """uvicorn stops on SIGTERM and then raises it again, to whatever handler was there
    before: this one removes the address record, then dies of SIGTERM as before."""
    import os
    import signal

    from agentlanes.server import address

    def handler(signum: int, _frame: Any) -> None:
        address.forget(recorded)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, handler)


def _serve(app: Any, settings: Any, log_config: dict[str, Any]) -> None:
    import uvicorn

    from agentlanes.server.wsprotocol import StalledPeerSafeProtocol

    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        # websockets-sansio, with a close that a peer which stopped reading cannot block.
        ws=StalledPeerSafeProtocol,
        ws_per_message_deflate=False,
        lifespan="on",
        access_log=False,
        log_config=log_config,
        # One client message may be as large as one HTTP body, no larger.
        ws_max_size=settings.max_body_bytes,
        # uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise, which
        # lets any local client pick its address per request (and dodge the per-address
        # limits): only the peers of forwarded_allow_ips are believed (default none).
        proxy_headers=bool(settings.forwarded_allow_ips),
        forwarded_allow_ips=list(settings.forwarded_allow_ips) or None,
    )
