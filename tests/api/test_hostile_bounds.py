"""Every list in a request is bounded before work is done on it, and the OpenAPI document
states the bound (issue 40)."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import ADMIN
from tests.api.shared_app import client  # noqa: F401  (one app per module)


def test_a_projects_agent_config_keys_are_counted_and_the_document_says_so(
    client: TestClient[Any],  # noqa: F811
) -> None:
    body = {"name": "many-keys", "agent_config_keys": [f"k{i}" for i in range(101)]}
    r = client.post("/api/v1/projects", json=body, headers=ADMIN)
    assert r.status_code == 400 and r.json()["field"] == "agent_config_keys", r.text
    body["agent_config_keys"] = body["agent_config_keys"][:100]
    assert client.post("/api/v1/projects", json=body, headers=ADMIN).status_code == 201
    schemas = client.get("/schema/openapi.json").json()["components"]["schemas"]
    bounded = [  # the request bodies that take them (answers show them)
        s["properties"]["agent_config_keys"]
        for name, s in schemas.items()
        if "agent_config_keys" in s.get("properties", {}) and "oneOf" in str(s)
    ]
    assert bounded
    # maxItems beside oneOf (array | null) applies to the array.
    assert all(prop.get("maxItems") == 100 for prop in bounded), bounded
