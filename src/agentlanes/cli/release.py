"""``lanes release PATH...``: take paths out of your session's claims (SPEC "Many agents,
one working tree", "Release"), so the next in line may take them.

Each PATH is a claim as your session holds it (a file, a ``dir/``, a glob), or a file
(relative to where you stand) that one of your literal claims names. A file your claims
cover only through a glob (``src/**``) cannot be cut out of the glob: the command says
which pattern holds it, and changes nothing. The rest go in one status change with the
narrower ``declared_files`` (``[]`` when nothing is left).
"""

from __future__ import annotations

import argparse
from typing import Any

from agentlanes.cli.errors import EXIT_USAGE, CommandError
from agentlanes.cli.local import local_config, local_session, make_client
from agentlanes.cli.output import add_json, client_errors, emit_json
from agentlanes.client.release import released, remember_claims, spellings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("release", help="take paths out of your session's claims")
    p.add_argument("paths", nargs="+", metavar="PATH", help="a claim, or a file it names")
    p.add_argument(
        "--agent", help="which local agent's session (default: the configured one, or the only one)"
    )
    add_json(p)
    p.set_defaults(func=release)


def _covering(declared: list[str], path: str) -> list[str]:
    """The claims (globs) that cover ``path``."""
    from agentlanes.domain.globs.claims import claimed_paths

    return [p for p in declared if claimed_paths([p], [path])]


def release(args: argparse.Namespace) -> int:
    cfg = local_config()
    session = local_session(cfg, args.agent)
    declared = [p for p in session.get("declared_files") or [] if isinstance(p, str)]
    with client_errors(), make_client(cfg, session["session_token"]) as client:
        mine = [s for s in client.presence().sessions if s.session_id == session.get("session_id")]
        if mine:
            declared = list(mine[0].declared_files or [])
        left, unknown = released(declared, args.paths, cfg.root)
        if unknown:
            notes = []
            for path in unknown:
                holders = _covering(declared, sorted(spellings(path, cfg.root))[-1])
                notes.append(
                    f"{path}: held by your pattern {', '.join(holders)} (release the pattern, "
                    "or narrow it with `lanes status --files ...`)"
                    if holders
                    else f"{path}: not among your claims ({' '.join(declared) or 'none'})"
                )
            raise CommandError("; ".join(notes) + "; nothing released", EXIT_USAGE)
        result = client.status(declared_files=left)
    remember_claims(cfg, session, list(result.declared_files or []), declared)
    data: dict[str, Any] = {
        **result.raw(),
        "released": [p for p in declared if p not in left],
    }
    if args.json:
        emit_json(data)
        return 0
    print(f"released: {' '.join(data['released'])}")
    print(f"your claims now: {' '.join(result.declared_files or []) or '(none)'}")
    return 0
