"""``lanes hook install | uninstall | run``: the git pre-commit hook.

``install`` writes ``pre-commit`` into the hooks directory git really uses (it honours
``core.hooksPath``). An existing hook that is not ours is kept as
``pre-commit.agentlanes-chained`` and runs first; installing twice changes nothing, and
``uninstall`` puts the old hook back. ``run`` is the check itself (the pre-commit
framework's entry point, see ``.pre-commit-hooks.yaml``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

from agentlanes.cli.errors import EXIT_USAGE, CommandError
from agentlanes.cli.output import add_json, emit_json

MARKER = "# agentlanes-managed-hook"
HOOK_NAME = "pre-commit"
CHAINED_NAME = "pre-commit.agentlanes-chained"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("hook", help="the git pre-commit hook: install, uninstall, run")
    hsub = p.add_subparsers(dest="hook_command", metavar="ACTION")
    hsub.required = True
    i = hsub.add_parser("install", help="install the pre-commit hook in this repository")
    add_json(i)
    i.set_defaults(func=install)
    u = hsub.add_parser("uninstall", help="remove it (and put back a hook it chained)")
    add_json(u)
    u.set_defaults(func=uninstall)
    r = hsub.add_parser("run", help="check the staged paths now (what the hook runs)")
    r.set_defaults(func=run, json=False)


def hooks_dir() -> Path:
    """The hooks directory git uses here, ``core.hooksPath`` included."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-path", "hooks"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except FileNotFoundError:
        raise CommandError("git is not installed", EXIT_USAGE) from None
    except subprocess.CalledProcessError as exc:
        raise CommandError(f"not in a git repository ({exc.stderr.strip()})", EXIT_USAGE) from None
    return Path(out)


def hook_script(python: str, package_root: str) -> str:
    """The hook: run a chained hook first, then the check with this very interpreter.

    ``python -S`` skips ``site`` (and every ``.pth`` file) to start faster; the check needs
    only the standard library and this package, whose directory goes on PYTHONPATH.
    """
    py = shlex.quote(python)
    root = shlex.quote(package_root)
    return f"""#!/bin/sh
{MARKER}
# Installed by `lanes hook install`; `lanes hook uninstall` removes it.
# Skip once: AGENTLANES_SKIP=1 git commit ...   (or git commit --no-verify)
chained="$(dirname "$0")/{CHAINED_NAME}"
if [ -x "$chained" ]; then
  "$chained" "$@" || exit $?
fi
if [ -x {py} ] && [ -d {root} ]; then
  PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}} exec {py} -S -m agentlanes.hooks.githook
fi
echo "agentlanes: {python} is gone; commit not checked (run lanes hook install again)" >&2
exit 0
"""


def is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def plan_install() -> tuple[Path, str, str | None]:
    """(the hook's path, the script it should hold, what it holds now or None)."""
    import agentlanes

    hook = hooks_dir() / HOOK_NAME
    script = hook_script(sys.executable, str(Path(agentlanes.__file__).resolve().parent.parent))
    try:
        current = hook.read_text(encoding="utf-8") if hook.exists() else None
    except OSError:
        current = None
    return hook, script, current


def write_hook(hook: Path, script: str) -> Path | None:
    """Install ``script`` as the hook; an existing hook that is not ours is chained (its new
    path is returned). Raises CommandError when that would overwrite a chained hook."""
    directory = hook.parent
    directory.mkdir(parents=True, exist_ok=True)
    chained = directory / CHAINED_NAME
    kept = None
    if (hook.exists() or hook.is_symlink()) and not is_ours(hook):
        if chained.exists():
            raise CommandError(
                f"{hook} is not ours and {chained} already exists: move one of them away",
                EXIT_USAGE,
            )
        hook.rename(chained)
        kept = chained
    tmp = hook.with_name(HOOK_NAME + ".agentlanes-tmp")
    tmp.write_text(script, encoding="utf-8")
    tmp.chmod(0o755)
    os.replace(tmp, hook)
    return kept


def install(args: argparse.Namespace) -> int:
    hook, script, current = plan_install()
    changed = current != script
    kept = write_hook(hook, script) if changed else None
    chained = hook.parent / CHAINED_NAME
    if args.json:
        emit_json(
            {
                "hook": str(hook),
                "changed": changed,
                "chained": str(chained) if chained.exists() else None,
            }
        )
        return 0
    if kept:
        print(f"kept your existing hook as {kept}; it runs first")
    print(f"{'installed' if changed else 'already installed'}: {hook}")
    return 0


def uninstall(args: argparse.Namespace) -> int:
    directory = hooks_dir()
    hook, chained = directory / HOOK_NAME, directory / CHAINED_NAME
    removed = restored = False
    if is_ours(hook):
        hook.unlink()
        removed = True
        if chained.exists() or chained.is_symlink():
            chained.rename(hook)
            restored = True
    if args.json:
        emit_json({"hook": str(hook), "removed": removed, "restored_chained": restored})
        return 0
    if not removed:
        print(f"no agentlanes hook in {directory}")
    else:
        print(f"removed {hook}" + ("; your previous hook is back" if restored else ""))
    return 0


def run(args: argparse.Namespace) -> int:
    from agentlanes.hooks.githook import check

    return check()
