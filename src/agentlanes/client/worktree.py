"""What the agent side reads from the working tree (stdlib only: the hooks import it).

- Directory literals: SPEC "File patterns" reads a slash-less literal (``src/api``) as a
  file for certain and as a directory only *maybe*; a client that can see the tree says
  which it is by sending ``src/api/`` when that path is an existing directory, so the
  claim it makes is certain.
- The files a session changed, as git sees them (modified, added, deleted, renamed and
  untracked), for the check-out of an agent whose edits nobody listed.
- Whether two working trees are worktrees of one repository (``git worktree add``): a file
  in a sibling worktree is the same repository path for the same agent.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# A pattern with any of these is a glob, not a literal path (braces expand to several).
GLOB_CHARS = frozenset("*?[]{}")


def is_literal(pattern: str) -> bool:
    return not GLOB_CHARS.intersection(pattern)


def mark_directories(patterns: Iterable[str], root: str | None) -> tuple[list[str], list[str]]:
    """(the patterns to send, the ones that became ``name/`` because they are directories).

    Patterns are relative to the repository root, whatever directory the agent stands in.
    Globs, patterns that already end in ``/`` and paths that do not exist stay as given.
    """
    sent: list[str] = []
    marked: list[str] = []
    for raw in patterns:
        pattern = raw.strip()
        while pattern.startswith("./"):
            pattern = pattern[2:]
        if (
            root is not None
            and pattern
            and not pattern.endswith("/")
            and not pattern.startswith("/")
            and is_literal(pattern)
            and os.path.isdir(os.path.join(root, pattern))
        ):
            sent.append(pattern + "/")
            marked.append(pattern + "/")
        else:
            sent.append(raw)
    return sent, marked


def changed_files(root: str) -> list[str]:
    """Files that differ from HEAD or are untracked (not ignored), relative to ``root``.

    Both sides of a rename count. Empty when git cannot tell (not a repository, no git).
    """
    import subprocess

    try:
        out = subprocess.run(
            ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all"],
            cwd=root,
            capture_output=True,
            check=True,
            timeout=30,
        ).stdout.decode("utf-8", "surrogateescape")
    except (OSError, subprocess.SubprocessError):
        return []
    files: list[str] = []
    entries = out.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        files.append(path)
        if "R" in status or "C" in status:
            # -z puts a rename's old path in the next entry.
            if i < len(entries) and entries[i]:
                files.append(entries[i])
            i += 1
    return sorted(set(files))


def common_dir(root: str) -> str:
    """The git directory shared by all worktrees of the repository at ``root``: a linked
    worktree's own git dir names it in its ``commondir`` file."""
    from agentlanes.client.config import git_dir

    own = git_dir(root)
    try:
        with open(os.path.join(own, "commondir"), encoding="utf-8") as fh:
            shared = fh.read().strip()
    except OSError:
        return os.path.realpath(own)
    return os.path.realpath(os.path.join(own, shared))


def same_repository(root: str, other: str) -> bool:
    """``root`` and ``other`` are worktrees of one repository."""
    return common_dir(root) == common_dir(other)
