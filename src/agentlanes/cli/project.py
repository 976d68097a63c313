"""`agentlanes project create NAME`: make a project in the configured database."""

from __future__ import annotations

import argparse
import json

from agentlanes.cli.errors import EXIT_CONFLICT, EXIT_UNREACHABLE, EXIT_USAGE, CommandError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("project", help="manage projects in the configured database")
    psub = p.add_subparsers(dest="project_command", metavar="ACTION")
    psub.required = True
    create = psub.add_parser("create", help="create a project and print its API key once")
    create.add_argument("name")
    create.add_argument("--slug", help="URL-safe id (default: made from NAME)")
    create.add_argument("--conflict-mode", choices=("warn", "block"))
    create.add_argument("--heartbeat-interval", type=int, metavar="S")
    create.add_argument("--heartbeat-ttl", type=int, metavar="S")
    create.add_argument(
        "--config-key",
        action="append",
        dest="config_keys",
        metavar="KEY",
        help="a key agents may set in their registry config (repeatable)",
    )
    create.add_argument("--json", action="store_true", help="print one JSON object")
    create.set_defaults(func=create_project)


def create_project(args: argparse.Namespace) -> int:
    import asyncio

    from agentlanes.errors import AgentlanesError
    from agentlanes.hub.memory import MemoryHub
    from agentlanes.services.context import ServiceContext
    from agentlanes.services.projects import ProjectInput
    from agentlanes.services.projects import create_project as create
    from agentlanes.settings import get_settings
    from agentlanes.store.database import Database

    settings = get_settings()

    async def go() -> dict[str, object]:
        db = Database(settings.database_url)
        try:
            await db.create_all()
            ctx = ServiceContext(settings=settings, db=db, hub=MemoryHub())
            return await create(
                ctx,
                ProjectInput(
                    name=args.name,
                    slug=args.slug,
                    conflict_mode=args.conflict_mode,
                    heartbeat_interval_seconds=args.heartbeat_interval,
                    heartbeat_ttl_seconds=args.heartbeat_ttl,
                    agent_config_keys=args.config_keys,
                ),
            )
        finally:
            await db.dispose()

    try:
        project = asyncio.run(go())
    except AgentlanesError as exc:
        raise CommandError(
            exc.message, EXIT_CONFLICT if exc.status_code == 409 else EXIT_USAGE
        ) from None
    except OSError as exc:
        raise CommandError(f"cannot reach the database: {exc}", EXIT_UNREACHABLE) from None
    if args.json:
        print(json.dumps(project))
    else:
        print(f"project {project['slug']} created ({project['conflict_mode']} mode)")
        print(f"API key (shown once, keep it safe): {project['api_key']}")
    return 0
