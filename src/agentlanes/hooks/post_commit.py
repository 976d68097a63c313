"""The git post-commit hook: after an agent's commit, what it committed stops being its
edits (SPEC "Many agents, one working tree").

Run by the hook ``lanes init`` (and ``lanes hook install``) writes, as the committer (the
agent whose process ran ``git commit``, or ``AGENTLANES_AGENT_NAME``). The files of the
commit and those whose edits the agent last reported are read again (its own lines only,
in a working tree shared with other live agents: ``hooks/edits.own_edits``): lines the
commit holds equal ``HEAD`` now, so they are no one's edits any more. One status change
then sends what changed (a file with none of the agent's uncommitted lines left has
``ranges: []``) and drops from the claims the files that joined them by an edit and have
none of its uncommitted lines left, so others may take them.

It never fails the commit (git ignores a post-commit hook's exit status anyway): every
problem is one line on stderr. ``AGENTLANES_SKIP=1`` skips it. Standard library only.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentlanes.client.config import LocalConfig


def committed_paths(root: str) -> list[str]:
    """The paths ``HEAD``'s commit changed (both sides of a rename; for a first commit,
    all its files)."""
    import subprocess

    argv = ["git", "-c", "core.quotepath=false", "diff-tree", "--root", "--no-commit-id"]
    try:
        done = subprocess.run(
            [*argv, "--name-only", "-r", "--no-renames", "-z", "HEAD"],
            cwd=root,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def after_commit(cfg: LocalConfig, agent: str, session: dict[str, Any]) -> dict[str, Any] | None:
    """Send the committer's edits as they are after its commit, and narrow its claims; the
    status body sent (None: nothing to send)."""
    from agentlanes.hooks.edits import _changes, file_edits, own_edits, pending, record_sent
    from agentlanes.hooks.http import LeanApiError, call

    if cfg.root is None:
        return None
    committed = committed_paths(cfg.root)
    state = pending(cfg, agent)
    held = state.get("sent")
    sent: dict[str, Any] = held if isinstance(held, dict) else {}
    todo = list(dict.fromkeys([*committed, *sent]))
    if not todo:
        return None
    edits = own_edits(cfg, agent, file_edits(cfg.root, todo))
    left = {e["path"] for e in edits if e["ranges"]}
    body: dict[str, Any] = {}
    changes = _changes(edits, sent)
    if changes:
        body["edits"] = changes
    declared = [p for p in session.get("declared_files") or [] if isinstance(p, str)]
    joined = session.get("edit_claims")
    by_edit = set(joined) if isinstance(joined, list) else set(committed)
    done = [p for p in declared if p in committed and p in by_edit and p not in left]
    if done:
        body["declared_files"] = [p for p in declared if p not in done]
    if not body:
        return None
    try:
        result = call(cfg, "POST", "/api/v1/status", body, session["session_token"])
    except LeanApiError as exc:
        if "declared_files" not in body or exc.status != 400:
            raise
        # A server that refuses to leave a session with no claims (declared_files: []):
        # the edits still go; the claims stay until check-out or `lanes release`.
        print(f"agentlanes: claims kept ({exc})", file=sys.stderr)
        body.pop("declared_files")
        if not body:
            return None
        result = call(cfg, "POST", "/api/v1/status", body, session["session_token"])
    if changes:
        record_sent(cfg, agent, session, changes)
    if "declared_files" in body and session.get("source") not in (None, "AGENTLANES_SESSION_TOKEN"):
        from agentlanes.client.config import save_session

        session["declared_files"] = result.get("declared_files", body["declared_files"])
        if isinstance(joined, list):
            session["edit_claims"] = [p for p in joined if p not in done]
        save_session(cfg, session)
    return body


def main(env: dict[str, str] | None = None) -> int:
    env = dict(os.environ) if env is None else env
    if env.get("AGENTLANES_SKIP", "").strip().lower() in ("1", "true", "yes"):
        return 0
    from agentlanes.client.config import ConfigError, load_config, read_session
    from agentlanes.hooks.http import LeanApiError, LeanUnreachable

    try:
        cfg = load_config(None, env)
        session = read_session(cfg, env)
    except ConfigError as exc:
        print(f"agentlanes: {exc}; your edits were not updated after the commit", file=sys.stderr)
        return 0
    agent = session.get("agent_name") if session else None
    if session is None or not isinstance(agent, str) or not cfg.api_key:
        return 0
    try:
        after_commit(cfg, agent, session)
    except (LeanUnreachable, LeanApiError) as exc:
        print(f"agentlanes: your edits were not updated after the commit ({exc})", file=sys.stderr)
    except Exception as exc:  # never a traceback after a commit that is made
        print(f"agentlanes: post-commit: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
