"""End-to-end helpers: a real server, admin-created projects, a websockets client."""

from __future__ import annotations

import secrets
from typing import Any

import httpx

ADMIN = {"Authorization": "Bearer admin-secret"}


def create_project(base_url: str, **body: Any) -> dict[str, Any]:
    body.setdefault("name", f"e2e-{secrets.token_hex(4)}")
    r = httpx.post(f"{base_url}/api/v1/projects", json=body, headers=ADMIN, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]
