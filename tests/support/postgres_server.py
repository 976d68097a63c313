"""A private PostgreSQL cluster on a free port, which a test may stop and start again
(a database outage) without touching the machine's shared cluster that other test runs
use. Built with the server's own initdb and pg_ctl; as root they run as ``postgres``."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support.server import free_port
from tests.support.services import unavailable


def _bin_dir() -> Path | None:
    """The newest PostgreSQL server binaries: PATH first, then Debian's layout."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).resolve().parent  # /usr/local/bin may hold symlinks only
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    return Path(found[-1]).parent if found else None


class PrivatePostgres:
    def __init__(self) -> None:
        bin_dir = _bin_dir()
        if bin_dir is None or not (bin_dir / "initdb").exists():
            unavailable(
                "PostgreSQL server binaries",
                "no initdb/pg_ctl on PATH or under /usr/lib/postgresql",
            )
        assert bin_dir is not None
        self.bin_dir = bin_dir
        self.port = free_port()
        # Not under pytest's tmp_path: as root, the cluster runs as `postgres`, which
        # must be able to reach its directory.
        self.root = Path(tempfile.mkdtemp(prefix="agentlanes-pg-"))
        self.data = self.root / "data"
        self.user: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                unavailable("PostgreSQL", "running as root and there is no postgres user")
            self.user = "postgres"
            shutil.chown(self.root, user="postgres")
        self.root.chmod(0o755)

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def init(self) -> PrivatePostgres:
        done = self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        if done.returncode != 0:
            unavailable("PostgreSQL", f"initdb failed: {done.stderr.strip()[-300:]}")
        return self

    def start(self) -> PrivatePostgres:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off"
        done = self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )
        if done.returncode != 0:
            log = (
                (self.root / "log").read_text(errors="replace")[-1000:]
                if (self.root / "log").exists()
                else ""
            )
            raise RuntimeError(f"private PostgreSQL did not start: {done.stderr}\n{log}")
        return self

    def stop(self, mode: str = "fast") -> None:
        """``fast`` rolls back open transactions and closes every connection; ``immediate``
        is a crash (recovery at the next start)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def create_database(self, name: str) -> str:
        import asyncio

        import asyncpg

        async def create() -> None:
            conn = await asyncpg.connect(
                host="127.0.0.1", port=self.port, user="postgres", database="postgres"
            )
            try:
                await conn.execute(f'CREATE DATABASE "{name}"')
            finally:
                await conn.close()

        asyncio.run(create())
        return self.url(name)

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._run("pg_isready", "-h", "127.0.0.1", "-p", str(self.port)).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("private PostgreSQL is not ready")
