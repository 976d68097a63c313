"""Driving an HTTP server with `wrk`, the compiled load generator (Debian's package `wrk`).

The calls to send (method, path, headers, body) go into a Lua script written for the run;
wrk sends them in turn on every connection and the script's `done` prints one line with
the requests, the duration, the p50/p99 latency and the failed requests (any answer of 400
or more, and connect, read, write and timeout errors), which `Wrk.run` reads back.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx


@dataclass(frozen=True)
class Call:
    """One HTTP request as wrk sends it."""

    method: str
    path: str
    headers: dict[str, str]
    body: str = ""


@dataclass(frozen=True)
class Load:
    """One wrk run: requests, seconds, latency percentiles (ms) and failed requests."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def _lua_string(text: str) -> str:
    level = "=" * 3
    while f"]{level}]" in text:
        level += "="
    return f"[{level}[{text}]{level}]"


def lua_script(calls: Sequence[Call], threads: int = 1) -> str:
    """A wrk script that sends the calls in turn (per thread) and prints one result line:
    requests, microseconds, p50 and p99 latency in microseconds, and the failures.

    Each of the ``threads`` starts at its own share of the calls (thread k at call
    k·n/threads), so that calls naming distinct agents stay distinct across threads."""
    variants = []
    for c in calls:
        headers = ", ".join(
            f"[ {_lua_string(k)} ] = {_lua_string(v)}"
            for k, v in {"Content-Type": "application/json", **c.headers}.items()
        )
        body = _lua_string(c.body) if c.body else "nil"
        variants.append(
            f"{{{_lua_string(c.method)}, {_lua_string(c.path)}, {{{headers}}}, {body}}}"
        )
    return (
        "local variants = {\n  " + ",\n  ".join(variants) + "\n}\n"
        "local n = #variants\n"
        "local i = 0\n"
        "local made = 0\n"
        "setup = function(thread)\n"
        '  thread:set("share", made)\n'
        "  made = made + 1\n"
        "end\n"
        "init = function(args)\n"
        f"  i = (share or 0) * math.floor(n / {max(1, threads)})\n"
        "end\n"
        "request = function()\n"
        "  i = i + 1\n"
        "  local v = variants[(i - 1) % n + 1]\n"
        "  return wrk.format(v[1], v[2], v[3], v[4])\n"
        "end\n"
        "done = function(summary, latency, requests)\n"
        "  local e = summary.errors\n"
        '  io.write(string.format("WRKRESULT %.0f %.0f %.0f %.0f %.0f\\n",\n'
        "    summary.requests, summary.duration, latency:percentile(50),\n"
        "    latency:percentile(99), e.connect + e.read + e.write + e.status + e.timeout))\n"
        "end\n"
    )


class Wrk:
    def __init__(self, binary: str, workdir: Path, seconds: float) -> None:
        self.binary = binary
        self.workdir = workdir
        self.seconds = seconds
        self.scripts = 0

    def run(self, url: str, calls: Sequence[Call], connections: int) -> Load:
        self.scripts += 1
        script = self.workdir / f"load{self.scripts}.lua"
        threads = min(2, connections)
        script.write_text(lua_script(calls, threads))
        cmd = [
            self.binary,
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, round(self.seconds))}s",
            "--timeout",
            "30s",
            "-s",
            str(script),
            url,
        ]
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=self.seconds + 90, check=False
        )
        for line in out.stdout.splitlines():
            if line.startswith("WRKRESULT "):
                n, us, p50, p99, errors = (float(x) for x in line.split()[1:])
                return Load(int(n), us / 1e6, p50 / 1000, p99 / 1000, int(errors))
        raise RuntimeError(f"wrk gave no result ({out.returncode}):\n{out.stdout}\n{out.stderr}")


def find_wrk() -> str:
    found = shutil.which("wrk") or ("/usr/bin/wrk" if os.access("/usr/bin/wrk", os.X_OK) else "")
    if not found:
        print(
            "bench/api.py needs wrk, the compiled HTTP load generator: apt-get install wrk",
            file=sys.stderr,
        )
        sys.exit(2)
    return found


def preflight(url: str, call: Call, expect: int) -> None:
    """Send the call once and insist on the expected status, so wrk never times errors."""
    r = httpx.request(
        call.method,
        url + call.path,
        headers={"Content-Type": "application/json", **call.headers},
        content=call.body.encode() if call.body else None,
        timeout=60,
    )
    if r.status_code != expect:
        raise RuntimeError(f"{call.method} {call.path}: {r.status_code} {r.text[:500]}")
