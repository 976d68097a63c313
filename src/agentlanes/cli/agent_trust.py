"""Whether an agent program will run this repository's hooks, and the step that makes it
(SPEC "Real agent programs"): ``lanes init --agent`` prints the step, ``lanes init
--trust-hooks`` takes it for the user, ``lanes doctor`` checks it.

- **Codex** (0.171) loads ``.codex/`` only in a project its user trusts, and runs each
  project hook only once the user has reviewed and trusted that hook's exact definition
  (``hooks.state."<key>".trusted_hash`` in ``~/.codex/config.toml``; a hook whose text
  changed is "modified" and skipped again). ``codex exec`` skips untrusted hooks without
  a word. The user's step: run ``codex`` in the repository, trust the project, and at
  "Hooks need review" choose "Trust all and continue" (or ``/hooks``). We ask Codex
  itself, through its app server (``codex app-server``, JSON-RPC over stdio: ``hooks/list``
  gives each hook's key, ``currentHash`` and ``trustStatus``) and, for ``--trust-hooks``,
  write what its own ``/hooks`` screen writes (``config/batchWrite``: the project's
  ``trust_level`` and each agentlanes hook's ``trusted_hash`` as Codex computed it). No
  hash is computed here.
- **Gemini CLI** (0.61) runs project hooks only in a trusted folder (folder trust is on
  by default): ``~/.gemini/trustedFolders.json`` (``$GEMINI_CLI_HOME``), ``{"<path>":
  "TRUST_FOLDER"}``, which its "Trust folder" answer writes; headless runs never ask.
- **Copilot CLI** (1.0.102) loads ``.github/hooks/`` in prompt mode (``-p``) only in a
  trusted folder (or with ``COPILOT_ALLOW_ALL=true``): ``trustedFolders`` in
  ``~/.copilot/config.json`` (``$COPILOT_HOME``), a folder trusting everything below it.
  The user's step: run ``copilot`` in the repository and answer "Confirm folder trust"
  with "Yes, and remember this folder for future sessions", which adds it there;
  ``--trust-hooks`` adds it.
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlanes.cli.init_files import GUARD_SPELLINGS

APP_SERVER_TIMEOUT = 30.0  # seconds for the whole conversation with `codex app-server`


@dataclass
class HooksTrust:
    """One agent's answer: ``runs`` True (its hooks will run), False (they will not:
    ``problem`` says why, ``fix`` how), or None (it cannot be told: ``problem`` says why)."""

    agent: str
    runs: bool | None
    problem: str = ""
    fix: str = ""
    hooks: list[dict[str, Any]] = field(default_factory=list)  # Codex: ours, with status

    def as_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "runs": self.runs, "problem": self.problem,
                "fix": self.fix, "hooks": self.hooks}  # fmt: skip


def _ours(command: Any) -> bool:
    return isinstance(command, str) and any(s in command for s in GUARD_SPELLINGS)


# -- Codex ---------------------------------------------------------------------------------


def codex_step(root: Path) -> str:
    """What the user does once so Codex runs this repository's hooks."""
    return (
        f'cd {shlex.quote(str(root))} && codex  (trust the project when asked; at "Hooks '
        'need review" choose "Trust all and continue", or review them with /hooks); or let '
        "lanes do it: lanes init --agent codex --trust-hooks"
    )


class AppServerError(Exception):
    """``codex app-server`` did not answer as expected."""


