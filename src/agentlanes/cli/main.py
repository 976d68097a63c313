"""Entry point of the `agentlanes` / `lanes` command.

argparse keeps start-up lean (the git hook runs this on every commit). Each command
group lives in its own module with a ``register(subparsers)`` function; a module is
imported only to register, and heavy imports stay inside the command functions.

Exit codes: 0 ok, 1 conflicts found / refused, 2 bad input (usage), 3 server unreachable,
4 server answered with an error, 5 no local session.
"""

from __future__ import annotations

import sys

from agentlanes.cli.errors import CommandError

TYPE_CHECKING = False  # `lanes guard` runs before every edit: import only what it needs
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

# Modules that add sub-commands, in the order they appear in --help.
COMMAND_MODULES = (
    "agentlanes.cli.serve",
    "agentlanes.cli.project",
    "agentlanes.cli.db",
    "agentlanes.cli.session",
    "agentlanes.cli.release",
    "agentlanes.cli.news",
    "agentlanes.cli.message",
    "agentlanes.cli.queue",
    "agentlanes.cli.watch",
    "agentlanes.cli.hook",
    "agentlanes.cli.verify",
    "agentlanes.cli.guard",
    "agentlanes.cli.mcp",
    "agentlanes.cli.init",
    "agentlanes.cli.doctor",
)


def build_parser() -> argparse.ArgumentParser:
    import argparse
    import importlib

    parser = argparse.ArgumentParser(
        prog="agentlanes",
        description="Real-time presence and conflict service for coding agents.",
        epilog="exit codes: 0 ok, 1 conflict or refused, 2 bad input, 3 unreachable, "
        "4 server error answer, 5 no local session",
    )
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def version_line() -> str:
    import os

    from agentlanes import __version__

    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "agentlanes"
    return f"{'lanes' if name == 'lanes' else 'agentlanes'} {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else list(argv)
    if args_list[:1] == ["guard"]:
        # Claude Code runs the guard before every edit: skip building the whole parser.
        from agentlanes.hooks.adapters import guard

        return guard(args_list[1:])
    parser = build_parser()
    args = parser.parse_args(args_list)
    try:
        result = args.func(args)
    except CommandError as exc:
        if getattr(args, "json", False):
            import json

            body = exc.payload or {"error": {"code": "CLI_ERROR", "message": str(exc)}}
            print(json.dumps({**body, "exit_code": exc.exit_code}))
        print(f"agentlanes: {exc}", file=sys.stderr)
        for line in exc.details:
            print(f"  {line}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
