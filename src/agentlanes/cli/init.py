"""``lanes init``: set a repository up for its agents, once.

Writes (merging with what is there; a second run changes nothing and says so):

- ``.agentlanes.toml``: the server URL (the key stays in the environment);
- the git pre-commit, pre-push and post-commit hooks (as ``lanes hook install``; the
  pre-push hook runs ``lanes verify`` on what is pushed, which ``git commit --no-verify``
  does not skip; the post-commit hook takes what the committer committed out of its
  edits and claims, ``agentlanes.hooks.post_commit``);
- ``.claude/settings.json``: ``lanes guard`` (by absolute path: Claude Code may start
  without the venv on its PATH) as the Claude Code hook for six events: ``SessionStart``,
  ``UserPromptSubmit``, ``PreToolUse`` and ``PostToolUse`` (matcher ``"*"``: every tool;
  the tools that change files are checked, every call may carry the agent's news),
  ``Stop`` and ``SessionEnd``; other hooks and settings are kept, and an older agentlanes
  entry is updated in place;
- ``.mcp.json``: the ``agentlanes`` MCP server (``lanes mcp`` over stdio, or with
  ``--mcp http`` the server's own ``/mcp`` endpoint); an entry of your own is kept.

- with ``--agent NAME...`` (default: ``claude`` plus every agent whose project config
  folder exists), each agent's own hook config (``agentlanes.cli.init_agents``); the
  Claude Code files above only when ``claude`` is among them.

``--dry-run`` prints what would change (a diff per file) and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from agentlanes.cli.errors import EXIT_USAGE, CommandError
from agentlanes.cli.init_files import Change, _dump, _is_ours, _json_file, _read
from agentlanes.cli.output import add_json, client_errors, emit_json

MCP_NAME = "agentlanes"


def lanes_program() -> list[str]:
    """This installation's ``lanes``, by absolute path: Claude Code may start without the
    virtual environment on its PATH (a bare ``lanes`` then fails with 127). The console
    script beside this interpreter (a venv's or pipx's ``bin``), else this interpreter
    with ``-m agentlanes``."""
    import sys

    here = Path(sys.executable).parent / "lanes"  # not resolved: a venv's python is a link
    if here.is_file() and os.access(here, os.X_OK):
        return [str(here)]
    return [sys.executable, "-m", "agentlanes"]


def hook_program(program: list[str]) -> list[str]:
    """What the agents' hooks run: ``program`` behind the hooks' fast path
    (``python -S -I .../agentlanes/hooks/fast.py PROGRAM ...``), which hands a tool event
    to the agent's keepalive when one serves it and runs ``PROGRAM`` itself otherwise
    (docs/agents.md, "Hook time")."""
    import sys

    from agentlanes import hooks  # not hooks.fast: it is a script, not a module to import

    launcher = Path(hooks.__file__).resolve().parent / "fast.py"
    return [sys.executable, "-S", "-I", str(launcher), *program]


POST_TOOL_MATCHER = "Edit|MultiEdit|Write|NotebookEdit|Bash"


def hook_events(program: list[str]) -> dict[str, dict[str, Any]]:
    import shlex

    guard = shlex.join([*program, "guard"])
    # PreToolUse covers every tool ("*"): edits are checked, and every call, reads included,
    # carries the agent's news (additionalContext only). PostToolUse runs after the tools
    # that change files (their edits are noted; it carries the news too): after a read it
    # would only repeat PreToolUse's news channel, at the cost of a second hook per call.
    # UserPromptSubmit and Stop carry the news too (Stop blocks once for an undelivered
    # message; docs/agents.md).
    return {
        "SessionStart": {"hooks": [{"type": "command", "command": guard, "timeout": 15}]},
        "UserPromptSubmit": {"hooks": [{"type": "command", "command": guard, "timeout": 10}]},
        "PreToolUse": {
            "matcher": "*",
            "hooks": [{"type": "command", "command": guard, "timeout": 10}],
        },
        "PostToolUse": {
            "matcher": POST_TOOL_MATCHER,
            "hooks": [{"type": "command", "command": guard, "timeout": 10}],
        },
        "Stop": {"hooks": [{"type": "command", "command": guard, "timeout": 10}]},
        "SessionEnd": {"hooks": [{"type": "command", "command": guard, "timeout": 15}]},
    }


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "init",
        help="set this repository up: .agentlanes.toml, git hooks, Claude Code hooks, .mcp.json",
    )
    p.add_argument("--dry-run", action="store_true", help="show the changes, write nothing")
    p.add_argument(
        "--mcp",
        choices=("stdio", "http"),
        help="the MCP server in .mcp.json: `lanes mcp` (stdio, the default) or the "
        "server's /mcp endpoint (http); given, it replaces an existing entry",
    )
    p.add_argument(
        "--agent",
        nargs="+",
        action="extend",
        metavar="NAME",
        help="write these agents' hook configs (claude, codex, cursor, gemini, copilot, cline, "
        "opencode, windsurf, aider); default: claude plus every agent whose project config "
        "folder exists (docs/agents.md)",
    )
    p.add_argument(
        "--trust-hooks",
        action="store_true",
        help="also allow the agents that ask their user first to run these hooks: Codex "
        "(trust the project and each agentlanes hook, through Codex's own app server), "
        "Copilot CLI and Gemini CLI (trust the folder); docs/agents.md",
    )
    add_json(p)
    p.set_defaults(func=init)


def plan_config(root: Path, url: str) -> Change:
    path = root / ".agentlanes.toml"
    before = _read(path)
    line = f"url = {json.dumps(url)}\n"
    if before is None:
        after = (
            "# agentlanes: where this repository's agents check in (see docs/agents.md).\n"
            + line
            + "# The project's key stays out of git: export AGENTLANES_API_KEY=alk_...\n"
        )
        return Change(path, None, after, "server URL")
    import tomllib

    try:
        has_url = "url" in tomllib.loads(before)
    except tomllib.TOMLDecodeError as exc:
        raise CommandError(f"{path}: not valid TOML ({exc})", EXIT_USAGE) from None
    after = before if has_url else before + ("" if before.endswith("\n") else "\n") + line
    return Change(path, before, after, "server URL")


def plan_claude(root: Path, program: list[str]) -> Change:
    path = root / ".claude" / "settings.json"
    before, data = _json_file(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise CommandError(f'{path}: "hooks" is not an object', EXIT_USAGE)
    events = hook_events(program)
    for event, wanted in events.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise CommandError(f"{path}: hooks.{event} is not a list", EXIT_USAGE)
        ours = [i for i, g in enumerate(groups) if _is_ours(g)]
        if ours:
            groups[ours[0]] = wanted  # an older entry of ours: brought up to date in place
            for i in reversed(ours[1:]):
                del groups[i]
        else:
            groups.append(wanted)
    after = _dump(data)
    if before is not None and json.loads(before or "{}") == json.loads(after):
        after = before  # same settings: keep the file byte for byte
    return Change(path, before, after, "Claude Code hooks: " + ", ".join(events))


def plan_mcp(root: Path, url: str, mode: str | None, program: list[str]) -> Change:
    path = root / ".mcp.json"
    before, data = _json_file(path)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise CommandError(f'{path}: "mcpServers" is not an object', EXIT_USAGE)
    if mode == "http":
        wanted: dict[str, Any] = {
            "type": "http",
            "url": f"{url}/mcp",
            "headers": {"X-API-Key": "${AGENTLANES_API_KEY}"},
        }
    else:
        wanted = {"command": program[0], "args": [*program[1:], "mcp"]}
    if MCP_NAME not in servers or mode is not None:
        servers[MCP_NAME] = wanted
    after = _dump(data)
    if before is not None and json.loads(before or "{}") == json.loads(after):
        after = before
    return Change(path, before, after, f"MCP server {MCP_NAME!r}")


def init(args: argparse.Namespace) -> int:
    from agentlanes.cli.hook import plan_install, write_hook
    from agentlanes.client.config import find_repo_root, load_config

    found = find_repo_root()
    if found is None:
        raise CommandError("lanes init needs a git repository (run it inside one)", EXIT_USAGE)
    root = Path(found)
    with client_errors():
        cfg = load_config(root)
    program = lanes_program()
    from agentlanes.cli.init_agents import plan_agents, wanted_agents

    agents = wanted_agents(getattr(args, "agent", None), root)
    changes = [plan_config(root, cfg.url)]
    hooks = hook_program(program)
    if "claude" in agents:
        changes += [plan_claude(root, hooks), plan_mcp(root, cfg.url, args.mcp, program)]
    changes += plan_agents(root, agents, hooks)
    hook_changes = []
    for name, what in (
        ("pre-commit", "git pre-commit hook"),
        ("pre-push", "git pre-push hook"),
        ("post-commit", "git post-commit hook"),
    ):
        hook, script, current = plan_install(name)
        hook_changes.append(Change(hook, current, script, what))
    report = []
    for change in [*changes, *hook_changes]:
        entry = {"path": str(change.path), "action": change.action, "what": change.what}
        if args.dry_run and change.action != "unchanged" and change not in hook_changes:
            entry["diff"] = change.diff(root)
        report.append(entry)
    if not args.dry_run:
        for change in changes:
            if change.action != "unchanged":
                change.path.parent.mkdir(parents=True, exist_ok=True)
                change.path.write_text(change.after, encoding="utf-8")
                if getattr(change, "mode", None):
                    change.path.chmod(change.mode)  # type: ignore[attr-defined]
        for hook_change in hook_changes:
            if hook_change.action != "unchanged":
                kept = write_hook(hook_change.path, hook_change.after)
                if kept and not args.json:
                    print(f"kept your existing hook as {kept}; it runs first")
    nothing = all(c["action"] == "unchanged" for c in report)
    from agentlanes.cli.init_agents import hooks_trust

    trust = [] if args.dry_run else hooks_trust(root, agents, args.trust_hooks)
    if args.json:
        emit_json(
            {
                "dry_run": args.dry_run,
                "changed": not nothing,
                "files": report,
                "program": program,
                "agents": agents,
                "hooks_trust": [t.as_json() for t in trust],
            }
        )
        return 0
    if nothing:
        print("nothing to change: this repository is already set up for agentlanes")
        _print_trust(trust)
        return 0
    verb = {"created": "would create", "updated": "would update"} if args.dry_run else {}
    for entry in report:
        if entry["action"] == "unchanged":
            continue
        name = os.path.relpath(entry["path"], root)
        print(f"{verb.get(entry['action'], entry['action'])} {name} ({entry['what']})")
        if entry.get("diff"):
            print(entry["diff"].rstrip("\n"))
    print(
        f"the hooks and the MCP server run {' '.join(program)} by its absolute path (no PATH "
        "needed); run `lanes init` again if you move or reinstall agentlanes"
    )
    if "aider" in agents:
        print(
            "aider: it has no hooks; .aider.conf.yml now says git-commit-verify: true, so the "
            "git pre-commit hook checks its commits (it skips git hooks by default); the "
            "pre-push hook (lanes verify) checks them again before they leave, even those "
            "committed with --no-verify"
        )
    _print_trust(trust)
    if args.dry_run:
        print("dry run: nothing written")
    elif not cfg.api_key:
        print("next: export AGENTLANES_API_KEY=alk_... (the project's key) for every agent")
    return 0


def _print_trust(trust: list[Any]) -> None:
    """What an agent's user must still do before it runs these hooks (or that it will)."""
    for t in trust:
        if t.runs:
            print(f"{t.agent}: its hooks will run here")
        elif t.runs is False:
            print(f"{t.agent}: {t.problem}: until then it edits here unchecked. Once: {t.fix}")
        else:
            print(f"{t.agent}: {t.problem}. Unless done already: {t.fix}")
