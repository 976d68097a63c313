"""A private nginx process in front of agentlanes processes, with deploy/nginx.conf as shipped.

The test's nginx has its own prefix in a temporary folder (configuration, pid, logs, temp
files), never the system service. Its main configuration is the minimum around the shipped
server block: `include agentlanes.conf` (deploy/nginx.conf, byte for byte but the listen
port) and `agentlanes-upstreams.inc` naming the test's processes, the file the shipped
configuration includes for its upstream list.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from tests.support.server import free_port
from tests.support.services import unavailable

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "deploy" / "nginx.conf"
SHIPPED_LISTEN = "listen 8080;"


def nginx_binary() -> str:
    found = shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
    )
    if found is None:
        unavailable("nginx", "the binary is not installed (scripts/ensure-nginx.sh installs it)")
    return str(found)


class PrivateNginx:
    def __init__(self, workdir: Path, backends: Sequence[str]) -> None:
        self.binary = nginx_binary()
        self.prefix = workdir / "nginx"
        self.port = free_port()
        self.backends = list(backends)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def write_config(self) -> Path:
        conf = self.prefix / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (self.prefix / "logs").mkdir(exist_ok=True)
        shipped = SHIPPED.read_text()
        # The only change to the shipped file: a free port instead of 8080.
        assert shipped.count(SHIPPED_LISTEN) == 1, "deploy/nginx.conf no longer listens on 8080"
        (conf / "agentlanes.conf").write_text(
            shipped.replace(SHIPPED_LISTEN, f"listen 127.0.0.1:{self.port};")
        )
        (conf / "agentlanes-upstreams.inc").write_text(
            "".join(f"server {backend};\n" for backend in self.backends)
        )
        p = self.prefix
        # As root, nginx's workers would run as `nobody`, which cannot enter the test's
        # private temporary folder.
        user = "user root;\n" if os.geteuid() == 0 else ""
        (conf / "nginx.conf").write_text(
            f"{user}worker_processes 1;\n"
            f"pid {p}/nginx.pid;\n"
            f"error_log {p}/logs/error.log warn;\n"
            "events { worker_connections 4096; }\n"
            "http {\n"
            f"    access_log off;\n"
            f"    client_body_temp_path {p}/client_body;\n"
            f"    proxy_temp_path {p}/proxy;\n"
            f"    fastcgi_temp_path {p}/fastcgi;\n"
            f"    uwsgi_temp_path {p}/uwsgi;\n"
            f"    scgi_temp_path {p}/scgi;\n"
            "    include agentlanes.conf;\n"
            "}\n"
        )
        return conf / "nginx.conf"

    def start(self, timeout: float = 15) -> PrivateNginx:
        main = self.write_config()
        check = subprocess.run(
            [
                self.binary,
                "-t",
                "-p",
                str(self.prefix),
                "-e",
                str(self.prefix / "logs/error.log"),
                "-c",
                str(main),
            ],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, f"nginx -t refused the configuration:\n{check.stderr}"
        self.proc = subprocess.Popen(
            [
                self.binary,
                "-p",
                str(self.prefix),
                "-e",
                str(self.prefix / "logs/error.log"),
                "-c",
                str(main),
                "-g",
                "daemon off;",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited early:\n{self.error_log()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"nginx did not answer /readyz:\n{self.error_log()}")

    def error_log(self) -> str:
        path = self.prefix / "logs" / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: nginx's fast shutdown
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
