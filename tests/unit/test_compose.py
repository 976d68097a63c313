"""docker-compose.yml, the Dockerfile and deploy/*.conf, checked for structure.

There is no Docker daemon on the test machines, so nothing here builds or runs an
image: these tests read the files and check what the operations guide promises —
two processes on one PostgreSQL and one Redis, one image built once, no secret or
default admin token in the files, health checks on the configured port, pinned images
and dependencies, WebSocket upgrades through nginx.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from agentlanes.admin_token import admin_token_problem

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
APPS = {
    name: s for name, s in SERVICES.items() if str(s.get("image", "")).startswith("agentlanes:")
}


def test_compose_runs_two_processes_sharing_postgres_and_redis() -> None:
    assert len(APPS) == 2
    envs = [app["environment"] for app in APPS.values()]
    assert envs[0] == envs[1]
    assert envs[0]["AGENTLANES_DATABASE_URL"].startswith("postgresql://")
    assert envs[0]["AGENTLANES_REDIS_URL"].startswith("redis://redis:")
    for app in APPS.values():
        assert app["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert app["depends_on"]["redis"]["condition"] == "service_healthy"
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    upstreams = (ROOT / "deploy" / "agentlanes-upstreams.inc").read_text()
    assert "include agentlanes-upstreams.inc;" in conf and "Upgrade" in conf
    assert "app1:8787" in upstreams and "app2:8787" in upstreams
    lb_volumes = SERVICES["lb"]["volumes"]
    assert "./deploy/agentlanes-upstreams.inc:/etc/nginx/agentlanes-upstreams.inc:ro" in lb_volumes
    assert envs[0]["AGENTLANES_PORT"] == "8787"


def test_one_image_is_built_once_and_run_by_both_processes() -> None:
    builders = [name for name, s in SERVICES.items() if "build" in s]
    assert builders == ["app1"] and SERVICES["app1"]["build"] == "."
    assert len({app["image"] for app in APPS.values()}) == 1
    assert SERVICES["app2"]["pull_policy"] == "never"


def test_secrets_come_from_the_environment_and_are_required() -> None:
    env = next(iter(APPS.values()))["environment"]
    token = env["AGENTLANES_ADMIN_TOKEN"]
    # ${VAR:?message}: compose refuses to start when it is unset or empty; no default.
    assert re.fullmatch(r"\$\{AGENTLANES_ADMIN_TOKEN:\?[^}]+\}", token), token
    assert "${POSTGRES_PASSWORD:?" in env["AGENTLANES_DATABASE_URL"]
    assert SERVICES["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith(
        "${POSTGRES_PASSWORD:?"
    )
    text = (ROOT / "docker-compose.yml").read_text() + (ROOT / "Dockerfile").read_text()
    assert "change-me" not in text and "agentlanes:agentlanes@" not in text


def test_the_server_refuses_placeholder_admin_tokens() -> None:
    for weak in ("change-me", "CHANGEME", "admin", "secret", "short"):
        assert admin_token_problem(weak), weak
    assert admin_token_problem("") is None  # empty: the admin API is off
    assert admin_token_problem("3f1c9a2b7e4d5f60a1b2c3d4e5f60718") is None


@pytest.mark.parametrize(
    "weak",
    [
        "12345678",
        "password1",
        "replace-me",
        "Replace_Me",
        "${ADMIN_TOKEN}",
        "${AGENTLANES_ADMIN_TOKEN:-}",
        "$AGENTLANES_ADMIN_TOKEN",
        "3f1c9a2b7e4d5f60a1b2c3d4",  # 24 random characters: too short
        "password-password-password-password",  # long, but a placeholder
        "1234567890123456789012345678901234567890",
        "replace-me-with-a-long-random-token-please",
        "x" * 40,
        "prefix-${ADMIN_TOKEN}-suffix-long-enough-0000",
    ],
)
def test_the_server_refuses_weak_admin_tokens(weak: str) -> None:
    assert admin_token_problem(weak), weak


def test_health_checks_probe_the_configured_port() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    health = dockerfile.split("HEALTHCHECK", 1)[1].split("\n\n", 1)[0]
    assert "AGENTLANES_PORT" in health and ":8787/" not in health
    for app in APPS.values():
        test = " ".join(app["healthcheck"]["test"])
        assert "AGENTLANES_PORT" in test and ":8787/" not in test and "/readyz" in test


def test_images_and_dependencies_are_pinned() -> None:
    base = re.search(r"^FROM (\S+)", (ROOT / "Dockerfile").read_text(), re.M)
    assert base and re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?", base[1])
    for name in ("lb", "postgres", "redis"):
        image = SERVICES[name]["image"]
        assert re.fullmatch(r"[a-z]+:\d+\.\d+(\.\d+)?-alpine(@sha256:[0-9a-f]{64})?", image), image
    assert "-c constraints.txt" in (ROOT / "Dockerfile").read_text()
    pins = dict(
        line.split("==", 1)
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    sys.path.insert(0, str(ROOT / "scripts"))
    from pin_constraints import runtime_closure

    missing = set(runtime_closure()) - set(pins)
    assert not missing, f"constraints.txt lacks {sorted(missing)}: run scripts/pin_constraints.py"
    assert "alembic" in pins and "litestar" in pins


def test_tls_example_passes_websocket_upgrades_and_the_scheme() -> None:
    conf = (ROOT / "deploy" / "nginx-tls.conf").read_text()
    for needle in (
        "listen 443 ssl",
        "ssl_certificate ",
        "proxy_set_header Upgrade $http_upgrade",
        "proxy_set_header Connection $connection_upgrade",
        "proxy_set_header X-Forwarded-Proto $scheme",
        "proxy_http_version 1.1",
        "proxy_read_timeout 1h",
        "return 301 https://",
    ):
        assert needle in conf, needle
