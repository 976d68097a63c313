"""Where the agent side finds its server, key and session token (stdlib only).

Order of precedence, first found wins:

- server URL: ``AGENTLANES_URL``, then ``url`` in ``.agentlanes.toml`` at the repository
  root, then ``http://127.0.0.1:8787``;
- API key: ``AGENTLANES_API_KEY``, then ``api_key`` in ``.agentlanes.toml``;
- session token: ``AGENTLANES_SESSION_TOKEN``, then ``<git dir>/agentlanes/session.json``
  (written by ``lanes checkin``; inside ``.git`` so it is never a tracked file).

The git hook and the editor guard import this module on every commit or edit, so it
imports as little as it can: paths are plain strings (``os.path``, not ``pathlib``) and
``typing`` is only read by type checkers.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    StrPath = str | os.PathLike[str]

DEFAULT_URL = "http://127.0.0.1:8787"
CONFIG_FILE = ".agentlanes.toml"
SESSION_FILE = "session.json"


class ConfigError(Exception):
    """The local configuration cannot be read (bad TOML, wrong type of a value)."""


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
        self.source: dict[str, str] = {}

    @property
    def session_file(self) -> str | None:
        """``<git dir>/agentlanes/session.json``, or None outside a git repository."""
        if self.root is None:
            return None
        return os.path.join(git_dir(self.root), "agentlanes", SESSION_FILE)


def _read_toml(path: str) -> dict[str, Any]:
    import tomllib  # only when there is a file to read

    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None


def _typed(data: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str) -> Any:
    value = data.get(key)
    if value is not None and not isinstance(value, kind):
        name = kind.__name__ if isinstance(kind, type) else "number"
        raise ConfigError(f"{path}: {key} must be a {name}")
    return value


def load_config(start: StrPath | None = None, env: dict[str, str] | None = None) -> LocalConfig:
    """Read the server URL, key and options for the repository around ``start``."""
    env = dict(os.environ) if env is None else env
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
    cfg.url = cfg.url.rstrip("/")
    return cfg


# -- the local session ---------------------------------------------------------------------


def read_session(cfg: LocalConfig, env: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The local session: ``AGENTLANES_SESSION_TOKEN``, else the saved session file.

    Returns a dict with at least ``session_token`` (the file adds ``session_id``,
    ``agent_name`` and the heartbeat settings), or None when there is none.
    """
    env = dict(os.environ) if env is None else env
    token = env.get("AGENTLANES_SESSION_TOKEN", "").strip()
    if token:
        return {"session_token": token, "source": "AGENTLANES_SESSION_TOKEN"}
    path = cfg.session_file
    if path is None or not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("session_token"), str):
        return None
    data["source"] = path
    return data


def save_checkin(cfg: LocalConfig, result: Any) -> str | None:
    """Keep what a check-in answered (the CLI and the MCP server share the session)."""
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
        },
    )


def save_session(cfg: LocalConfig, session: dict[str, Any]) -> str | None:
    """Keep a session under ``<git dir>/agentlanes/`` (mode 0600); None outside a repo."""
    path = cfg.session_file
    if path is None:
        return None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(session, fh, indent=2)
    os.replace(tmp, path)
    return path


def forget_session(cfg: LocalConfig) -> None:
    """Remove the saved session (after checkout, or when the server says it has ended)."""
    path = cfg.session_file
    if path is not None and os.path.exists(path):
        os.unlink(path)
