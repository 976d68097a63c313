"""`agentlanes serve`: run the server with uvicorn."""

from __future__ import annotations

import argparse
import logging.config


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the server (settings: config file and AGENTLANES_*)")
    p.add_argument("--host", help="bind address (setting: host)")
    p.add_argument("--port", type=int, help="port (setting: port, default 8787)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from agentlanes.api.app import create_app
    from agentlanes.api.wsprotocol import StalledPeerSafeProtocol
    from agentlanes.gc_tuning import tune_for_serving
    from agentlanes.log_redaction import logging_config
    from agentlanes.settings import get_settings

    settings = get_settings()
    # One redacting handler for every logger, uvicorn's too: no key or token in the log.
    log_config = logging_config(settings.log_level, known_secrets=[settings.admin_token])
    logging.config.dictConfig(log_config)
    if args.host:
        settings.host = args.host
    if args.port:
        settings.port = args.port
    app = create_app(settings)
    # Everything loaded so far lives as long as the process: freeze it out of the garbage
    # collector's full passes, and widen the young generation (gc_tuning says why).
    tune_for_serving()
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
    )
    return 0
