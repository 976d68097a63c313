"""``lanes hook install | uninstall | run``: the git hooks.

``install`` writes three hooks into the hooks directory git really uses (it honours
``core.hooksPath``): ``pre-commit`` (the staged paths, ``agentlanes.hooks.githook``),
``pre-push`` (the pushed commits' files, ``lanes verify``: ``agentlanes.hooks.verify``;
``git commit --no-verify`` does not skip it) and ``post-commit`` (the committed lines
leave the committer's edits: ``agentlanes.hooks.post_commit``). An existing hook that is
not ours is kept as ``<name>.agentlanes-chained`` and runs first (a pre-push hook gets
git's stdin too); installing twice changes nothing, and ``uninstall`` puts the old hooks
back. ``run`` is the pre-commit check itself (the pre-commit framework's entry point, see
``.pre-commit-hooks.yaml``).
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
PUSH_HOOK_NAME = "pre-push"
POST_COMMIT_NAME = "post-commit"
# Every hook install writes, in order: pre-commit first (the JSON's top level is its own).
HOOK_NAMES = (HOOK_NAME, PUSH_HOOK_NAME, POST_COMMIT_NAME)
CHAINED_SUFFIX = ".agentlanes-chained"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "hook", help="the git pre-commit and pre-push hooks: install, uninstall, run"
    )
    hsub = p.add_subparsers(dest="hook_command", metavar="ACTION")
    hsub.required = True
    i = hsub.add_parser(
        "install", help="install the pre-commit and pre-push hooks in this repository"
    )
    add_json(i)
    i.set_defaults(func=install)
    u = hsub.add_parser("uninstall", help="remove them (and put back the hooks they chained)")
    add_json(u)
    u.set_defaults(func=uninstall)
    r = hsub.add_parser("run", help="check the staged paths now (what pre-commit runs)")
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


def hook_script(
    python: str,
    package_root: str,
    name: str = HOOK_NAME,
    module: str = "agentlanes.hooks.githook",
) -> str:
    """The hook: run a chained hook first, then the check with this very interpreter (the
    pre-commit check, or ``module`` for the hook ``name``: the post-commit hook's update
    of the committer's edits).

    ``python -S`` skips ``site`` (and every ``.pth`` file) to start faster; the check needs
    only the standard library and this package, whose directory goes on PYTHONPATH.
    """
    py = shlex.quote(python)
    root = shlex.quote(package_root)
    return f"""#!/bin/sh
{MARKER}
# Installed by `lanes hook install`; `lanes hook uninstall` removes it.
# Skip once: AGENTLANES_SKIP=1 git commit ...   (or git commit --no-verify)
chained="$(dirname "$0")/{name + CHAINED_SUFFIX}"
if [ -x "$chained" ]; then
  "$chained" "$@" || exit $?
fi
if [ -x {py} ] && [ -d {root} ]; then
  PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}} exec {py} -S -m {module}
fi
echo "agentlanes: {python} is gone; commit not checked (run lanes hook install again)" >&2
exit 0
"""


def push_hook_script(python: str, package_root: str) -> str:
    """The pre-push hook: ``lanes verify`` over what git says it pushes.

    git gives the hook the remote's name and URL as arguments and one line per pushed ref
    on stdin (https://git-scm.com/docs/githooks#_pre_push): read once, then given to a
    chained hook and to the check alike.
    """
    py = shlex.quote(python)
    root = shlex.quote(package_root)
    chained = PUSH_HOOK_NAME + CHAINED_SUFFIX
    return f"""#!/bin/sh
{MARKER}
# Installed by `lanes hook install` (or `lanes init`); `lanes hook uninstall` removes it.
# Checks the files of the pushed commits against other live sessions' edits (lanes verify).
# Skip once: AGENTLANES_SKIP=1 git push ...   (or git push --no-verify)
input="$(cat)"
replay() {{ [ -z "$input" ] || printf '%s\\n' "$input"; }}
chained="$(dirname "$0")/{chained}"
if [ -x "$chained" ]; then
  replay | "$chained" "$@" || exit $?
fi
if [ -x {py} ] && [ -d {root} ]; then
  replay | PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}} {py} -S -m agentlanes.hooks.verify "$@"
  exit $?
fi
echo "agentlanes: {python} is gone; push not checked (run lanes hook install again)" >&2
exit 0
"""


def is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def plan_install(name: str = HOOK_NAME) -> tuple[Path, str, str | None]:
    """(the hook's path, the script it should hold, what it holds now or None)."""
    import agentlanes

    hook = hooks_dir() / name
    root = str(Path(agentlanes.__file__).resolve().parent.parent)
    if name == PUSH_HOOK_NAME:
        script = push_hook_script(sys.executable, root)
    elif name == POST_COMMIT_NAME:
        script = hook_script(sys.executable, root, name, "agentlanes.hooks.post_commit")
    else:
        script = hook_script(sys.executable, root)
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
    chained = directory / (hook.name + CHAINED_SUFFIX)
    kept = None
    if (hook.exists() or hook.is_symlink()) and not is_ours(hook):
        if chained.exists():
            raise CommandError(
                f"{hook} is not ours and {chained} already exists: move one of them away",
                EXIT_USAGE,
            )
        hook.rename(chained)
        kept = chained
    tmp = hook.with_name(hook.name + ".agentlanes-tmp")
    tmp.write_text(script, encoding="utf-8")
    tmp.chmod(0o755)
    os.replace(tmp, hook)
    return kept


def install(args: argparse.Namespace) -> int:
    done = []
    for name in HOOK_NAMES:
        hook, script, current = plan_install(name)
        changed = current != script
        kept = write_hook(hook, script) if changed else None
        chained = hook.parent / (name + CHAINED_SUFFIX)
        done.append(
            {
                "name": name,
                "hook": str(hook),
                "changed": changed,
                "chained": str(chained) if chained.exists() else None,
                "kept": kept,
            }
        )
    if args.json:
        hooks = [{k: v for k, v in d.items() if k != "kept"} for d in done]
        # The top level is the pre-commit hook's, as before the pre-push hook came.
        emit_json({**{k: v for k, v in hooks[0].items() if k != "name"}, "hooks": hooks})
        return 0
    for d in done:
        if d["kept"]:
            print(f"kept your existing hook as {d['kept']}; it runs first")
        print(f"{'installed' if d['changed'] else 'already installed'}: {d['hook']}")
    return 0


def uninstall(args: argparse.Namespace) -> int:
    directory = hooks_dir()
    done = []
    for name in HOOK_NAMES:
        hook, chained = directory / name, directory / (name + CHAINED_SUFFIX)
        removed = restored = False
        if is_ours(hook):
            hook.unlink()
            removed = True
            if chained.exists() or chained.is_symlink():
                chained.rename(hook)
                restored = True
        done.append(
            {"name": name, "hook": str(hook), "removed": removed, "restored_chained": restored}
        )
    if args.json:
        emit_json({**{k: v for k, v in done[0].items() if k != "name"}, "hooks": done})
        return 0
    if not any(d["removed"] for d in done):
        print(f"no agentlanes hook in {directory}")
    for d in done:
        if d["removed"]:
            back = "; your previous hook is back" if d["restored_chained"] else ""
            print(f"removed {d['hook']}{back}")
    return 0


def run(args: argparse.Namespace) -> int:
    from agentlanes.hooks.githook import check

    return check()
