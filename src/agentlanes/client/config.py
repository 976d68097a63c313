"""Where the agent side finds its server, key and session token (stdlib only).

Order of precedence, first found wins:

- server URL: ``AGENTLANES_URL``, then ``url`` in ``.agentlanes.toml`` at the repository
  root, then ``http://127.0.0.1:8787``;
- API key: ``AGENTLANES_API_KEY``, then ``api_key`` in ``.agentlanes.toml``;
- session token: ``AGENTLANES_SESSION_TOKEN``, then the agent's own session file
  ``<git dir>/agentlanes/sessions/<agent>.json`` (written by ``lanes checkin``; inside
  ``.git`` so it is never a tracked file). Several agents in one working tree keep one
  file each; the agent is ``--agent``, ``AGENTLANES_AGENT_NAME`` or ``agent_name`` in
  ``.agentlanes.toml``, else the only session there is.

The git hook and the editor guard import this module on every commit or edit, so it
imports as little as it can: paths are plain strings (``os.path``, not ``pathlib``) and
``typing`` is only read by type checkers.
"""

from __future__ import annotations

import json
import os

from agentlanes.client.errors import ClientError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    StrPath = str | os.PathLike[str]

DEFAULT_URL = "http://127.0.0.1:8787"
CONFIG_FILE = ".agentlanes.toml"
# Before sessions were kept per agent, one file held the checkout's only session.
LEGACY_SESSION_FILE = "session.json"
SESSIONS_DIR = "sessions"
STATE_DIR = "agentlanes"
# Where a session file keeps the agent's process (see identity.py).
AGENT_PROCESS_KEYS = ("agent_pid", "agent_started")
# What a new check-in of the same agent keeps from its session start: its process, and
# its program (``meta.tool``, named in the check-out its keepalive makes).
KEPT_KEYS = (*AGENT_PROCESS_KEYS, "tool")


class ConfigError(ClientError):
    """The local configuration cannot be read (bad TOML, wrong type of a value); a
    ``ClientError`` like every error of the client."""


