"""`agentlanes project create | list | show | update | rotate-key | revoke-key | delete`.

Each goes through the running server's admin API, or to the configured database, and
says which on stderr (cli/admin_route.py has the rule). Output on stdout: text for a
person, ``--json`` for scripts, ``--key-only`` (create, rotate-key) for
``export AGENTLANES_API_KEY=$(…)``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from agentlanes.cli.errors import EXIT_USAGE, CommandError


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--server",
        metavar="URL",
        help="the server to ask (default: http://<host>:<port> from the settings)",
    )
    p.add_argument(
        "--database",
        action="store_true",
        help="act on the configured database_url directly, not through a server",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _settings_args(p: argparse.ArgumentParser, *, update: bool) -> None:
    p.add_argument("--conflict-mode", choices=("warn", "block"))
    p.add_argument(
        "--block-on",
        choices=("claims", "lines"),
        help="what block mode refuses on: every certain claim overlap (claims, the default) "
        "or only edits that meet (lines)",
    )
    p.add_argument(
        "--line-margin",
        type=int,
        metavar="N",
        help="unchanged lines between two edits that still count as meeting (default 0)",
    )
    p.add_argument(
        "--auto-queue",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="queue a refused scope change for the agent at once (the grant comes as news)",
    )
    p.add_argument("--heartbeat-interval", type=int, metavar="S")
    p.add_argument("--heartbeat-ttl", type=int, metavar="S")
    p.add_argument(
        "--config-key",
        action="append",
        dest="config_keys",
        metavar="KEY",
        help="a key agents may set in their registry config (repeatable"
        + ("; replaces the list)" if update else ")"),
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "project", help="administer projects (through the running server, or the database)"
    )
    psub = p.add_subparsers(dest="project_command", metavar="ACTION")
    psub.required = True

    create = psub.add_parser("create", help="create a project and print its API key once")
    create.add_argument("name")
    create.add_argument("--slug", help="URL-safe id (default: made from NAME)")
    _settings_args(create, update=False)
    create.add_argument("--key-only", action="store_true", help="print only the API key")
    _common(create)
    create.set_defaults(func=create_project)

    ls = psub.add_parser("list", help="list projects")
    _common(ls)
    ls.set_defaults(func=list_projects)

    show = psub.add_parser("show", help="show a project's settings and key state")
    show.add_argument("slug")
    _common(show)
    show.set_defaults(func=show_project)

    update = psub.add_parser("update", help="change a project's mode, heartbeat, config keys")
    update.add_argument("slug")
    update.add_argument("--name")
    _settings_args(update, update=True)
    update.add_argument("--no-config-keys", action="store_true", help="clear the agent config keys")
    _common(update)
    update.set_defaults(func=update_project)

    rotate = psub.add_parser("rotate-key", help="issue a new API key (the old one: grace period)")
    rotate.add_argument("slug")
    rotate.add_argument(
        "--grace-seconds",
        type=int,
        metavar="S",
        help="how long the old key keeps working (default: key_rotation_grace_seconds)",
    )
    rotate.add_argument("--key-only", action="store_true", help="print only the API key")
    _common(rotate)
    rotate.set_defaults(func=rotate_key)

    revoke = psub.add_parser(
        "revoke-key", help="refuse every key of a project at once (then rotate-key)"
    )
    revoke.add_argument("slug")
    _common(revoke)
    revoke.set_defaults(func=revoke_key)

    delete = psub.add_parser("delete", help="delete a project and all its data")
    delete.add_argument("slug")
    delete.add_argument("--yes", action="store_true", help="confirm: this cannot be undone")
    _common(delete)
    delete.set_defaults(func=delete_project)


def _route(args: argparse.Namespace) -> Any:
    from agentlanes.cli.admin_route import choose
    from agentlanes.settings import get_settings

    return choose(get_settings(), server=args.server, database=args.database)


def _through_server(route: Any) -> bool:
    from agentlanes.cli.admin_route import ServerRoute

    return isinstance(route, ServerRoute)


def _print_project(p: dict[str, Any]) -> None:
    key = p.get("key") or {}
    state = "revoked" if key.get("revoked_at") else "active"
    if key.get("previous_valid_until"):
        state += f" (previous key valid until {key['previous_valid_until']})"
    print(f"{p['slug']}  ({p['name']})")
    print(f"  conflict mode:   {p['conflict_mode']}")
    if "block_on" in p:
        print(f"  block on:        {p['block_on']} (line margin {p.get('line_margin', 0)})")
    if "auto_queue" in p:
        print(f"  auto queue:      {'on' if p['auto_queue'] else 'off'}")
    print(
        f"  heartbeat:       every {p['heartbeat_interval_seconds']} s, "
        f"timeout {p['heartbeat_ttl_seconds']} s"
    )
    print(f"  config keys:     {', '.join(p.get('agent_config_keys') or []) or '-'}")
    print(f"  key:             {state}")
    if "live_sessions" in p:
        print(f"  live sessions:   {p['live_sessions']}")
        print(f"  events (offset): {p['last_offset']}")
    print(f"  created:         {p['created_at']}")


def _output(args: argparse.Namespace, data: dict[str, Any], text: Any) -> int:
    if args.json:
        print(json.dumps(data))
    elif getattr(args, "key_only", False):
        print(data["api_key"])
    else:
        text()
    return 0


def create_project(args: argparse.Namespace) -> int:
    from agentlanes.services import projects

    body = {
        "name": args.name,
        "slug": args.slug,
        "conflict_mode": args.conflict_mode,
        "block_on": args.block_on,
        "line_margin": args.line_margin,
        "auto_queue": args.auto_queue,
        "heartbeat_interval_seconds": args.heartbeat_interval,
        "heartbeat_ttl_seconds": args.heartbeat_ttl,
        "agent_config_keys": args.config_keys,
    }
    route = _route(args)
    if _through_server(route):
        data = route.call("POST", "/", {k: v for k, v in body.items() if v is not None})
    else:
        data = route.run(projects.create_project, projects.ProjectInput(**body))

    def text() -> None:
        print(f"project {data['slug']} created ({data['conflict_mode']} mode)")
        print(f"API key (shown once, keep it safe): {data['api_key']}")

    return _output(args, data, text)


def list_projects(args: argparse.Namespace) -> int:
    from agentlanes.services import projects

    route = _route(args)
    if _through_server(route):
        data = route.call("GET", "/")
    else:
        data = {"projects": route.run(projects.list_projects)}

    def text() -> None:
        from agentlanes.cli.output import table

        rows = [
            (
                p["slug"],
                p["conflict_mode"],
                p["heartbeat_interval_seconds"],
                p["heartbeat_ttl_seconds"],
                "revoked" if (p.get("key") or {}).get("revoked_at") else "active",
                p["name"],
            )
            for p in data["projects"]
        ]
        if not rows:
            print("no projects (create one: agentlanes project create NAME)")
            return
        table(("slug", "mode", "interval", "ttl", "key", "name"), rows)

    return _output(args, data, text)


def show_project(args: argparse.Namespace) -> int:
    from agentlanes.services import projects

    route = _route(args)
    if _through_server(route):
        data = route.call("GET", f"/{args.slug}")
    else:
        data = route.run(projects.show_project, args.slug)
    return _output(args, data, lambda: _print_project(data))


def update_project(args: argparse.Namespace) -> int:
    from agentlanes.services import projects

    if args.no_config_keys and args.config_keys:
        raise CommandError("--config-key and --no-config-keys exclude each other", EXIT_USAGE)
    body = {
        "name": args.name,
        "conflict_mode": args.conflict_mode,
        "block_on": args.block_on,
        "line_margin": args.line_margin,
        "auto_queue": args.auto_queue,
        "heartbeat_interval_seconds": args.heartbeat_interval,
        "heartbeat_ttl_seconds": args.heartbeat_ttl,
        "agent_config_keys": [] if args.no_config_keys else args.config_keys,
    }
    body = {k: v for k, v in body.items() if v is not None}
    if not body:
        raise CommandError(
            "nothing to change: give --conflict-mode, --block-on, --line-margin, "
            "--auto-queue, --heartbeat-interval, --heartbeat-ttl, --config-key, "
            "--no-config-keys or --name",
            EXIT_USAGE,
        )
    route = _route(args)
    if _through_server(route):
        data = route.call("PATCH", f"/{args.slug}", body)
    else:
        data = route.run(projects.update_project, args.slug, projects.ProjectChanges(**body))

    def text() -> None:
        changes = data.get("changes") or {}
        if not changes:
            print(f"project {data['slug']}: nothing changed")
        for key, change in changes.items():
            print(f"project {data['slug']}: {key} {change['from']} -> {change['to']}")

    return _output(args, data, text)


def rotate_key(args: argparse.Namespace) -> int:
    from agentlanes.services import projects

    route = _route(args)
    if _through_server(route):
        body = {} if args.grace_seconds is None else {"grace_seconds": args.grace_seconds}
        data = route.call("POST", f"/{args.slug}/rotate-key", body)
    else:
        data = route.run(projects.rotate_key, args.slug, args.grace_seconds)

    def text() -> None:
        until = (data.get("key") or {}).get("previous_valid_until")
        print(f"project {data['slug']}: new API key (shown once, keep it safe): {data['api_key']}")
        print(f"the old key works until {until}" if until else "the old key is refused from now")

    return _output(args, data, text)


def revoke_key(args: argparse.Namespace) -> int:
    from agentlanes.services import projects

    route = _route(args)
    if _through_server(route):
        data = route.call("POST", f"/{args.slug}/revoke-key")
    else:
        data = route.run(projects.revoke_key, args.slug)

    def text() -> None:
        print(f"project {data['slug']}: every API key is refused from now")
        print(f"issue a new one with: agentlanes project rotate-key {data['slug']}")

    return _output(args, data, text)


def delete_project(args: argparse.Namespace) -> int:
    from agentlanes.services import projects

    if not args.yes:
        raise CommandError(
            f"this deletes project {args.slug!r} and all its data; add --yes to confirm",
            EXIT_USAGE,
        )
    route = _route(args)
    if _through_server(route):
        data = route.call("DELETE", f"/{args.slug}")
    else:
        data = route.run(projects.delete_project, args.slug)

    def text() -> None:
        rows = sum(data["rows_deleted"].values())
        print(f"project {data['slug']} deleted ({rows} rows)")

    return _output(args, data, text)
