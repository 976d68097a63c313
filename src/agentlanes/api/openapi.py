"""The OpenAPI document as the contract: the error model on every operation, the security
each one needs, and the limits the running settings enforce.

Litestar builds the document from the route handlers; it knows nothing of our error body
(it documents ``{"detail": ...}``) nor of the statuses our guards and services answer. So
``ContractJsonPlugin``, the render plugin that serves ``/schema/openapi.json``, finishes a
copy of the document Litestar hands it (once: the copy is kept) with ``finish_document``,
operation by operation, from what every route handler declares:

- every operation answers 400 when it takes a body, a query, a path parameter or a
  session token; 401 and 429 (and 503 when the database is away) when a guard needs a key;
  404 when its path names a resource or it acts as a session; 410 when it acts as a session;
  413 when it takes a body; 421 always (a Host not in allowed_hosts); and any status its
  handler adds with ``opt=contract(...)``;
- each operation carries the security its guards enforce (``ApiKey``, ``AdminToken``) and,
  when it acts as a session, ``SessionToken``;
- a limit that comes from the settings is written as ``Limit("max_patterns")`` in a model's
  schema and replaced here by the value this server enforces.

Routes added later by anyone get all of this without doing anything but declaring their
guards (and ``contract(...)`` for extra statuses), so the document cannot drift from them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from litestar import Litestar, Request
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.routes import HTTPRoute
from pydantic import BaseModel

from agentlanes.api.fields import Limit
from agentlanes.api.schemas import Body
from agentlanes.settings import LIMITS, Settings

SESSION_REQUIRED = "required"
SESSION_OPTIONAL = "optional"

# What each status means here, and the codes (error.code) it can carry (SPEC "Conventions").
STATUS_CODES: dict[int, tuple[str, tuple[str, ...]]] = {
    400: ("Bad input: the body, a query or path parameter, or a header", ("VALIDATION_ERROR",)),
    401: ("Missing or wrong credentials", ("UNAUTHORIZED",)),
    404: (
        "No such resource in this project (or no session with this token, or no agent "
        "of that name)",
        ("NOT_FOUND", "SESSION_NOT_FOUND", "AGENT_NOT_FOUND"),
    ),
    409: (
        "Refused: it conflicts with the current state",
        ("CONFLICT", "LEASE_CONFLICT", "TASK_ALREADY_CLAIMED"),
    ),
    410: ("The session has ended (its status says how)", ("SESSION_ENDED",)),
    413: ("The request body is larger than max_body_bytes", ("PAYLOAD_TOO_LARGE",)),
    421: (
        "The Host header is not one of this server's names (allowed_hosts)",
        ("HOST_NOT_ALLOWED",),
    ),
    429: ("Over the rate limit for this API key", ("RATE_LIMITED",)),
    503: ("A service this call needs (the database) is unavailable; retry later", ()),
}

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "Every error: `error.code` for programs, `error.message` for people; the extra "
        "fields an error carries stand at the top level beside `error`."
    ),
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        },
        "field": {"type": "string", "description": "The offending field or parameter (400, 413)"},
        "index": {"type": "integer", "description": "Which item of the field's list (400)"},
        "source": {"type": "string", "enum": ["query", "path", "header"]},
        "conflicts": {
            "type": "array",
            "items": {"type": "object"},
            "description": "The conflicts that refused a check-in or scope change (409 CONFLICT)",
        },
        "conflicts_total": {
            "type": "integer",
            "description": "How many conflicts in all (409 CONFLICT; `conflicts` holds at most "
            "answer_max_conflicts)",
        },
        "truncated": {
            "type": "boolean",
            "description": "Some conflict or overlapping file is left out (409 CONFLICT)",
        },
        "outcome_status": {"type": "string", "description": "`blocked` on a refused check-in"},
        "status": {"type": "string", "description": "How the session ended (410)"},
        "session_id": {"type": "string"},
        "conflict": {"type": "boolean", "description": "true on 409 LEASE_CONFLICT"},
        "live_agents": {
            "type": "array",
            "description": "The live agents, by display name (404 AGENT_NOT_FOUND; at most 50)",
            "items": {
                "type": "object",
                "properties": {
                    "display_name": {"type": "string"},
                    "agent_name": {"type": "string"},
                },
            },
        },
        "live_agents_total": {
            "type": "integer",
            "description": "How many agents are live (404 AGENT_NOT_FOUND)",
        },
        "lease_holder": {
            "type": "object",
            "description": "Who holds the lease (409 LEASE_CONFLICT)",
            "properties": {
                "session_id": {"type": "string"},
                "agent_name": {"type": "string"},
                "expires_at": {"type": "string", "format": "date-time"},
            },
        },
    },
}

SECURITY_SCHEMES: dict[str, SecurityScheme] = {
    "ApiKey": SecurityScheme(
        type="apiKey",
        name="X-API-Key",
        security_scheme_in="header",
        description="The project's API key; it opens the project every call is scoped to.",
    ),
    "SessionToken": SecurityScheme(
        type="apiKey",
        name="X-Session-Token",
        security_scheme_in="header",
        description=(
            "The session token from check-in (64 lowercase hex). A body field "
            "`session_token` is accepted too; the header wins when both are sent."
        ),
    ),
    "AdminToken": SecurityScheme(
        type="http",
        scheme="bearer",
        description="`Authorization: Bearer <admin_token>` for the admin API.",
    ),
}


def components() -> Components:
    """The parts of the document the application declares up front."""
    return Components(security_schemes=dict(SECURITY_SCHEMES))


def contract(*errors: int, session: str | None = None) -> dict[str, Any]:
    """A handler's ``opt``: the statuses it answers beyond the generic ones, and whether it
    acts as a session (``"required"``) or may (``"optional"``)."""
    return {"contract": {"errors": tuple(errors), "session": session}}


def _handlers(app: Litestar) -> Iterator[tuple[str, str, HTTPRouteHandler]]:
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            for method in handler.http_methods:
                yield route.path_format or "/", method.lower(), handler


def _guard_names(handler: HTTPRouteHandler) -> set[str]:
    # The guards as declared on each layer, app to handler (resolve_guards() would give
    # sync ones wrapped in Litestar's AsyncCallable).
    return {
        getattr(guard, "__name__", "")
        for layer in handler.ownership_layers
        for guard in layer.guards or ()
    }


def _error_ref(status: int) -> dict[str, Any]:
    return {"$ref": f"#/components/responses/Error{status}"}


def _error_responses() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for status, (description, codes) in STATUS_CODES.items():
        schema: dict[str, Any] = {"$ref": "#/components/schemas/Error"}
        if codes:
            codes_text = ", ".join(f"`{code}`" for code in codes)
            description = f"{description}. error.code: {codes_text}"
        out[f"Error{status}"] = {
            "description": description,
            "content": {"application/json": {"schema": schema}},
        }
    return out


def _statuses(path: str, operation: dict[str, Any], handler: HTTPRouteHandler) -> set[int]:
    declared = handler.opt.get("contract", {})
    session = declared.get("session")
    guards = _guard_names(handler)
    statuses: set[int] = set(declared.get("errors", ()))
    statuses.add(421)  # every route checks Host (api/edge.py)
    has_body = "requestBody" in operation
    if has_body or operation.get("parameters") or session:
        statuses.add(400)
    if has_body:
        statuses.add(413)
    if guards:
        statuses.update((401, 429, 503))
    if "{" in path or session:
        statuses.add(404)
    if session:
        statuses.add(410)
    return statuses


def _security(handler: HTTPRouteHandler) -> list[dict[str, list[str]]] | None:
    guards = _guard_names(handler)
    session = handler.opt.get("contract", {}).get("session")
    if "admin_guard" in guards:
        return [{"AdminToken": []}]
    if "api_key_guard" not in guards:
        return None
    if session == SESSION_REQUIRED:
        return [{"ApiKey": [], "SessionToken": []}]
    if session == SESSION_OPTIONAL:
        return [{"ApiKey": [], "SessionToken": []}, {"ApiKey": []}]
    return [{"ApiKey": []}]


def _is_litestar_error(response: dict[str, Any]) -> bool:
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    return "detail" in schema.get("properties", {})


def _resolve_limits(node: Any, settings: Settings) -> Any:
    if isinstance(node, Limit):
        return getattr(settings, node.key)
    if isinstance(node, dict):
        return {key: _resolve_limits(value, settings) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolve_limits(value, settings) for value in node]
    return node


def _closed_models() -> set[str]:
    """Names of the request bodies (every ``Body``, however deep): they refuse unknown fields."""
    names: set[str] = set()
    pending: list[type[BaseModel]] = [Body]
    while pending:
        for sub in pending.pop().__subclasses__():
            pending.append(sub)
            if sub.model_config.get("extra") == "forbid":
                names.add(sub.__name__)
    return names


# Request bodies refuse NUL in any string, nested ones too (api/schemas.py: PostgreSQL text
# cannot hold it); the document says so on every string and free-form object of a body.
# JsonWithoutNul (the values of `meta`, `config`, ...) has no `type` and no `anyOf`: each
# keyword applies only to its own kind of value (`not` to strings, `items` to arrays,
# `propertyNames` and, through `if`/`then`, `additionalProperties` to objects), so it
# admits any JSON value whose strings and keys hold no NUL: the same set as an `anyOf` of
# one branch per type, in a shape generators take. openapi-python-client 0.29 cannot parse
# a union that refers to itself (it dropped POST /checkin and PUT /agents/{name}: see
# tests/e2e/test_generated_client.py) and sees any value here; openapi-typescript 7 reads a
# bare `additionalProperties` as "an object", hence the `if`, and sees `unknown`.
_NO_NUL: dict[str, Any] = {"type": "string", "pattern": "\\x00"}
JSON_WITHOUT_NUL: dict[str, Any] = {
    "description": "Any JSON value without a NUL character in a string or key",
    "not": _NO_NUL,
    "items": {"$ref": "#/components/schemas/JsonWithoutNul"},
    "propertyNames": {"not": _NO_NUL},
    "if": {"type": "object"},
    "then": {"additionalProperties": {"$ref": "#/components/schemas/JsonWithoutNul"}},
}


def _refuse_nul(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _refuse_nul(item)
        return
    if not isinstance(node, dict):
        return
    if node.get("type") == "string" and "not" not in node:
        node["not"] = dict(_NO_NUL)
    if node.get("type") == "object" and node.get("additionalProperties") == {}:
        node["propertyNames"] = {"not": dict(_NO_NUL)}
        node["additionalProperties"] = {"$ref": "#/components/schemas/JsonWithoutNul"}
    for key, value in node.items():
        if key != "not":
            _refuse_nul(value)


# A handler that takes `limit` or `offset` as a bare string passes it to
# validation.check_page(): the one pager of the API. Said here once, so that a list route
# added later without annotating them (api/query.py's PageLimit, PageOffset) is still
# documented right.
_UNTYPED = {"oneOf": [{"type": "string"}, {"type": "null"}]}
PAGE_PARAMETERS: dict[str, dict[str, Any]] = {
    "limit": {"type": "integer", "minimum": 1, "maximum": LIMITS.page_size},
    "offset": {"type": "integer", "minimum": 0, "maximum": LIMITS.page_offset},
}


def _finish_parameters(operation: dict[str, Any]) -> None:
    for parameter in operation.get("parameters", []):
        page = PAGE_PARAMETERS.get(parameter.get("name"))
        if parameter.get("in") == "query" and page and parameter.get("schema") == _UNTYPED:
            parameter["schema"] = dict(page)


def _finish_body(operation: dict[str, Any]) -> None:
    body = operation.get("requestBody")
    if not body:
        return
    schema = body.get("content", {}).get("application/json", {}).get("schema", {})
    # `JSONBody[Model | None] = None`: the body may be left out altogether.
    if {"type": "null"} in schema.get("oneOf", []):
        body["required"] = False


def finish_document(document: dict[str, Any], app: Litestar, settings: Settings) -> None:
    """Rewrite Litestar's document in place into the contract (see the module's doc)."""
    handlers = {(path, method): handler for path, method, handler in _handlers(app)}
    comps = document.setdefault("components", {})
    schemas = comps.setdefault("schemas", {})
    for name in _closed_models() & set(schemas):
        schemas[name]["additionalProperties"] = False
        _refuse_nul(schemas[name].get("properties", {}))
    schemas["JsonWithoutNul"] = JSON_WITHOUT_NUL
    schemas["Error"] = ERROR_SCHEMA
    comps.setdefault("responses", {}).update(_error_responses())
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            handler = handlers.get((path, method))
            if handler is None or not isinstance(operation, dict):
                continue
            _finish_body(operation)
            _finish_parameters(operation)
            responses = operation.setdefault("responses", {})
            for status in [s for s, r in responses.items() if _is_litestar_error(r)]:
                del responses[status]
            for status in sorted(_statuses(path, operation, handler)):
                responses.setdefault(str(status), _error_ref(status))
            security = _security(handler)
            if security is not None:
                operation["security"] = security
    resolved = _resolve_limits(document, settings)
    document.clear()
    document.update(resolved)


class ContractJsonPlugin(JsonRenderPlugin):
    """``/schema/openapi.json``: Litestar's document, finished into the contract.

    Litestar hands every render plugin the document it built (``render``, its public
    interface for UI plugins); this one finishes a copy the first time and serves that
    copy from then on, so Litestar's own document stays as Litestar built it."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self._settings = settings
        self._built: dict[str, Any] | None = None  # the document the copy was made from
        self._finished: dict[str, Any] = {}

    def finished(self, app: Litestar, document: dict[str, Any]) -> dict[str, Any]:
        """The contract made from Litestar's ``document`` (made again if Litestar rebuilt it)."""
        if self._built is not document:
            finished = copy.deepcopy(document)
            finish_document(finished, app, self._settings)
            self._built, self._finished = document, finished
        return self._finished

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return super().render(request, self.finished(request.app, openapi_schema))
