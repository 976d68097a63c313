"""One guard core under every agent's hook adapter (SPEC "Every coding agent").

Each adapter (``agentlanes.hooks.adapters.<agent>``) reads its agent's event JSON and
asks this core the same questions the Claude Code guard answers
(``agentlanes.hooks.guard``), with the same functions, so the rules stay one:

- ``start``: check in as ``<agent>-<its session id>`` (``agent_session.session_start``);
- ``check``: the files a tool call will change, checked against the other live sessions
  (``guard.decide``): a certain overlap with an older claim in a ``block`` project is
  refused, anything else passes (a warning as context), reads are never refused, an
  unreachable server passes unless ``fail_closed``; the files then join the claims;
- ``news``: the agent's unseen news (``news.take``), for the agents with a channel;
- ``edited``: after a tool call, the files it changed are noted and their line ranges
  against ``HEAD`` reported as ``edits`` within a second (``agentlanes.hooks.edits``);
  ``flush`` sends what is still waiting at the end of a turn;
- ``end``: check out (``agent_session.session_end``).

The agent is named ``<agent>-<session id>`` (``AGENTLANES_AGENT_NAME`` wins when set),
so two agents in one checkout keep two sessions; an event without a session id names
the agent after its process id (the process that runs the hook's shell).
Standard library only, like the guard.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from agentlanes.hooks.apply_patch import patch_paths  # noqa: F401 - the adapters' face

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Answer:
    """What the hook prints on stdout (JSON, or nothing), on stderr, and its exit code."""

    def __init__(self, out: Any = None, code: int = 0, err: str = "") -> None:
        self.out = out
        self.code = code
        self.err = err


class Verdict:
    """The core's answer to one tool call: ``deny`` (the reason) or ``context`` (notes)."""

    def __init__(self, deny: str | None = None, context: str | None = None) -> None:
        self.deny = deny
        self.context = context

    def __repr__(self) -> str:
        return f"Verdict(deny={self.deny!r}, context={self.context!r})"


def safe_id(raw: Any) -> str | None:
    if not isinstance(raw, str | int) or not str(raw).strip():
        return None
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in str(raw).strip())


def agent_name(agent: str, sid: Any, env: Mapping[str, str] | None = None, cwd: Any = None) -> str:
    """``<agent>-<session id>`` (64 characters at most). An event without an id (Copilot
    CLI's tool events may carry none) acts for the agent's local session whose recorded
    process is an ancestor of this hook (its session start recorded it); else the
    agent is named after its process, ``<agent>-pid<N>``."""
    environ: Mapping[str, str] = os.environ if env is None else env
    named = (environ.get("AGENTLANES_AGENT_NAME") or "").strip()
    if named:
        return named
    safe = safe_id(sid)
    if safe is None:
        mine = _session_by_ancestry(agent, cwd, environ)
        if mine:
            return mine
        from agentlanes.client.identity import agent_process

        found = agent_process(env)
        safe = f"pid{found[0]}" if found else f"pid{os.getppid()}"
    return f"{agent}-{safe}"[:64]


