"""The hooks' fast path: ``python -S -I agentlanes/hooks/fast.py PROGRAM guard --agent
NAME`` behaves as ``PROGRAM guard --agent NAME`` does, in a fraction of the time.

A coding agent runs its hooks twice for every tool call (before and after it), each a
new process; an interpreter that imports the guard, its client and its rules spends most
of its time starting. The agent's keepalive (``lanes keepalive --socket``, started at
check-in, alive as long as the agent) has all of that loaded already: it answers hook
events on a unix socket of its own (``agentlanes.hooks.served``), with the very code
``lanes guard`` runs, in the hook's environment and working directory. This file is the
other end: it starts without ``site`` (``-S -I``) and imports only built-in C modules
(``_json``, ``_socket``, ``zlib``: about 1 ms beside the 6 ms of ``json``, ``socket`` and
``hashlib``), finds the keepalive of the agent an event belongs to, hands it the event,
and prints its answer.

Only tool events are served, and only when the event names its session (so the agent is
known without asking the process tree). Anything else — a session start or end, an event
without a session id, no keepalive, a socket that fails, ``AGENTLANES_FAST_HOOKS=0`` —
runs ``PROGRAM ...`` itself, as the hook did before: the same answer, only slower.
Standard library only, and nothing of agentlanes: it runs before ``site`` would find it.
"""

from __future__ import annotations

import _json  # the C parts of json: ``json`` itself imports ``re`` (6 ms more)
import _socket  # ``socket`` imports ``enum`` and ``selectors`` (7 ms more)
import os
import sys
import zlib

# agent -> (the field of its events that names its session, how its agent name is made
# from it, the events that are tool calls: ``--event`` or the event's own field).
SESSION_FIELD = {
    "claude": "session_id",
    "codex": "session_id",
    "gemini": "session_id",
    "copilot": "sessionId",
    "cline": "taskId",
    "opencode": "session_id",
}
TOOL_EVENTS = frozenset(
    {
        "PreToolUse", "PostToolUse",  # Claude Code, Codex, the Cline extension
        "BeforeTool", "AfterTool",  # Gemini CLI
        "preToolUse", "postToolUse",  # Copilot CLI (``--event``)
        "tool_call", "tool_result",  # Cline 3
        "tool.execute.before", "tool.execute.after",  # OpenCode
    }
)  # fmt: skip
EVENT_FIELDS = ("hook_event_name", "hookName", "event")
NAME_MAX = 64
ALLOWED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
CONNECT_SECONDS = 0.5
ANSWER_SECONDS = 60.0  # the guard's own calls have their timeouts; this only stops a hang
CURSOR_FIELDS = ("cursor_version", "conversation_id", "workspace_roots")


class _Decoding:
    """What ``_json.make_scanner`` asks of a decoder (``json.JSONDecoder``'s defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name)


_scan = _json.make_scanner(_Decoding())  # type: ignore[arg-type]


def loads(text: str) -> object:
    """``json.loads`` of a document (ValueError when it is not one)."""
    start = len(text) - len(text.lstrip())
    try:
        value, end = _scan(text, start)
    except Exception:  # StopIteration, JSONDecodeError, or a SystemError of the scanner's
        raise ValueError("not JSON") from None
    if text[end:].strip():
        raise ValueError("extra data after the JSON value")
    return value


def dumps(value: object) -> str:
    """``json.dumps`` of strings, ints, lists and dicts of them (the request)."""
    if isinstance(value, str):
        return _json.encode_basestring_ascii(value)
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{dumps(str(k))}:{dumps(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot encode {type(value).__name__}")


def agent_name(agent: str, sid: str, env: dict[str, str]) -> str:
    """The agent an event acts for, as the guard names it (``AGENTLANES_AGENT_NAME``,
    else Claude Code's ``claude-<session id>``, the others' ``<agent>-<session id>``)."""
    named = (env.get("AGENTLANES_AGENT_NAME") or "").strip()
    if named:
        return named
    if agent == "claude":  # hooks/agent_name.py
        return ("claude-" + "".join(c if c in ALLOWED else "-" for c in sid.strip()))[:NAME_MAX]
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in sid.strip())  # adapters/core
    return f"{agent}-{safe}"[:NAME_MAX]


def state_dir(start: str) -> str | None:
    """``<git dir>/agentlanes`` of the repository holding ``start`` (as
    ``client.config.LocalConfig.state_dir`` finds it), or None."""
    here = os.path.realpath(start)
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.exists(dot_git):
            break
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    if os.path.isfile(dot_git):
        with open(dot_git, encoding="utf-8", errors="replace") as fh:
            text = fh.read().strip()
        if text.startswith("gitdir:"):
            dot_git = os.path.realpath(os.path.join(here, text.partition(":")[2].strip()))
    return os.path.join(dot_git, "agentlanes")


def socket_dir() -> str:
    """A directory of this user's only (unix socket paths are short: the repository's own
    may be too long), ``$XDG_RUNTIME_DIR/agentlanes`` or ``/tmp/agentlanes-<uid>``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, "agentlanes")
    return os.path.join("/tmp", f"agentlanes-{os.getuid()}")


def socket_path(state: str, agent: str) -> str:
    """Where the keepalive of ``agent`` in the repository of ``state`` answers hooks:
    ``<crc32 of state>-<agent>.sock`` (short enough for a unix socket's path; the
    keepalive checks that a request is for its repository and agent, so a checksum that
    two repositories share cannot mix their hooks up)."""
    key = f"{zlib.crc32(state.encode()):08x}"
    return os.path.join(socket_dir(), f"{key}-{agent}.sock")