class CodexAppServer:
    """A short conversation with ``codex app-server`` (newline-delimited JSON-RPC on its
    stdio), as Codex's own TUI holds one."""

    def __init__(self, codex: str, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self.deadline = time.monotonic() + APP_SERVER_TIMEOUT
        self.proc = subprocess.Popen(
            [codex, "app-server"],
            cwd=cwd,
            env=dict(os.environ if env is None else env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.buffer = b""
        self.next_id = 0

    def __enter__(self) -> CodexAppServer:
        self.call("initialize", {"clientInfo": {"name": "agentlanes", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "initialized"})
        return self

    def __exit__(self, *exc: object) -> None:
        self.selector.close()
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise AppServerError(f"codex app-server closed its input ({exc})") from None

    def _line(self) -> bytes:
        while b"\n" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                raise AppServerError(f"codex app-server did not answer in {APP_SERVER_TIMEOUT} s")
            assert self.proc.stdout is not None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise AppServerError("codex app-server exited")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:  # notifications (configWarning, ...) come in between: skipped
            try:
                message = json.loads(self._line())
            except ValueError:
                continue
            if not isinstance(message, dict) or message.get("id") != self.next_id:
                continue
            if "error" in message:
                error = message["error"] or {}
                raise AppServerError(f"{method}: {error.get('message') or error}")
            return message.get("result")


def _codex_hooks(server: CodexAppServer, root: Path) -> list[dict[str, Any]]:
    """Codex's own list of the agentlanes hooks it would load for ``root``."""
    result = server.call("hooks/list", {"cwds": [str(root)]}) or {}
    hooks: list[dict[str, Any]] = []
    for entry in result.get("data") or []:
        hooks += [h for h in entry.get("hooks") or [] if isinstance(h, dict)]
    return [h for h in hooks if _ours(h.get("command")) and h.get("source") == "project"]


def _configured_codex_events(root: Path) -> list[str]:
    """The events ``.codex/hooks.json`` has an agentlanes hook for."""
    try:
        data = json.loads((root / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    events = data.get("hooks") if isinstance(data, dict) else None
    out = []
    for event, groups in (events if isinstance(events, dict) else {}).items():
        for group in groups if isinstance(groups, list) else []:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            if any(isinstance(h, dict) and _ours(h.get("command")) for h in hooks or []):
                out.append(event)
    return out


def _codex_verdict(server: CodexAppServer, root: Path, hooks: list[dict[str, Any]]) -> HooksTrust:
    summary = [
        {"event": h.get("eventName"), "trust": h.get("trustStatus"), "enabled": h.get("enabled")}
        for h in hooks
    ]
    if not hooks:
        config = (server.call("config/read", {"cwd": str(root)}) or {}).get("config") or {}
        if (config.get("features") or {}).get("hooks") is False:
            return HooksTrust(
                "codex", False, "Codex's hooks are switched off ([features] hooks = false)",
                "remove `hooks = false` from [features] in ~/.codex/config.toml (or the "
                "project's .codex/config.toml)",
            )  # fmt: skip
        configured = _configured_codex_events(root)
        project = ((config.get("projects") or {}).get(str(root)) or {}).get("trust_level")
        why = "marked untrusted" if project == "untrusted" else "not trusted"
        return HooksTrust(
            "codex",
            False,
            f"Codex does not load {root}/.codex/ ({len(configured)} agentlanes hook(s) "
            f"there): the project is {why}",
            codex_step(root),
        )
    idle = [h for h in hooks if h.get("trustStatus") not in ("trusted", "managed")]
    off = [h for h in hooks if h.get("enabled") is False]
    if idle or off:
        names = ", ".join(
            [f"{h.get('eventName')} ({h.get('trustStatus')})" for h in idle]
            + [f"{h.get('eventName')} (disabled)" for h in off]
        )
        return HooksTrust(
            "codex",
            False,
            f"{len(idle) + len(off)} of {len(hooks)} agentlanes hook(s) will not run until "
            f"reviewed and trusted: {names}",
            codex_step(root),
            summary,
        )
    return HooksTrust("codex", True, hooks=summary)


def codex_trust(root: Path, env: Mapping[str, str] | None = None) -> HooksTrust:
    """Whether Codex will run the agentlanes hooks of ``root``, as Codex itself says."""
    codex = shutil.which("codex", path=(env or os.environ).get("PATH"))
    if codex is None:
        return HooksTrust(
            "codex", None, "codex is not on PATH, so whether it trusts these hooks cannot be "
            "read", codex_step(root),
        )  # fmt: skip
    try:
        with CodexAppServer(codex, root, env) as server:
            return _codex_verdict(server, root, _codex_hooks(server, root))
    except (AppServerError, OSError) as exc:
        return HooksTrust("codex", None, f"could not ask Codex ({exc})", codex_step(root))


def trust_codex(root: Path, env: Mapping[str, str] | None = None) -> HooksTrust:
    """Trust the project and each agentlanes hook in the user's Codex config, the way
    Codex's ``/hooks`` screen does (``config/batchWrite``), then read it back."""
    codex = shutil.which("codex", path=(env or os.environ).get("PATH"))
    if codex is None:
        return codex_trust(root, env)
    try:
        with CodexAppServer(codex, root, env) as server:
            hooks = _codex_hooks(server, root)
            if not hooks:  # the project first: until then Codex lists none of its hooks
                project = {str(root): {"trust_level": "trusted"}}
                _write(server, "projects", project)
                hooks = _codex_hooks(server, root)
            state = {
                h["key"]: {"trusted_hash": h["currentHash"]}
                for h in hooks
                if h.get("trustStatus") != "trusted" and h.get("key") and h.get("currentHash")
            }
            if state:
                _write(server, "hooks.state", state)
                hooks = _codex_hooks(server, root)
            return _codex_verdict(server, root, hooks)
    except (AppServerError, OSError) as exc:
        return HooksTrust("codex", None, f"could not ask Codex ({exc})", codex_step(root))


def _write(server: CodexAppServer, key: str, value: dict[str, Any]) -> None:
    """Merge ``value`` into the user's ``config.toml`` at ``key``, reloaded at once."""
    edit = {"keyPath": key, "mergeStrategy": "upsert", "value": value}
    server.call("config/batchWrite", {"edits": [edit], "reloadUserConfig": True})


# -- Copilot CLI ---------------------------------------------------------------------------


def copilot_step(root: Path) -> str:
    return (
        f'cd {shlex.quote(str(root))} && copilot  (answer "Confirm folder trust" with "Yes, '
        'and remember this folder for future sessions"); or let lanes do it: lanes init '
        "--agent copilot --trust-hooks"
    )


def copilot_config_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    home = env.get("COPILOT_HOME") or os.path.join(env.get("HOME") or str(Path.home()), ".copilot")
    return Path(home) / "config.json"


def _read_jsonc(path: Path) -> tuple[list[str], dict[str, Any]]:
    """(the file's leading ``//`` comment lines, its object): Copilot CLI heads the file
    with comments; a missing file is empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], {}
    lines = text.splitlines()
    head = [line for line in lines if line.lstrip().startswith("//")]
    body = "\n".join(line for line in lines if not line.lstrip().startswith("//"))
    data = json.loads(body) if body.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return head, data


def _within(root: Path, folder: str) -> bool:
    """``root`` is ``folder`` or below it (a trusted folder trusts what is below it)."""
    here, there = os.path.realpath(root), os.path.realpath(folder)
    return here == there or here.startswith(there.rstrip(os.sep) + os.sep)


def _trusted_by(root: Path, folders: Any) -> str | None:
    """The trusted folder that covers ``root`` (itself or a folder above it), or None."""
    for folder in folders if isinstance(folders, list) else []:
        if isinstance(folder, str) and folder and _within(root, folder):
            return folder
    return None


def copilot_trust(root: Path, env: Mapping[str, str] | None = None) -> HooksTrust:
    """Whether Copilot CLI will load ``.github/hooks/`` here (a trusted folder)."""
    env = os.environ if env is None else env
    if env.get("COPILOT_ALLOW_ALL") == "true":
        return HooksTrust("copilot", True)
    path = copilot_config_file(env)
    try:
        _, data = _read_jsonc(path)
    except (OSError, ValueError) as exc:
        return HooksTrust("copilot", None, f"{path}: unreadable ({exc})", copilot_step(root))
    if _trusted_by(root, data.get("trustedFolders")) is None:
        return HooksTrust(
            "copilot", False,
            f"{root} is not among Copilot CLI's trusted folders ({path}): it loads no "
            "repository hooks here",
            copilot_step(root),
        )  # fmt: skip
    return HooksTrust("copilot", True)


def trust_copilot(root: Path, env: Mapping[str, str] | None = None) -> HooksTrust:
    """Add ``root`` to ``trustedFolders`` (what "Yes, and remember this folder" does)."""
    path = copilot_config_file(env)
    try:
        head, data = _read_jsonc(path)
        folders = data.get("trustedFolders")
        folders = list(folders) if isinstance(folders, list) else []
        if _trusted_by(root, folders) is None:
            data["trustedFolders"] = [*folders, str(root)]
            path.parent.mkdir(parents=True, exist_ok=True)
            text = "\n".join(head) + ("\n" if head else "") + json.dumps(data, indent=2) + "\n"
            path.write_text(text, encoding="utf-8")
    except (OSError, ValueError) as exc:
        return HooksTrust("copilot", None, f"{path}: not changed ({exc})", copilot_step(root))
    return copilot_trust(root, env)


# -- Gemini CLI ----------------------------------------------------------------------------


def gemini_step(root: Path) -> str:
    return (
        f'cd {shlex.quote(str(root))} && gemini  (answer its trust prompt with "Trust folder"; '
        f'headless runs never ask: add "{root}": "TRUST_FOLDER" to ~/.gemini/trustedFolders.json)'
        "; or let lanes do it: lanes init --agent gemini --trust-hooks"
    )


def gemini_folders_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())
    return Path(home) / ".gemini" / "trustedFolders.json"


def _gemini_rule(root: Path, rules: dict[str, Any]) -> str | None:
    """The rule of ``trustedFolders.json`` that decides for ``root``: the most specific
    folder at or above it (``TRUST_PARENT`` on a path stands for its parent folder)."""
    best: tuple[int, str] | None = None
    for path, rule in rules.items():
        if not isinstance(path, str) or not isinstance(rule, str):
            continue
        folder = os.path.realpath(os.path.dirname(path) if rule == "TRUST_PARENT" else path)
        if _within(root, folder) and (best is None or len(folder) > best[0]):
            best = (len(folder), rule)
    return best[1] if best else None


def gemini_trust(root: Path, env: Mapping[str, str] | None = None) -> HooksTrust:
    """Whether Gemini CLI will run ``.gemini/settings.json``'s hooks here: only in a folder
    its user trusts (folder trust is on by default)."""
    path = gemini_folders_file(env)
    try:
        rules = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        if not isinstance(rules, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        return HooksTrust("gemini", None, f"{path}: unreadable ({exc})", gemini_step(root))
    if _gemini_rule(root, rules) in ("TRUST_FOLDER", "TRUST_PARENT"):
        return HooksTrust("gemini", True)
    return HooksTrust(
        "gemini", False,
        f"{root} is not a folder Gemini CLI trusts ({path}): it runs no project hooks here",
        gemini_step(root),
    )  # fmt: skip


def trust_gemini(root: Path, env: Mapping[str, str] | None = None) -> HooksTrust:
    """Trust ``root`` as Gemini CLI's "Trust folder" answer does."""
    path = gemini_folders_file(env)
    try:
        rules = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        if not isinstance(rules, dict):
            raise ValueError("not a JSON object")
        if _gemini_rule(root, rules) not in ("TRUST_FOLDER", "TRUST_PARENT"):
            rules[str(root)] = "TRUST_FOLDER"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(rules, indent=2) + "\n", encoding="utf-8")
    except (OSError, ValueError) as exc:
        return HooksTrust("gemini", None, f"{path}: not changed ({exc})", gemini_step(root))
    return gemini_trust(root, env)


CHECKS = {"codex": codex_trust, "copilot": copilot_trust, "gemini": gemini_trust}
TRUSTERS = {"codex": trust_codex, "copilot": trust_copilot, "gemini": trust_gemini}