def _session_by_ancestry(agent: str, cwd: Any, env: Mapping[str, str]) -> str | None:
    from agentlanes.client.config import ConfigError, find_repo_root, list_sessions, load_config
    from agentlanes.client.identity import session_by_ancestry

    root = find_repo_root(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if root is None:
        return None
    try:
        sessions = list_sessions(load_config(root, env))
    except (ConfigError, OSError):
        return None
    ours = [s for s in sessions if str(s.get("agent_name") or "").startswith(agent + "-")]
    found = session_by_ancestry(ours)
    return str(found["agent_name"]) if found else None


def agent_env(
    agent: str, sid: Any, env: dict[str, str] | None = None, cwd: Any = None
) -> dict[str, str]:
    """The environment the guard's functions see: the agent named for this event."""
    env = dict(os.environ if env is None else env)
    env["AGENTLANES_AGENT_NAME"] = agent_name(agent, sid, env, cwd)
    return env


def _payload(sid: Any, cwd: Any, event: str, **fields: Any) -> dict[str, Any]:
    base = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    return {"session_id": str(sid or ""), "cwd": base, "hook_event_name": event, **fields}


def _context_of(answer: dict[str, Any]) -> str | None:
    out = answer.get("hookSpecificOutput") or {}
    text = out.get("additionalContext")
    return text if isinstance(text, str) and text else None


def start(agent: str, sid: Any, cwd: Any, env: dict[str, str] | None = None) -> str | None:
    """Check in (or keep a resumed session); the text for the agent's context."""
    from agentlanes.hooks.agent_session import session_start

    payload = _payload(sid, cwd, "SessionStart", agentlanes_tool=agent)
    return _context_of(session_start(payload, agent_env(agent, sid, env, cwd)))


# How long a tool event waits for a start hook's check-in still under way before its own.
START_WAIT_SECONDS = 3.0


def start_marked(agent: str, sid: Any, cwd: Any, env: dict[str, str] | None = None) -> None:
    """Check in from a start event whose answer the program does not read (Cline 3 runs
    ``agent_start`` detached; OpenCode's ``session.created`` is an event, not a hook):
    marked as under way (``.starting``) for the tool events that may come meanwhile, and
    the text kept for the agent's next context channel (``hold``)."""
    mark = side_file(agent, sid, cwd, ".starting", env)
    try:
        if mark is not None:
            os.makedirs(os.path.dirname(mark), exist_ok=True)
            with open(mark, "w"):
                pass
        text = start(agent, sid, cwd, env)
        if text:
            hold(agent, sid, cwd, text, env)
    finally:
        if mark is not None and os.path.exists(mark):
            os.unlink(mark)


def ensure_started(agent: str, sid: Any, cwd: Any, env: dict[str, str] | None = None) -> str | None:
    """Before a tool call is decided, the agent is checked in: while a start event is still
    at it (``start_marked``'s mark), wait for it (at most START_WAIT_SECONDS), else check
    in now (a resumed conversation, a start event that never came); the text for the
    agent's context when this call checked in, else None."""
    import time

    mark = side_file(agent, sid, cwd, ".starting", env)
    deadline = time.monotonic() + START_WAIT_SECONDS
    while not has_session(agent, sid, cwd, env):
        if mark is None or not os.path.exists(mark) or time.monotonic() >= deadline:
            return start(agent, sid, cwd, env)
        time.sleep(0.02)
    return None


def has_session(agent: str, sid: Any, cwd: Any, env: dict[str, str] | None = None) -> bool:
    """Whether the agent keeps a local session in this repository (its check-in is done);
    True outside a repository, where there is nothing to wait for."""
    path = side_file(agent, sid, cwd, ".json", env)
    return path is None or os.path.exists(path)


def end(agent: str, sid: Any, cwd: Any, env: dict[str, str] | None = None) -> None:
    """Check out with the changed files this session claims."""
    from agentlanes.hooks.agent_session import session_end

    payload = _payload(sid, cwd, "SessionEnd", agentlanes_tool=agent)
    session_end(payload, agent_env(agent, sid, env, cwd))


def check(
    agent: str,
    sid: Any,
    cwd: Any,
    tool: str,
    tool_input: dict[str, Any],
    env: dict[str, str] | None = None,
    with_news: bool = False,
) -> Verdict:
    """A tool call in Claude Code's terms (``Write`` with ``file_path``, ``Bash`` with
    ``command``, ``apply_patch`` with the patch in ``command``), decided by the guard."""
    from agentlanes.hooks.guard import decide, news_wanted

    e = agent_env(agent, sid, env, cwd)
    payload = _payload(sid, cwd, "PreToolUse", tool_name=tool, tool_input=tool_input)
    answer = decide(payload, e)
    out = answer.get("hookSpecificOutput") or {}
    if out.get("permissionDecision") == "deny":
        return Verdict(deny=str(out.get("permissionDecisionReason") or "agentlanes: refused"))
    notes = [_context_of(answer)] if _context_of(answer) else []
    if with_news and news_wanted(answer):
        from agentlanes.hooks.news import take

        try:
            notes.extend(take(payload, e))
        except Exception as exc:  # the news never costs the guard its answer
            print(f"agentlanes guard: news skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
    return Verdict(context="\n".join(n for n in notes if n) or None)


def edited(
    agent: str,
    sid: Any,
    cwd: Any,
    tool: str,
    tool_input: dict[str, Any],
    env: dict[str, str] | None = None,
) -> None:
    """After a tool call, in Claude Code's terms (as ``check``): the files it changed are
    noted and their edits sent within a second (``agentlanes.hooks.edits``)."""
    from agentlanes.hooks.guard import note_edits

    payload = _payload(sid, cwd, "PostToolUse", tool_name=tool, tool_input=tool_input)
    note_edits(payload, agent_env(agent, sid, env, cwd))


def flush(agent: str, sid: Any, cwd: Any, env: dict[str, str] | None = None) -> None:
    """At the end of the agent's turn: the edits still waiting are sent now."""
    from agentlanes.hooks.guard import flush_edits

    flush_edits(_payload(sid, cwd, "Stop"), agent_env(agent, sid, env, cwd))


def news(agent: str, sid: Any, cwd: Any, env: dict[str, str] | None = None) -> str | None:
    """The agent's unseen news as one text (marked seen), after what ``hold`` kept for it,
    or None."""
    from agentlanes.hooks.news import take

    e = agent_env(agent, sid, env, cwd)
    kept = _held(e["AGENTLANES_AGENT_NAME"], cwd, take=True)
    lines = take(_payload(sid, cwd, "PostToolUse"), e)
    return "\n".join([*kept, *lines]) or None


def hold(agent: str, sid: Any, cwd: Any, text: str, env: dict[str, str] | None = None) -> None:
    """Keep ``text`` (the guard's warning on a tool call it let through) for the agent's
    next context channel: for an agent whose before-tool event has none (Gemini CLI's
    ``BeforeTool``), ``news`` puts it in the context of its ``AfterTool`` or
    ``BeforeAgent``, so a warn-mode overlap reaches it too."""
    path = _held_file(agent_env(agent, sid, env, cwd)["AGENTLANES_AGENT_NAME"], cwd)
    if path is None:
        return
    try:
        from agentlanes.client.private_files import private_open

        with os.fdopen(private_open(path, "a"), "a", encoding="utf-8") as fh:
            fh.write(text.rstrip("\n")[:4000] + "\n")
    except OSError:
        pass


def _held_file(name: str, cwd: Any) -> str | None:
    """``sessions/<agent>.held.txt`` beside the agent's session file."""
    return _beside_session(name, cwd, ".held.txt")


def side_file(
    agent: str, sid: Any, cwd: Any, suffix: str, env: dict[str, str] | None = None
) -> str | None:
    """``sessions/<agent><suffix>``: the agent's session file (``.json``) or a file kept
    beside it; None outside a repository."""
    return _beside_session(agent_env(agent, sid, env, cwd)["AGENTLANES_AGENT_NAME"], cwd, suffix)


def _beside_session(name: str, cwd: Any, suffix: str) -> str | None:
    from agentlanes.client.config import ConfigError, LocalConfig, find_repo_root

    root = find_repo_root(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    try:
        session_file = LocalConfig(root).session_file(name) if root else None
    except ConfigError:
        return None
    return None if session_file is None else session_file[: -len(".json")] + suffix


def _held(name: str, cwd: Any, take: bool) -> list[str]:
    path = _held_file(name, cwd)
    if path is None or not os.path.exists(path):
        return []
    try:
        with open(path, encoding="utf-8") as fh:
            lines = [line for line in fh.read().splitlines() if line]
        if take:
            os.unlink(path)
    except OSError:
        return []
    return list(dict.fromkeys(lines))[-20:]


def urgent(agent: str, sid: Any, cwd: Any, env: dict[str, str] | None = None) -> str | None:
    """At the agent's stop: the news, when something needs the agent first (an
    undelivered message, an unseen certain overlap), else None (``news.stop``)."""
    from agentlanes.hooks.news import stop

    answer = stop(_payload(sid, cwd, "Stop"), agent_env(agent, sid, env, cwd))
    reason = answer.get("reason") if answer.get("decision") == "block" else None
    return reason if isinstance(reason, str) and reason else None


# The tools that replace a whole file, by every agent's name for them: each becomes
# Claude Code's ``Write`` (with its content), so the guard checks it for a stale write
# (SPEC "Many agents, one working tree"); an agent's other file tools are anchored edits
# (``Edit``). Its read tools become ``Read``: the guard notes the read, never refuses it.
WHOLE_FILE_TOOLS = frozenset({"Write", "write_file", "write", "create", "write_to_file"})
READ_TOOLS = frozenset({"Read", "read_file", "read"})


def file_call(
    tool: Any,
    args: Any,
    *,
    file_tools: frozenset[str] = frozenset(),
    shell_tools: frozenset[str] = frozenset(),
    patch_tools: frozenset[str] = frozenset(),
    path_keys: tuple[str, ...] = ("file_path", "path"),
    patch_keys: tuple[str, ...] = ("input", "patch", "command"),
) -> tuple[str, dict[str, Any]] | None:
    """An agent's tool call that changes or reads files, in Claude Code's terms, or None
    (searches, other tools): a shell tool with a ``command`` is ``Bash``; a patch tool is
    ``apply_patch`` with the first of ``patch_keys`` that is set as its ``command``; a
    file tool with a path (the first of ``path_keys`` that is set) is ``Write`` (with its
    ``content``) when it replaces the whole file (``WHOLE_FILE_TOOLS``), else ``Edit``;
    a read tool (``READ_TOOLS``) is ``Read``. Each adapter names its agent's tools and
    argument keys; the rule is this one."""
    args = args if isinstance(args, dict) else {}
    if tool in shell_tools and isinstance(args.get("command"), str):
        return "Bash", {"command": args["command"]}
    if tool in patch_tools:
        return "apply_patch", {"command": _first(args, patch_keys)}
    path = _first(args, path_keys)
    if not isinstance(path, str) or not path:
        return None
    if tool in file_tools:
        if tool in WHOLE_FILE_TOOLS:
            content = args.get("content")
            return "Write", {
                "file_path": path,
                **({"content": content} if isinstance(content, str) else {}),
            }
        return "Edit", _anchored(path, args)
    if tool in READ_TOOLS:
        return "Read", {"file_path": path}
    return None


def _anchored(path: str, args: dict[str, Any]) -> dict[str, Any]:
    """An anchored edit in Claude Code's terms: its file, and what it replaces with what
    when the agent says (Gemini CLI's ``replace``: ``old_string``, ``new_string``,
    ``expected_replacements``), so that under ``block_on = lines`` the guard can tell
    the lines it is about to change."""
    edit: dict[str, Any] = {"file_path": path}
    old, new = args.get("old_string"), args.get("new_string")
    if isinstance(old, str) and isinstance(new, str):
        edit.update(old_string=old, new_string=new)
        many = args.get("expected_replacements")
        if args.get("replace_all") is True or (isinstance(many, int) and many > 1):
            edit["replace_all"] = True
    return edit


def _first(args: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """``args[k1] or args[k2] or ...``: the first value that is set, else the last one."""
    value = None
    for key in keys:
        value = args.get(key)
        if value:
            break
    return value


def first_root(roots: Any) -> str | None:
    """The first workspace root of a list (Cursor ``workspace_roots``, Cline
    ``workspaceRoots``)."""
    if isinstance(roots, list):
        for root in roots:
            if isinstance(root, str) and root:
                return root
    return None
