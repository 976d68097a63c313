"""One exception tree for the Python client (issue 29): every error is a ClientError, the
local configuration's too, and each error code of the contract has its ApiError subclass
that still carries ``.code``, ``.status`` and the body's fields."""

from __future__ import annotations

import pytest

from agentlanes.client import errors
from agentlanes.client.config import ConfigError


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    [
        (400, "VALIDATION_ERROR", errors.ValidationError),
        (401, "UNAUTHORIZED", errors.Unauthorized),
        (404, "NOT_FOUND", errors.NotFound),
        (404, "SESSION_NOT_FOUND", errors.SessionNotFound),
        (410, "SESSION_ENDED", errors.SessionEnded),
        (409, "CONFLICT", errors.StateConflict),
        (409, "LEASE_CONFLICT", errors.LeaseConflict),
        (409, "TASK_ALREADY_CLAIMED", errors.TaskAlreadyClaimed),
        (429, "RATE_LIMITED", errors.RateLimited),
    ],
)
def test_each_code_has_its_subclass_and_keeps_its_fields(
    status: int, code: str, kind: type[errors.ApiError]
) -> None:
    body = {"error": {"code": code, "message": "no"}, "field": "x", "status": "timed_out"}
    exc = errors.ApiError.from_response(status, body)
    assert type(exc) is kind
    assert isinstance(exc, errors.ApiError) and isinstance(exc, errors.ClientError)
    assert (exc.status, exc.code, exc.message, exc.field) == (status, code, "no", "x")


def test_an_unknown_code_or_shape_stays_an_api_error() -> None:
    exc = errors.ApiError.from_response(418, {"error": {"code": "TEAPOT", "message": "m"}})
    assert type(exc) is errors.ApiError and exc.code == "TEAPOT"
    exc = errors.ApiError.from_response(502, "<html>bad gateway</html>", "bad gateway")
    assert type(exc) is errors.ApiError and exc.code == "HTTP_ERROR"


def test_session_ended_says_how_and_a_missing_session_is_a_not_found() -> None:
    exc = errors.ApiError.from_response(
        410, {"error": {"code": "SESSION_ENDED", "message": "m"}, "status": "timed_out"}
    )
    assert isinstance(exc, errors.SessionEnded) and exc.session_status == "timed_out"
    assert issubclass(errors.SessionNotFound, errors.NotFound)


def test_the_local_configuration_error_is_a_client_error() -> None:
    assert issubclass(ConfigError, errors.ClientError)
    with pytest.raises(errors.ClientError):
        raise ConfigError("bad .agentlanes.toml")
