"""docker-compose.yml runs two service processes on one PostgreSQL and one Redis."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_compose_runs_two_processes_sharing_postgres_and_redis() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    apps = [s for s in services.values() if s.get("build") == "."]
    assert len(apps) == 2
    envs = [app["environment"] for app in apps]
    assert envs[0] == envs[1]
    assert envs[0]["AGENTLANES_DATABASE_URL"].startswith("postgresql://")
    assert envs[0]["AGENTLANES_REDIS_URL"].startswith("redis://redis:")
    for app in apps:
        assert app["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert app["depends_on"]["redis"]["condition"] == "service_healthy"
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "app1:8787" in conf and "app2:8787" in conf and "Upgrade" in conf
