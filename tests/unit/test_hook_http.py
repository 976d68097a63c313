"""The hook's lean HTTP and its import budget."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agentlanes
from agentlanes.hooks.http import LeanUnreachable, _dechunk, _parse, _Url


def test_url_split_without_urllib() -> None:
    url = _Url("http://127.0.0.1:8787/prefix")
    assert (url.scheme, url.hostname, url.port, url.path) == ("http", "127.0.0.1", 8787, "/prefix")
    v6 = _Url("http://[::1]:9000")
    assert (v6.hostname, v6.port, v6.path) == ("::1", 9000, "")
    plain = _Url("https://lanes.example.com")
    assert (plain.scheme, plain.hostname, plain.port) == ("https", "lanes.example.com", None)
    with pytest.raises(LeanUnreachable, match="bad port"):
        _Url("http://host:x")


def test_http_answers_are_parsed_with_length_or_chunks() -> None:
    body = json.dumps({"ok": True}).encode()
    raw = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body) + body + b"junk"
    assert _parse(raw) == (200, body)
    chunked = (
        b"HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"4\r\nabcd\r\n2\r\nef\r\n0\r\n\r\n"
    )
    assert _parse(chunked) == (409, b"abcdef")
    assert _dechunk(b"0\r\n\r\n") == b""
    with pytest.raises(LeanUnreachable):
        _parse(b"SSH-2.0-OpenSSH\r\n\r\n")


HEAVY = {"httpx", "pydantic", "litestar", "sqlalchemy", "websockets", "mcp", "wcmatch"}
# Standard modules the hook avoids on purpose (see docs/benchmarks.md).
AVOIDED = {"http.client", "email", "ssl", "subprocess", "pathlib", "typing", "urllib.parse"}


def loaded_by(module: str) -> set[str]:
    package_root = str(Path(agentlanes.__file__).resolve().parents[1])
    probe = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        env={"PYTHONPATH": package_root, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return set(done.stdout.split())


def test_the_hook_imports_no_heavy_modules() -> None:
    """What the installed hook runs (python -S) pays for every import on every commit."""
    loaded = loaded_by("agentlanes.hooks.githook")
    assert not loaded & (HEAVY | AVOIDED), loaded & (HEAVY | AVOIDED)
    # Hooks written by earlier versions run the shim at the old path: the same budget.
    assert loaded_by("agentlanes.githook") == loaded | {"agentlanes.githook"}


def test_the_guard_imports_none_of_the_clients_dependencies() -> None:
    """`lanes guard` runs before every edit: the entry point, the guard and its Bash reader
    load no client dependency, none of the avoided modules, no argparse and no tomllib
    (which the config reader imports only when a .agentlanes.toml exists)."""
    loaded = loaded_by("agentlanes.cli.main, agentlanes.hooks.guard, agentlanes.hooks.shellwrites")
    unwanted = HEAVY | AVOIDED | {"argparse", "tomllib"}
    assert not loaded & unwanted, loaded & unwanted
