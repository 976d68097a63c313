"""/metrics counts requests by method, route template and status, as Litestar's Prometheus
middleware did, with each labelled series made once (api/metrics.py)."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import TestClient

from tests.api.conftest import new_project


def _sample(text: str, name: str, **labels: str) -> float:
    """The value of the one sample of ``name`` whose labels include ``labels``."""
    found = []
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        if all(f'{key}="{value}"' in line for key, value in labels.items()):
            found.append(float(line.rsplit(" ", 1)[1]))
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_requests_are_counted_by_route_template_and_status(client: TestClient[Any]) -> None:
    api = new_project(client)
    before = client.get("/metrics").text
    token = client.post("/api/v1/checkin", json={}, headers=api.headers()).json()["session_token"]
    for _ in range(3):
        r = client.post("/api/v1/heartbeat", headers=api.headers(token))
        assert r.status_code == 200
    r = client.get("/api/v1/sessions/ses_000000000000000000000000/conflicts", headers=api.headers())
    assert r.status_code == 404
    text = client.get("/metrics").text

    def delta(name: str, **labels: str) -> float:
        try:
            was = _sample(before, name, **labels)
        except AssertionError:
            was = 0.0
        return _sample(text, name, **labels) - was

    beat = {"method": "POST", "path": "/api/v1/heartbeat", "status_code": "200"}
    assert delta("agentlanes_requests_total", **beat) == 3
    assert delta("agentlanes_request_duration_seconds_count", **beat) == 3
    assert _sample(text, "agentlanes_request_duration_seconds_sum", **beat) > 0
    # The route's template labels the series, never the raw path: one series per route.
    template = "/api/v1/sessions/{session_id}/conflicts"
    assert delta("agentlanes_requests_total", path=template, status_code="404") == 1
    assert "ses_000000000000000000000000" not in text
    # Nothing left in progress once the answers are sent.
    assert _sample(text, "agentlanes_requests_in_progress", path="/api/v1/heartbeat") == 0
    # Server errors are counted apart; none happened here. (The registry is the process's:
    # an earlier test's deliberate 503 stays counted, so compare with before.)
    errors = r'^agentlanes_requests_error_total\{[^}]*status_code="5[^\n]*'
    assert re.findall(errors, text, re.M) == re.findall(errors, before, re.M)
