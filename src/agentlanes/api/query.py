"""Query-string values parsed with errors that name the parameter (400 VALIDATION_ERROR)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar.openapi.spec import OpenAPIType
from litestar.params import QueryParameter

from agentlanes.errors import InvalidInput
from agentlanes.services.paging import PageRequest
from agentlanes.settings import LIMITS

MAX_INT = 2**63 - 1  # what every database column here can hold


def int_param(name: str, raw: str | None) -> int | None:
    """An ASCII decimal integer within the databases' 64-bit range, or None when absent.

    Given but empty (``?limit=``) or with white space around it is not an integer: the
    document says ``integer``, and such a value is refused rather than read as absent."""
    if raw is None:
        return None
    digits = raw[1:] if raw[:1] in "+-" else raw
    if not (digits.isascii() and digits.isdigit()):
        raise InvalidInput(name, "must be an integer")
    value = int(raw)
    if not -MAX_INT <= value <= MAX_INT:
        raise InvalidInput(name, "is out of range")
    return value


def page_param(limit: str | None, offset: str | None) -> PageRequest:
    """``?limit=&offset=`` as a checked page (400 naming the parameter)."""
    return PageRequest.of(int_param("limit", limit), int_param("offset", offset))


def bool_param(name: str, raw: str | None) -> bool | None:
    """true/1/yes or false/0/no (any case), None when absent; given but empty is refused."""
    if raw is None:
        return None
    value = raw.lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise InvalidInput(name, "must be true or false")


# How these parameters are documented: the handlers take them as strings and parse them
# with the functions above (so a bad value is our 400 naming it), while the OpenAPI document
# states the type and range those functions and the services accept.
def _documented(description: str, **schema: Any) -> QueryParameter:
    return QueryParameter(schema_extra={"one_of": None, "description": description, **schema})


def int_query(minimum: int, maximum: int, description: str) -> Any:
    """An optional integer query parameter in ``minimum..maximum``."""
    return Annotated[
        str | None,
        _documented(description, type=OpenAPIType.INTEGER, minimum=minimum, maximum=maximum),
    ]


def text_query(
    min_length: int, max_length: int, description: str, pattern: str | None = None
) -> Any:
    """An optional string query parameter of ``min_length..max_length`` characters (and of
    ``pattern``, when given)."""
    extra = {} if pattern is None else {"pattern": pattern}
    return Annotated[
        str | None,
        _documented(
            description,
            type=OpenAPIType.STRING,
            min_length=min_length,
            max_length=max_length,
            **extra,
        ),
    ]


def enum_query(values: tuple[str, ...], description: str) -> Any:
    return Annotated[str | None, _documented(description, type=OpenAPIType.STRING, enum=values)]


Flag = Annotated[str | None, _documented("true or false", type=OpenAPIType.BOOLEAN)]
PageLimit = int_query(1, LIMITS.page_size, f"Page size (default {LIMITS.page_size_default})")
PageOffset = int_query(0, LIMITS.page_offset, "How many to skip")