def find_repo_root(start: StrPath | None = None) -> str | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a dir or a worktree file)."""
    here = os.path.realpath(os.fspath(start) if start is not None else os.getcwd())
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def git_dir(root: StrPath) -> str:
    """The git directory of a work tree: ``.git`` itself, or where a ``.git`` file points.

    Linked worktrees get their own git dir, so each worktree (each agent) keeps its own
    session.
    """
    dot_git = os.path.join(os.fspath(root), ".git")
    if os.path.isfile(dot_git):
        with open(dot_git, encoding="utf-8", errors="replace") as fh:
            text = fh.read().strip()
        if text.startswith("gitdir:"):
            target = text.partition(":")[2].strip()
            return os.path.realpath(os.path.join(os.fspath(root), target))
    return dot_git


class LocalConfig:
    """Everything the agent side needs to talk to the server from this directory.

    A plain class, not a dataclass: ``dataclasses`` costs the hook ~10 ms of imports.
    """

    def __init__(self, root: str | None = None) -> None:
        self.url: str = DEFAULT_URL
        self.api_key: str | None = None
        self.root = root
        self.fail_closed = False
        self.agent_name: str | None = None
        self.timeout = 5.0
        # The most characters of news one hook puts in the agent's context (hooks/news.py).
        self.news_max_chars = 2000
        self.source: dict[str, str] = {}

    @property
    def state_dir(self) -> str | None:
        """``<git dir>/agentlanes``, or None outside a git repository."""
        if self.root is None:
            return None
        return os.path.join(git_dir(self.root), STATE_DIR)

    def session_file(self, agent: str) -> str | None:
        """``<git dir>/agentlanes/sessions/<agent>.json``, or None outside a repository."""
        state = self.state_dir
        if state is None:
            return None
        return os.path.join(state, SESSIONS_DIR, check_agent_name(agent) + ".json")


def _read_toml(path: str) -> dict[str, Any]:
    import tomllib  # only when the file exists (hooks in a repository without one skip it)

    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None


def _typed(data: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str) -> Any:
    value = data.get(key)
    if value is not None and not isinstance(value, kind):
        name = kind.__name__ if isinstance(kind, type) else "number"
        raise ConfigError(f"{path}: {key} must be a {name}")
    return value


def load_config(start: StrPath | None = None, env: Mapping[str, str] | None = None) -> LocalConfig:
    """Read the server URL, key and options for the repository around ``start``."""
    env = os.environ if env is None else env
    root = find_repo_root(start)
    cfg = LocalConfig(root=root)
    file_values: dict[str, Any] = {}
    if root is not None and os.path.isfile(os.path.join(root, CONFIG_FILE)):
        path = os.path.join(root, CONFIG_FILE)
        data = _read_toml(path)
        file_values = {
            "url": _typed(data, "url", str, path),
            "api_key": _typed(data, "api_key", str, path),
            "fail_closed": _typed(data, "fail_closed", bool, path),
            "agent_name": _typed(data, "agent_name", str, path),
            "timeout": _typed(data, "timeout", (int, float), path),
            "news_max_chars": _typed(data, "news_max_chars", int, path),
        }
    for key, env_key in (
        ("url", "AGENTLANES_URL"),
        ("api_key", "AGENTLANES_API_KEY"),
        ("agent_name", "AGENTLANES_AGENT_NAME"),
    ):
        if env.get(env_key):
            setattr(cfg, key, env[env_key].strip())
            cfg.source[key] = env_key
        elif file_values.get(key) is not None:
            setattr(cfg, key, file_values[key])
            cfg.source[key] = CONFIG_FILE
    if file_values.get("fail_closed") is not None:
        cfg.fail_closed = bool(file_values["fail_closed"])
    if env.get("AGENTLANES_FAIL_CLOSED"):
        cfg.fail_closed = env["AGENTLANES_FAIL_CLOSED"].strip().lower() in ("1", "true", "yes")
    if file_values.get("timeout") is not None:
        cfg.timeout = float(file_values["timeout"])
    if file_values.get("news_max_chars") is not None:
        cfg.news_max_chars = max(200, int(file_values["news_max_chars"]))
    cfg.url = cfg.url.rstrip("/")
    _check_url(cfg.url, cfg.source.get("url", "the default URL"))
    return cfg


def _check_url(url: str, source: str) -> None:
    """A server URL must say its scheme: ``localhost:8787`` is bad input, not unreachable."""
    scheme, sep, rest = url.partition("://")
    host = rest.partition("/")[0]
    if not sep or scheme not in ("http", "https") or not host or any(c.isspace() for c in url):
        where = "url in .agentlanes.toml" if source == CONFIG_FILE else source
        raise ConfigError(
            f"{where}: {url!r} is not a server URL (expected http://HOST:PORT or https://HOST)"
        )
    port = host.rpartition("]")[2].rpartition(":")
    if port[1] and not port[2].isdigit():
        where = "url in .agentlanes.toml" if source == CONFIG_FILE else source
        raise ConfigError(f"{where}: {url!r} has a bad port {port[2]!r}")


def check_agent_name(name: str) -> str:
    """An agent name as the server accepts it (1-64 of ``[A-Za-z0-9._-]``); it names a file."""
    from agentlanes.domain.names import is_agent_name

    if not is_agent_name(name) or name in (".", ".."):
        raise ConfigError(f"agent name {name!r}: use 1-64 of letters, digits, '.', '_' and '-'")
    return name


# -- the local sessions, one per agent ------------------------------------------------------


def _load(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("session_token"), str):
        return None
    data["source"] = path
    return data


def _migrate_legacy(cfg: LocalConfig) -> None:
    """Move the old single ``session.json`` to ``sessions/<its agent>.json`` (once)."""
    state = cfg.state_dir
    if state is None:
        return
    legacy = os.path.join(state, LEGACY_SESSION_FILE)
    if not os.path.isfile(legacy):
        return
    data = _load(legacy)
    name = data.get("agent_name") if data else None
    try:
        target = cfg.session_file(name) if isinstance(name, str) else None
    except ConfigError:
        target = None
    if target is None or os.path.exists(target):
        return  # unreadable, nameless, or already moved: leave it for a person to look at
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.replace(legacy, target)


def key_id(api_key: str | None) -> str | None:
    """A short fingerprint of the project key a session was made with (sessions of
    another project's key are not this project's: their tokens mean nothing to it)."""
    if not api_key:
        return None
    import hashlib

    return hashlib.sha256(api_key.encode("utf-8", "surrogateescape")).hexdigest()[:12]


def is_ended(session: dict[str, Any]) -> bool:
    """A local session whose agent's process has ended and whose keepalive is gone too:
    nothing will use or check it out any more (a running keepalive checks it out)."""
    pid = session.get("agent_pid")
    if not isinstance(pid, int):
        return False
    from agentlanes.client.identity import is_alive

    if is_alive(pid, session.get("agent_started")):
        return False
    source = session.get("source")
    if isinstance(source, str) and source.endswith(".json"):
        from agentlanes.client.identity import running_keepalive

        return running_keepalive(source[: -len(".json")] + ".keepalive.pid") is None
    return True


def list_sessions(cfg: LocalConfig) -> list[dict[str, Any]]:
    """The sessions kept in this working tree, by agent name: those of this project's key
    (when both are known), not ended (``is_ended``: such files are removed here)."""
    state = cfg.state_dir
    if state is None:
        return []
    _migrate_legacy(cfg)
    directory = os.path.join(state, SESSIONS_DIR)
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return []
    mine = key_id(cfg.api_key)
    found = []
    for name in names:
        session = _load(os.path.join(directory, name))
        if session is None or (mine and session.get("key_id") not in (None, mine)):
            continue
        if is_ended(session):
            forget_session(cfg, str(session.get("agent_name") or name[: -len(".json")]))
            continue
        found.append(session)
    return found


def read_session(
    cfg: LocalConfig, env: dict[str, str] | None = None, agent: str | None = None
) -> dict[str, Any] | None:
    """The local session: ``AGENTLANES_SESSION_TOKEN``, else the agent's session file.

    The agent is ``agent``, else ``AGENTLANES_AGENT_NAME``, else the agent whose process
    is an ancestor of this one (``identity.session_by_ancestry``), else ``agent_name``,
    else whoever holds the only session in this working tree unless that agent's process
    runs and is not ours; otherwise there is no telling whose it is, so None. Returns a dict with at
    least ``session_token`` (a file adds ``session_id``, ``agent_name``, the declared
    files and the heartbeat settings), or None.
    """
    env = dict(os.environ) if env is None else env
    token = env.get("AGENTLANES_SESSION_TOKEN", "").strip()
    if token:
        return {"session_token": token, "source": "AGENTLANES_SESSION_TOKEN"}
    if agent is None and cfg.source.get("agent_name") == "AGENTLANES_AGENT_NAME":
        agent = cfg.agent_name
    if agent:
        _migrate_legacy(cfg)
        path = cfg.session_file(agent)
        return None if path is None else _load(path)
    sessions = list_sessions(cfg)
    if not sessions:
        return None
    # The agent whose process started this one (its hooks recorded it): see identity.py.
    from agentlanes.client.identity import is_alive, session_by_ancestry

    found = session_by_ancestry(sessions)
    if found is not None:
        return found
    if cfg.agent_name:  # agent_name in .agentlanes.toml
        path = cfg.session_file(cfg.agent_name)
        return None if path is None else _load(path)
    if len(sessions) == 1:
        only = sessions[0]
        pid = only.get("agent_pid")
        if isinstance(pid, int) and is_alive(pid, only.get("agent_started")):
            return None  # another running agent's session, not this process's
        return only
    return None


def save_checkin(cfg: LocalConfig, result: Any, **extra: Any) -> str | None:
    """Keep what a check-in answered (the CLI, the hooks and the MCP server share it)."""
    return save_session(
        cfg,
        {
            "session_id": result.session_id,
            "session_token": result.session_token,
            "agent_name": result.agent_name,
            "declared_area": result.declared_area,
            "declared_files": result.declared_files,
            "heartbeat_interval_seconds": result.heartbeat_interval_seconds,
            "heartbeat_ttl_seconds": result.heartbeat_ttl_seconds,
            "url": cfg.url,
            # Range claims (lines of a file), if any: the guard grades edits by them.
            **(
                {"claims": [c.raw() for c in result.claims]}
                if getattr(result, "claims", None)
                else {}
            ),
            **extra,
        },
    )


def save_session(cfg: LocalConfig, session: dict[str, Any]) -> str | None:
    """Keep a session in its agent's file (mode 0600); None outside a repository."""
    path = cfg.session_file(session["agent_name"])
    if path is None:
        return None
    from agentlanes.client.private_files import private_dir, private_fd

    private_dir(os.path.dirname(path))  # 0700: the files hold tokens and others' words
    data = {k: v for k, v in session.items() if k != "source"}
    if cfg.api_key and "key_id" not in data:
        data["key_id"] = key_id(cfg.api_key)
    if "agent_pid" not in data:
        # A new check-in by the same agent (its MCP server, `lanes checkin` from its
        # shell) keeps the agent's process that its session start recorded.
        before = _load(path) or {}
        data.update({k: before[k] for k in KEPT_KEYS if k in before and k not in data})
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = private_fd(tmp, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
    os.replace(tmp, path)
    return path


# What a session keeps beside its file, gone with it: the edits sent and waiting
# (hooks/edits.py), the keepalive's news (hooks/news.py), the notes held for the agent's
# next context (hooks/adapters/core.py).
SESSION_SIBLINGS = (".edits.json", ".news.jsonl", ".held.txt")


def forget_session(cfg: LocalConfig, agent: str) -> None:
    """Remove an agent's saved session and what it kept beside it (after checkout, or
    once the session has ended)."""
    path = cfg.session_file(agent)
    if path is None:
        return
    for name in (path, *(path[: -len(".json")] + s for s in SESSION_SIBLINGS)):
        try:  # noqa: SIM105 - contextlib is one more import on every hook
            os.unlink(name)
        except OSError:
            pass
