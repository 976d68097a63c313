"""The keepalive's end of the hooks' fast path (``agentlanes.hooks.fastpath``): a unix socket
on which it runs ``lanes guard ...`` for the agent's hook processes, warm.

Each request is one hook run: its arguments, its stdin, its environment and its working
directory. It is answered by ``agentlanes.hooks.adapters.guard`` — the code ``lanes
guard`` runs, which the hook would have run itself — one request at a time, with
``os.environ`` and the working directory set to the hook's for its duration, and
``sys.stdin``/``stdout``/``stderr`` those of the request for the thread that runs it (the
keepalive's other threads keep theirs). The answer is what the hook would have printed
and its exit code.

The socket lives in a directory of this user's only (``fastpath.client.socket_dir``, mode 0700) and
is removed when the keepalive ends.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable

from agentlanes.hooks.fastpath.client import private_dir_ok, socket_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

MAX_REQUEST = 8 * 1024 * 1024  # an event with a large file's content, and its environment


class _PerThread(io.TextIOBase):
    """A standard stream that is the request's for the thread answering it, and the
    process's own for every other thread."""

    def __init__(self, own: TextIO, local: threading.local, name: str) -> None:
        self._own = own
        self._local = local
        self._name = name

    def _target(self) -> TextIO:
        return getattr(self._local, self._name, None) or self._own

    def write(self, text: str) -> int:
        return self._target().write(text)

    def read(self, size: int | None = -1) -> str:
        return self._target().read(-1 if size is None else size)

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return self._target().readline(-1 if size is None else size)

    def flush(self) -> None:
        self._target().flush()

    @property
    def buffer(self) -> Any:  # the guard may read sys.stdin.buffer
        return getattr(self._target(), "buffer", None)

    def fileno(self) -> int:
        return self._target().fileno()

    def isatty(self) -> bool:
        return self._target().isatty()


class HookServer:
    """Answers hook runs for one agent's keepalive, on its own thread."""

    def __init__(self, state_dir: str, agent: str) -> None:
        self.path = socket_path(state_dir, agent)
        self.serves = f"{state_dir}\0{agent}"
        self._local = threading.local()
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None

    def start(self) -> bool:
        """Listen (False when the socket cannot be made safely: the hooks then run the
        guard themselves)."""
        folder = os.path.dirname(self.path)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            if not private_dir_ok(folder):
                print(f"agentlanes: {folder} is not this user's only; hooks run unserved")
                return False
            if os.path.exists(self.path):
                os.unlink(self.path)  # a keepalive of this agent that died
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(self.path)
            os.chmod(self.path, 0o600)
            sock.listen(16)
        except OSError as exc:
            print(f"agentlanes: hook socket not served ({exc}); hooks run unserved")
            return False
        self._sock = sock
        local = self._local
        sys.stdin = _PerThread(sys.stdin, local, "stdin")
        sys.stdout = _PerThread(sys.stdout, local, "stdout")
        sys.stderr = _PerThread(sys.stderr, local, "stderr")
        threading.Thread(target=self._serve, name="hook-server", daemon=True).start()
        from agentlanes.hooks import edits

        edits.later = self._later  # the edits' sends on a thread here, not a new process
        return True

    def _later(self, due: float, send: Callable[[], object]) -> None:
        """Run ``send`` at ``due`` on a thread of this process, between hook requests."""

        def run() -> None:
            time.sleep(max(0.0, due - time.time()))
            with self._lock:
                try:
                    send()
                except Exception as exc:  # the next edit, Stop or SessionEnd sends it
                    print(f"agentlanes: edits not sent ({type(exc).__name__}: {exc})")

        threading.Thread(target=run, name="edits-sender", daemon=True).start()

    def stop(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def _serve(self) -> None:
        while self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed: the keepalive is ending
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(10)
                data = b""
                while len(data) <= MAX_REQUEST and (chunk := conn.recv(65536)):
                    data += chunk
                request = json.loads(data)
                answer = self.answer(request)
            except Exception as exc:  # the hook then runs the guard itself
                answer = {"error": f"{type(exc).__name__}: {exc}"}
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps(answer).encode())

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run ``lanes guard`` as the hook would have, one request at a time."""
        if request.get("for") != self.serves:
            return {"error": "this keepalive serves another repository or agent"}
        argv = [str(a) for a in request["argv"]]
        env = {str(k): str(v) for k, v in dict(request["env"]).items()}
        args = argv[argv.index("guard") :]
        out, err = io.StringIO(), io.StringIO()
        with self._lock:
            saved_env, saved_cwd = dict(os.environ), os.getcwd()
            local = self._local
            local.stdin, local.stdout, local.stderr = io.StringIO(str(request["stdin"])), out, err
            try:
                _become(env)
                os.chdir(str(request["cwd"]))
                from agentlanes.hooks.adapters import guard

                code = guard(args[1:])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            finally:
                local.stdin = local.stdout = local.stderr = None
                _become(saved_env)
                os.chdir(saved_cwd)
        return {"stdout": out.getvalue(), "stderr": err.getvalue(), "code": code}


def _become(env: dict[str, str]) -> None:
    """``os.environ`` made equal to ``env``, touching only what differs (each change is a
    ``putenv``: most of a hook's environment is the keepalive's already)."""
    for key in [k for k in os.environ if k not in env]:
        del os.environ[key]
    for key, value in env.items():
        if os.environ.get(key) != value:
            os.environ[key] = value
