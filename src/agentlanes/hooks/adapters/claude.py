"""Claude Code's hook (``lanes guard``): the guard itself (``agentlanes.hooks.guard``),
unless Cursor runs it.

Cursor also runs Claude Code's hooks from ``.claude/settings.json`` (``adapters/cursor.py``
says how it is told apart); such an event is answered by the Cursor adapter, so one tool
call is checked once whichever configs are present. The look at the event is cheap (no
import) for Claude Code's own events. The guard stays below the adapters: it imports none
of them.
"""

from __future__ import annotations

import io
import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

CURSOR_FIELDS = ("cursor_version", "conversation_id", "workspace_roots")


def _cursor_maybe(payload: Any) -> bool:
    """A first look (no import) for an event Cursor may have sent."""
    if isinstance(payload, dict) and not payload.keys().isdisjoint(CURSOR_FIELDS):
        return True
    return "CURSOR_VERSION" in os.environ


def run(stdin: TextIO | None = None, stdout: TextIO | None = None, allow: bool = False) -> int:
    """Read the event, write the answer; always 0 (exit 2 would block the tool call)."""
    from agentlanes.hooks import guard

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    raw = stdin.read()
    try:
        payload = json.loads(raw or "null")
    except ValueError:
        payload = None  # the guard says what is wrong with it
    if _cursor_maybe(payload):
        from agentlanes.hooks.adapters.cursor import from_claude_config, runs_under_cursor

        try:
            if runs_under_cursor(payload, os.environ):
                done = from_claude_config(payload, os.environ)
                if done.out:
                    stdout.write(json.dumps(done.out) + "\n")
                return 0
        except Exception as exc:  # a bug of ours must not stop the agent's work
            print(
                f"agentlanes guard: internal error ({type(exc).__name__}: {exc}); not checked",
                file=sys.stderr,
            )
            return 0
    return guard.run(io.StringIO(raw), stdout, allow=allow)


def main(argv: list[str] | None = None) -> int:
    from agentlanes.hooks import guard

    argv = sys.argv[1:] if argv is None else argv
    if "-h" in argv or "--help" in argv or [a for a in argv if a != "--allow"]:
        return guard.main(argv)  # its usage and its errors
    return run(allow="--allow" in argv)
