"""``lanes verify [REV_RANGE]``: the files a range of commits changes, checked against the
other live sessions' edits and claims; exit 1 when another session is editing one of them.

For a CI job or a merge queue, and what the pre-push hook runs (``agentlanes.hooks.verify``,
which holds the check): ``git commit --no-verify`` does not get around it.
"""

from __future__ import annotations

import argparse

from agentlanes.cli.errors import EXIT_USAGE, CommandError
from agentlanes.cli.output import add_json, emit_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify",
        help="check the files a range of commits changes against other live sessions' edits",
        description="Check every file the commits of REV_RANGE change against the other live "
        "sessions: exit 1 when another session has uncommitted edits on one of them (naming "
        "who, where, and how to message them), 0 otherwise (claims without edits are "
        "warnings). Server unreachable: exit 1 under fail_closed, else a warning and 0.",
        epilog="default range: @{upstream}..HEAD; with no upstream, HEAD --not --remotes "
        "(the commits on no remote-tracking branch). exit codes: 0 passes, 1 refused, "
        "2 bad input.",
    )
    p.add_argument(
        "range",
        nargs="?",
        metavar="REV_RANGE",
        help="the commits to check, as git log takes them (origin/main..HEAD, HEAD~3..)",
    )
    p.add_argument(
        "--agent",
        help="which local agent you are (its own session is left out; default: the one that "
        "started this shell, or nobody)",
    )
    p.add_argument(
        "--ignore-agent",
        action="append",
        default=[],
        metavar="NAME",
        help="leave this agent's sessions out too (repeatable): in CI, the branch's own "
        "author, whose session may still show the edits it has since committed",
    )
    add_json(p)
    p.set_defaults(func=verify)


def verify(args: argparse.Namespace) -> int:
    from agentlanes.hooks.verify import (
        UsageError,
        check_range,
        default_range,
        given_range,
        has_commits,
    )

    try:
        commits = has_commits()  # and a git repository: else a UsageError
        if args.range is None:
            if not commits:
                if args.json:
                    emit_json({"range": None, "commits": 0, "files": [], "refused": False})
                else:
                    print("nothing to check: no commits yet")
                return 0
            rng = default_range()
        else:
            rng = given_range(args.range)
        verdict = check_range([rng], agent=args.agent, ignore_agents=args.ignore_agent)
    except UsageError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    if args.json:
        emit_json({**verdict.data, "messages": verdict.lines, "exit_code": verdict.exit_code})
    else:
        for line in verdict.lines:
            print(line)
    return verdict.exit_code
