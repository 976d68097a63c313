"""The served OpenAPI document states the contract (the fuzzing itself is in
tests/e2e/test_openapi_contract.py): our error model on every operation with the statuses
it can answer, the credentials it needs, the limits of the running settings, `Allow`."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from agentlanes.api.openapi import ContractJsonPlugin

ADMIN = {"Authorization": "Bearer admin-secret-for-the-test-suite-2026"}
METHODS = {"get", "put", "post", "delete", "patch"}


@pytest.fixture
def client(app_factory: Callable[..., TestClient[Any]], tmp_path: Path) -> TestClient[Any]:
    return app_factory(
        database_url=f"sqlite:///{tmp_path / 'a.db'}",
        max_patterns=7,
        max_pattern_length=99,
        max_work_summary_chars=1234,
        max_message_body_chars=4321,
        lease_max_seconds=600,
        edits_max_ranges=77,
    )


@pytest.fixture
def document(client: TestClient[Any]) -> dict[str, Any]:
    r = client.get("/schema/openapi.json")
    assert r.status_code == 200
    return r.json()  # type: ignore[no-any-return]


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation


def test_every_error_answer_is_the_error_model_never_litestars_detail(
    document: dict[str, Any],
) -> None:
    error = document["components"]["schemas"]["Error"]
    assert error["required"] == ["error"]
    assert error["properties"]["error"]["required"] == ["code", "message"]
    for extra in ("field", "conflicts", "outcome_status", "status", "lease_holder", "conflict"):
        assert extra in error["properties"], extra
    for path, method, operation in operations(document):
        for status, response in operation["responses"].items():
            if int(status) >= 400 and not (path == "/readyz" and status == "503"):
                assert response == {"$ref": f"#/components/responses/Error{status}"}, (
                    method,
                    path,
                    status,
                )
    for name, response in document["components"]["responses"].items():
        schema = response["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/Error"}, name
    assert '"detail"' not in str(document).replace("'", '"')


def test_each_operation_lists_the_statuses_it_can_answer(document: dict[str, Any]) -> None:
    def statuses(path: str, method: str) -> set[int]:
        return {int(s) for s in document["paths"][path][method]["responses"]}

    for path, method, operation in operations(document):
        assert 421 in statuses(path, method), (method, path)  # every route checks Host
        if path.startswith("/api/v1/"):
            # Every call needs a key (or the admin token) and is rate limited.
            assert {401, 429} <= statuses(path, method), (method, path)
        if "requestBody" in operation:
            assert {400, 413} <= statuses(path, method), (method, path)
        if "{" in path:
            assert 404 in statuses(path, method), (method, path)
    assert {201, 400, 401, 409, 413, 429} <= statuses("/api/v1/checkin", "post")
    assert {200, 400, 404, 410} <= statuses("/api/v1/heartbeat", "post")
    assert {200, 404, 409, 410} <= statuses("/api/v1/status", "post")
    assert {200, 201, 409, 410} <= statuses("/api/v1/leases", "post")
    assert {200, 201} <= statuses("/api/v1/agents/{name}", "put")
    assert {409, 410} <= statuses("/api/v1/tasks/{task_id}/claim", "post")
    assert statuses("/healthz", "get") == {200, 421}
    assert statuses("/readyz", "get") == {200, 421, 503}


def test_security_follows_the_guards(document: dict[str, Any]) -> None:
    schemes = document["components"]["securitySchemes"]
    assert schemes["ApiKey"] == {"type": "apiKey", "name": "X-API-Key", "in": "header"} | {
        "description": schemes["ApiKey"]["description"]
    }
    assert schemes["SessionToken"]["name"] == "X-Session-Token"
    assert schemes["AdminToken"]["scheme"] == "bearer"
    paths = document["paths"]
    assert paths["/api/v1/projects"]["post"]["security"] == [{"AdminToken": []}]
    assert paths["/api/v1/presence"]["get"]["security"] == [{"ApiKey": []}]
    assert paths["/api/v1/heartbeat"]["post"]["security"] == [{"ApiKey": [], "SessionToken": []}]
    assert paths["/api/v1/conflicts/check"]["post"]["security"] == [
        {"ApiKey": [], "SessionToken": []},
        {"ApiKey": []},
    ]
    assert "security" not in paths["/healthz"]["get"]


def test_request_schemas_carry_the_running_limits(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    checkin = schemas["CheckinBody"]
    assert checkin["additionalProperties"] is False
    files = checkin["properties"]["declared_files"]
    assert files["maxItems"] == 7 and files["items"]["maxLength"] == 99
    assert files["items"]["format"] == "glob-pattern"
    name = checkin["properties"]["agent_name"]
    assert (name["minLength"], name["maxLength"]) == (1, 64)
    assert name["not"]["pattern"] == "[^A-Za-z0-9._-]"
    assert schemas["CheckoutBody"]["properties"]["work_summary"]["maxLength"] == 1234
    body = schemas["MessageBody"]["properties"]["body"]
    assert body["maxLength"] == 4321 and body["minLength"] == 1
    assert schemas["LeaseBody"]["properties"]["ttl_seconds"]["maximum"] == 600
    assert set(schemas["TaskBody"]["required"]) == {"title"}
    assert schemas["VoteBody"]["properties"]["vote"]["enum"] == ["approve", "reject"]
    # NUL is refused in every string of a body, nested ones too.
    assert checkin["properties"]["meta"]["oneOf"][0]["additionalProperties"] == {
        "$ref": "#/components/schemas/JsonWithoutNul"
    }
    # Query parameters parsed from strings are documented with their real types.
    params = {
        p["name"]: p["schema"] for p in document["paths"]["/api/v1/tasks"]["get"]["parameters"]
    }
    assert params["limit"] == params["limit"] | {"type": "integer", "minimum": 1, "maximum": 500}
    assert params["stale"]["type"] == "boolean"


def test_edit_ranges_state_their_bounds(document: dict[str, Any]) -> None:
    """SPEC "One agent cannot hurt another": an edit's ranges are at most edits_max_ranges,
    each a pair [start >= 1, end >= 0]; a generated client or a fuzzer knows the 400s."""
    ranges = document["components"]["schemas"]["EditIn"]["properties"]["ranges"]
    assert ranges["maxItems"] == 77
    pair = ranges["items"]
    assert (pair["minItems"], pair["maxItems"]) == (2, 2)
    start, end = pair["prefixItems"]
    assert (start["type"], start["minimum"]) == ("integer", 1)
    assert (end["type"], end["minimum"]) == ("integer", 0)


def test_the_contract_is_finished_from_a_copy_once(client: TestClient[Any]) -> None:
    # The JSON render plugin finishes what Litestar hands it (api/openapi.py): Litestar's
    # document stays as built, and the finished copy is made once, not on every request.
    plugin = ContractJsonPlugin(client.app.state.ctx.settings)
    built = client.app.openapi_schema.to_schema()
    before = copy.deepcopy(built)
    finished = plugin.finished(client.app, built)
    assert built == before
    assert "Error" in finished["components"]["schemas"]
    assert "421" in finished["paths"]["/healthz"]["get"]["responses"]
    assert plugin.finished(client.app, built) is finished


def test_metrics_document_their_text_content_type(document: dict[str, Any]) -> None:
    assert list(document["paths"]["/metrics"]["get"]["responses"]["200"]["content"]) == [
        "text/plain"
    ]


def test_405_and_options_name_every_method_of_the_path(client: TestClient[Any]) -> None:
    key = client.post("/api/v1/projects", json={"name": "allow"}, headers=ADMIN).json()["api_key"]
    r = client.request("TRACE", "/api/v1/leases", headers={"X-API-Key": key})
    assert r.status_code == 405 and r.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert set(r.headers["allow"].split(", ")) == {"GET", "OPTIONS", "POST"}
    # Litestar's own OPTIONS answer named only the first handler's method of a shared path.
    r = client.options("/api/v1/leases", headers={"X-API-Key": key})
    assert r.status_code == 204 and set(r.headers["allow"].split(", ")) == {
        "GET",
        "OPTIONS",
        "POST",
    }
    r = client.request("DELETE", "/healthz")
    assert r.status_code == 405 and r.headers["allow"] in ("GET, OPTIONS", "GET, HEAD, OPTIONS")


def test_a_missing_required_body_is_a_400_naming_the_body(client: TestClient[Any]) -> None:
    key = client.post("/api/v1/projects", json={"name": "body"}, headers=ADMIN).json()["api_key"]
    r = client.post("/api/v1/tasks", headers={"X-API-Key": key})
    assert r.status_code == 400
    assert r.json() == {
        "error": {"code": "VALIDATION_ERROR", "message": "body: required: a JSON object"},
        "field": "body",
    }
    # JSON numbers without a fraction are integers; true and "2" are not.
    for priority, status in ((2.0, 201), (True, 400), ("2", 400), (2.5, 400)):
        r = client.post(
            "/api/v1/tasks", json={"title": "t", "priority": priority}, headers={"X-API-Key": key}
        )
        assert r.status_code == status, (priority, r.text)


def test_untyped_page_parameters_are_documented_as_the_pager_takes_them() -> None:
    from agentlanes.api.openapi import _finish_parameters

    operation = {
        "parameters": [
            {"name": n, "in": "query", "schema": {"oneOf": [{"type": "string"}, {"type": "null"}]}}
            for n in ("limit", "offset", "q")
        ]
    }
    _finish_parameters(operation)
    schemas = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert schemas["limit"] == {"type": "integer", "minimum": 1, "maximum": 500}
    assert schemas["offset"]["minimum"] == 0
    assert schemas["q"] == {"oneOf": [{"type": "string"}, {"type": "null"}]}


# Every character Python trims (the services' `str.strip`), and one it does not (\ufeff,
# which ECMA-262's `\s` takes in).
_WHITE = [chr(c) for c in range(0x3001) if chr(c).isspace()]
_PROBES = [
    *_WHITE,
    *(f"a{w}b" for w in _WHITE),
    *(f"{w}a{w}" for w in _WHITE),
    "\ufeff",
    "a\x01b",
    "\x01",
    "a\x7fb",
    "\x85\n\x85",
    "a\x85\nb",
]


def test_text_rules_agree_with_the_server_on_every_kind_of_white_space(
    client: TestClient[Any], document: dict[str, Any]
) -> None:
    """A string the schema allows is never refused as bad input, and one it forbids is,
    judged both by a validator with Python's regex dialect and by one with ECMA-262's (the
    one schemathesis uses), for every field kind: required and optional, single-line and
    not, text that must not be blank. Regex engines disagree on what ``\\s`` holds; a
    schemathesis run once sent ``"action": "\\u0085"``, allowed by ``\\S``, trimmed to
    nothing by the server."""
    import jsonschema
    import jsonschema_rs

    project = client.post("/api/v1/projects", json={"name": "ws"}, headers=ADMIN).json()
    key, slug = project["api_key"], project["slug"]
    token = client.post(
        "/api/v1/checkin", json={"agent_name": "probe"}, headers={"X-API-Key": key}
    ).json()["session_token"]
    schemas = document["components"]["schemas"]
    fields = [  # (schema, field, method, path, body around the probe, headers)
        ("TaskBody", "title", "POST", "/api/v1/tasks", {}, {}),
        ("TaskBody", "description", "POST", "/api/v1/tasks", {"title": "t"}, {}),
        ("CheckinBody", "declared_area", "POST", "/api/v1/checkin", {}, {}),
        ("MessageBody", "body", "POST", "/api/v1/messages", {"to": "broadcast"}, {}),
        ("MessageBody", "type", "POST", "/api/v1/messages", {"to": "a", "body": "b"}, {}),
        ("ConsensusBody", "action", "POST", "/api/v1/consensus", {"reason": "r"}, {}),
        ("ProjectCreate", "name", "POST", "/api/v1/projects", {}, ADMIN),
        ("ProjectUpdate", "name", "PATCH", f"/api/v1/projects/{slug}", {}, ADMIN),
    ]
    for schema_name, field, method, path, around, extra in fields:
        schema = schemas[schema_name]["properties"][field]
        python, ecma = jsonschema.Draft202012Validator(schema), jsonschema_rs.validator_for(schema)
        probes = [*_PROBES, "a" * schema["maxLength"] + " ", " " + "a" * schema["maxLength"]]
        headers = {"X-API-Key": key, "X-Session-Token": token, **extra}
        for probe in probes:
            allowed = python.is_valid(probe)
            assert ecma.is_valid(probe) == allowed, (schema_name, field, probe)
            r = client.request(method, path, json={**around, field: probe}, headers=headers)
            refused = r.status_code == 400
            assert refused != allowed, (schema_name, field, probe, r.status_code, r.text)
