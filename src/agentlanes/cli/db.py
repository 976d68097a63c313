"""`agentlanes db upgrade | current | backup PATH`: the schema and backups, for operators.

These act on the configured database (``database_url``) directly, never through a
server, and say which database they acted on. `agentlanes serve` upgrades by itself at
start; `db upgrade` is for upgrading before starting the new release, or in a deploy step.
"""

from __future__ import annotations

import argparse
import json

from agentlanes.cli.errors import EXIT_UNREACHABLE, EXIT_USAGE, CommandError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("db", help="database schema and backups (the configured database_url)")
    dsub = p.add_subparsers(dest="db_command", metavar="ACTION")
    dsub.required = True
    up = dsub.add_parser("upgrade", help="apply pending migrations (serialised across processes)")
    up.add_argument("--json", action="store_true", help="print one JSON object")
    up.set_defaults(func=upgrade)
    cur = dsub.add_parser("current", help="show the schema revision and this release's newest")
    cur.add_argument("--json", action="store_true", help="print one JSON object")
    cur.set_defaults(func=current)
    bk = dsub.add_parser("backup", help="copy a live SQLite database (PostgreSQL: use pg_dump)")
    bk.add_argument("path", help="the new file to write (never overwritten)")
    bk.add_argument("--json", action="store_true", help="print one JSON object")
    bk.set_defaults(func=backup)


def _run(what: str, fn, *args):
    from sqlalchemy.exc import DBAPIError

    from agentlanes.store.migrate import MigrationError

    try:
        return fn(*args)
    except MigrationError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    except ValueError as exc:  # unsupported database_url
        raise CommandError(str(exc), EXIT_USAGE) from None
    except (OSError, DBAPIError) as exc:
        raise CommandError(f"{what}: cannot reach the database: {exc}", EXIT_UNREACHABLE) from None


def upgrade(args: argparse.Namespace) -> int:
    from agentlanes.settings import get_settings
    from agentlanes.store.identity import database_label
    from agentlanes.store.migrate import upgrade_url

    url = get_settings().database_url
    result = _run("db upgrade", upgrade_url, url)
    if args.json:
        print(
            json.dumps(
                {
                    "database": database_label(url),
                    "before": result.before,
                    "after": result.after,
                    "stamped_baseline": result.stamped_baseline,
                }
            )
        )
        return 0
    print(f"database: {database_label(url)}")
    if result.stamped_baseline:
        print("found a database made before migrations: stamped at the baseline")
    if result.before == result.after and not result.stamped_baseline:
        print(f"already at the newest revision ({result.after})")
    else:
        before = result.before or ("0001_baseline" if result.stamped_baseline else "(empty)")
        print(f"upgraded: {before} -> {result.after}")
    return 0


def current(args: argparse.Namespace) -> int:
    from agentlanes.settings import get_settings
    from agentlanes.store.identity import database_label
    from agentlanes.store.migrate import current_url, head_revision

    url = get_settings().database_url
    revision = _run("db current", current_url, url)
    head = head_revision()
    if args.json:
        print(json.dumps({"database": database_label(url), "current": revision, "head": head}))
        return 0
    print(f"database: {database_label(url)}")
    print(f"current:  {revision or '(none: empty, or made before migrations)'}")
    print(f"newest:   {head}" + ("" if revision == head else "  (run: agentlanes db upgrade)"))
    return 0


def backup(args: argparse.Namespace) -> int:
    from pathlib import Path

    from agentlanes.settings import get_settings
    from agentlanes.store.identity import database_label
    from agentlanes.store.migrate import backup_sqlite

    url = get_settings().database_url
    info = _run("db backup", backup_sqlite, url, Path(args.path))
    if args.json:
        print(json.dumps(info))
        return 0
    print(f"database: {database_label(url)}")
    print(
        f"backup written: {info['backup']} ({info['pages']} pages, integrity {info['integrity']})"
    )
    return 0
