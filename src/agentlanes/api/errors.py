"""The one place where errors become HTTP answers: ``{"error": {code, message}, ...extra}``."""

from __future__ import annotations

import logging
from typing import Any

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, NotAuthorizedException, ValidationException
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR

from agentlanes.errors import AgentlanesError
from agentlanes.store.availability import OutageLog, database_unavailable

log = logging.getLogger("agentlanes.api")

_CODES = {
    400: "VALIDATION_ERROR",
    401: "UNAUTHORIZED",
    403: "UNAUTHORIZED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    410: "SESSION_ENDED",
    413: "PAYLOAD_TOO_LARGE",
    415: "VALIDATION_ERROR",
    429: "RATE_LIMITED",
}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> Response[Any]:
    return Response(
        {"error": {"code": code, "message": message}, **extra},
        status_code=status,
        media_type=MediaType.JSON,
        headers=headers,
    )


def _on_domain_error(_: Request[Any, Any, Any], exc: AgentlanesError) -> Response[Any]:
    return Response(exc.body(), status_code=exc.status_code, media_type=MediaType.JSON)


def _on_validation(_: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    problems = exc.extra if isinstance(exc.extra, list) else []
    if not problems:
        detail = str(exc.detail or "invalid request")
        return error_response(400, "VALIDATION_ERROR", f"body: {detail}", field="body")
    first = problems[0] if isinstance(problems[0], dict) else {}
    key = str(first.get("key") or "body")
    message = str(first.get("message") or "invalid value")
    if key == "data":
        # Litestar names a required body that was not sent by the handler's argument.
        key, message = "body", "required: a JSON object"
    field, _dot, rest = key.partition(".")
    extra: dict[str, Any] = {"field": field}
    if rest.isdigit():
        extra["index"] = int(rest)
    source = first.get("source")
    if source in ("query", "path", "header"):
        extra["source"] = source
    return error_response(400, "VALIDATION_ERROR", f"{key}: {message}", **extra)


def _on_http(_: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    if status >= 500:
        log.error("server error: %s", exc.detail)
        return error_response(status, "INTERNAL_ERROR", "internal error")
    code = _CODES.get(status, "BAD_REQUEST")
    message = str(exc.detail or code)
    if status == 413:
        message = "request body is too large"
    elif status == 400 and not message.startswith("body"):
        message = f"body: {message}"  # a body that is not JSON: named as the other fields are
    extra: dict[str, Any] = {"field": "body"} if status in (400, 413, 415) else {}
    # Litestar's routing puts the methods a path allows in the exception (`Allow`, RFC 9110).
    headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() == "allow"}
    if status == 429:
        # The limiter's headers, and Retry-After: the seconds until the window resets.
        limits = {k: v for k, v in (exc.headers or {}).items() if k.lower().startswith("ratelimit")}
        headers.update(limits)
        reset = next((v for k, v in limits.items() if k.lower() == "ratelimit-reset"), None)
        headers["Retry-After"] = str(max(1, int(reset))) if reset and reset.isdigit() else "60"
    return error_response(status, code, message, headers=headers or None, **extra)


def _on_too_deep(_: Request[Any, Any, Any], exc: RecursionError) -> Response[Any]:
    return error_response(400, "VALIDATION_ERROR", "body: nested too deeply", field="body")


def _on_not_utf8(request: Request[Any, Any, Any], exc: UnicodeDecodeError) -> Response[Any]:
    # JSON is UTF-8 (RFC 8259); the decoder's own words name the first bad byte.
    return error_response(
        400,
        "VALIDATION_ERROR",
        f"body: not valid UTF-8 ({exc.reason} at byte {exc.start})",
        field="body",
    )


def _on_value_error(request: Request[Any, Any, Any], exc: ValueError) -> Response[Any]:
    # A NUL in a path ("/static/app.js%00.html") reaches the file system as "embedded null
    # byte": no file has such a name, so it is not found (SPEC: a path with %00 is a 404).
    if "\x00" in request.url.path or "null byte" in str(exc):
        return error_response(404, "NOT_FOUND", "Not Found")
    return _on_unexpected(request, exc)


def database_unavailable_response(request: Request[Any, Any, Any]) -> Response[Any]:
    """503 SERVICE_UNAVAILABLE with a ``Retry-After`` hint (the setting
    ``unavailable_retry_after_seconds``): the call was not acknowledged, and the client
    may repeat it once the database is back."""
    response = error_response(
        503, "SERVICE_UNAVAILABLE", "the database is unavailable; try again shortly"
    )
    ctx = getattr(request.app.state, "ctx", None)  # set by the lifespan, so always there
    if ctx is not None:
        response.headers["Retry-After"] = str(ctx.settings.unavailable_retry_after_seconds)
    return response


def _on_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if database_unavailable(exc):
        ctx = getattr(request.app.state, "ctx", None)  # set by the lifespan
        outages = ctx.request_outages if ctx is not None else OutageLog(log)
        outages.note(f"{request.method} {request.url.path}", exc)
        return database_unavailable_response(request)
    log.exception("unhandled error", exc_info=exc)
    return error_response(HTTP_500_INTERNAL_SERVER_ERROR, "INTERNAL_ERROR", "internal error")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    AgentlanesError: _on_domain_error,
    ValidationException: _on_validation,
    NotAuthorizedException: _on_http,
    HTTPException: _on_http,
    RecursionError: _on_too_deep,
    UnicodeDecodeError: _on_not_utf8,
    ValueError: _on_value_error,
    Exception: _on_unexpected,
}