def private_dir_ok(path: str) -> bool:
    """The socket's directory is this user's and no one else's (no one else could have
    put a listener there to read the events, and the environment they carry)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o077


def _option(argv: list[str], name: str) -> str | None:
    for i, word in enumerate(argv):
        if word == name and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(name + "="):
            return word.partition("=")[2]
    return None


def served_by(argv: list[str], raw: bytes, env: dict[str, str]) -> str | None:
    """The socket of the keepalive that may answer this hook, or None (run it here)."""
    if env.get("AGENTLANES_FAST_HOOKS") == "0" or "guard" not in argv:
        return None
    guard_args = argv[argv.index("guard") + 1 :]
    agent = _option(guard_args, "--agent") or "claude"
    if agent == "claude-code":
        agent = "claude"
    field = SESSION_FIELD.get(agent)
    if field is None or any(a in ("-h", "--help", "--allow") for a in guard_args):
        return None
    try:
        payload = loads(raw.decode("utf-8"))
    except ValueError:
        return None  # the guard says what is wrong with it
    if not isinstance(payload, dict):
        return None
    if agent == "claude" and (
        "CURSOR_VERSION" in env or not payload.keys().isdisjoint(CURSOR_FIELDS)
    ):
        return None  # Cursor running Claude Code's hooks (adapters/claude.py decides)
    event = _option(guard_args, "--event") or next(
        (payload[f] for f in EVENT_FIELDS if isinstance(payload.get(f), str)), None
    )
    sid = payload.get(field)
    if event not in TOOL_EVENTS or not isinstance(sid, str) or not sid.strip():
        return None
    roots = payload.get("workspaceRoots")
    cwd = payload.get("cwd") or (roots[0] if isinstance(roots, list) and roots else None)
    state = state_dir(cwd if isinstance(cwd, str) and os.path.isdir(cwd) else os.getcwd())
    if state is None:
        return None
    name = agent_name(agent, sid, env)
    path = socket_path(state, name)
    if not os.path.exists(path) or not private_dir_ok(os.path.dirname(path)):
        return None
    env["AGENTLANES_FAST_FOR"] = f"{state}\0{name}"  # what the keepalive checks
    return path


def agent_pid() -> int | None:
    """The nearest ancestor that is not a shell: the agent's process, as
    ``client.identity.agent_process`` tells it from here (the keepalive cannot)."""
    shells = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "busybox"}
    here = os.getppid()
    for _ in range(64):  # as client.identity: SHELLS, MAX_DEPTH
        if here <= 1:
            return None
        try:
            with open(f"/proc/{here}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            return None
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name not in shells:
            return here
        here = int(stat[stat.rindex(")") + 2 :].split()[1])
    return None


def ask(path: str, argv: list[str], raw: bytes, env: dict[str, str]) -> dict[str, object]:
    """One request, one answer: ``{"argv", "stdin", "env", "cwd", "for"}`` as JSON, then
    ``{"stdout", "stderr", "code"}`` back."""
    target = env.pop("AGENTLANES_FAST_FOR", "")
    request = {"argv": argv, "stdin": raw.decode("utf-8", "replace"), "env": env,
               "cwd": os.getcwd(), "for": target}  # fmt: skip
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_SECONDS)
        conn.connect(path)
        conn.settimeout(ANSWER_SECONDS)
        conn.sendall(dumps(request).encode())
        conn.shutdown(_socket.SHUT_WR)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    finally:
        conn.close()
    answer = loads(b"".join(chunks).decode("utf-8"))
    if not isinstance(answer, dict) or not isinstance(answer.get("code"), int):
        raise ValueError("not an answer")
    return answer


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -S -I fast.py PROGRAM guard --agent NAME", file=sys.stderr)
        return 1
    program_argv = argv
    if "guard" not in argv:  # `lanes doctor` runs the hook's program with other commands
        os.execvp(argv[0], argv)
    raw = sys.stdin.buffer.read()
    env = dict(os.environ)
    path = served_by(argv, raw, env)
    if path is not None and "AGENTLANES_AGENT_PID" not in env:
        # The keepalive cannot tell the agent's process from its own ancestry: this
        # hook's nearest ancestor that is not a shell is (None without /proc: not served).
        pid = agent_pid()
        env["AGENTLANES_AGENT_PID"] = str(pid)
        path = path if pid else None
    if path is not None:
        try:
            answer = ask(path, argv, raw, env)
        except (OSError, ValueError):
            answer = None  # a keepalive that went away: run the guard here
        if answer is not None:
            sys.stdout.write(str(answer.get("stdout") or ""))
            sys.stderr.write(str(answer.get("stderr") or ""))
            return int(answer["code"])  # type: ignore[call-overload]
    run_here(program_argv, raw)
    return 1  # not reached: run_here replaces this process


def run_here(argv: list[str], raw: bytes) -> None:
    """Become ``argv`` (the same process: the guard sees the agent as its parent, as
    without the fast path), with the event read so far as its stdin again."""
    read, write = os.pipe()
    if len(raw) <= 60000:  # fits the pipe's buffer: no one need wait for a reader
        os.write(write, raw)
    elif os.fork() == 0:  # a writer for a large event, while the guard reads
        os.close(read)
        with os.fdopen(write, "wb") as fh:
            fh.write(raw)
        os._exit(0)
    os.close(write)
    os.dup2(read, 0)
    os.close(read)
    sys.stdout.flush()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
