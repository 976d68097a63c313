"""Query parameters: typed, read by our rules, a bad value a 400 naming the parameter.

Integer parameters are typed ``QueryInt`` (``PageLimit``, ``PageOffset``, each
``Annotated[QueryInt | None, int_range(...)]``): Litestar reads them with
``QUERY_DECODERS``, given to the application as ``type_decoders`` (its public hook for
types it does not know: docs.litestar.dev/2/usage/custom-types.html), and a value they
refuse is a 400 naming the parameter (``source: query``) through the validation handler
of api/errors.py. Our rule rather than Litestar's ``int``: an empty or
padded value (``?limit=``, ``?limit= 5``) is refused, not read as absent; ``+5`` is 5 and
``5.0`` is not an integer; the value fits a 64-bit column. The ranges the services take
are checked there and stated in the document (``schema_extra``). Checked against Litestar
2.25.0; tests/api/test_litestar_seams.py says what to re-check if an upgrade changes it.

Flags (``Flag``) are still text read by ``bool_param``: a query type of our own cannot be
a ``bool`` (no subclass of it), and Litestar's ``bool`` refuses the ``yes``/``no`` this
server has always taken.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar.openapi.spec import OpenAPIType
from litestar.params import QueryParameter

from agentlanes.errors import InvalidInput
from agentlanes.services.paging import PageRequest
from agentlanes.settings import LIMITS

MAX_INT = 2**63 - 1  # what every database column here can hold


def parse_int(raw: str) -> int:
    """An ASCII decimal integer within the databases' 64-bit range (``ValueError`` if not).

    Empty or with white space around it is not an integer: the document says ``integer``,
    and such a value is refused rather than read as absent."""
    digits = raw[1:] if raw[:1] in "+-" else raw
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError("must be an integer")
    value = int(raw)
    if not -MAX_INT <= value <= MAX_INT:
        raise ValueError("is out of range")
    return value


def int_param(name: str, raw: str | None) -> int | None:
    """``parse_int`` for a value read by hand (a WebSocket's query): None when absent,
    ``InvalidInput`` naming ``name`` when bad."""
    if raw is None:
        return None
    try:
        return parse_int(raw)
    except ValueError as exc:
        raise InvalidInput(name, str(exc)) from None


class QueryInt(int):
    """An integer query parameter, read by ``decode_int``: an ``int`` everywhere (Litestar
    writes a subclass of ``int`` as an integer in answers)."""


def decode_int(_: type, raw: Any) -> QueryInt:
    if not isinstance(raw, str):  # a query value is always text
        raise TypeError("must be an integer")
    return QueryInt(parse_int(raw))


QUERY_DECODERS: list[tuple[Any, Any]] = [(lambda kind: kind is QueryInt, decode_int)]


def page_param(limit: int | None, offset: int | None) -> PageRequest:
    """``?limit=&offset=`` as a checked page (400 naming the parameter)."""
    return PageRequest.of(limit, offset)


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


# How these parameters are documented: the type and range the decoders and the services
# accept, without the `null` branch Litestar writes for an optional parameter (absent is
# how a parameter is left out; `?limit=` is refused).
def _documented(description: str, **schema: Any) -> QueryParameter:
    return QueryParameter(schema_extra={"one_of": None, "description": description, **schema})


def int_range(minimum: int, maximum: int, description: str) -> QueryParameter:
    """How an optional integer query parameter in ``minimum..maximum`` is documented:
    ``Annotated[QueryInt | None, int_range(...)]``."""
    return _documented(description, type=OpenAPIType.INTEGER, minimum=minimum, maximum=maximum)


def text_range(
    min_length: int, max_length: int, description: str, pattern: str | None = None
) -> QueryParameter:
    """How an optional string query parameter of ``min_length..max_length`` characters (and
    of ``pattern``, when given) is documented: ``Annotated[str | None, text_range(...)]``."""
    extra = {} if pattern is None else {"pattern": pattern}
    return _documented(
        description,
        type=OpenAPIType.STRING,
        min_length=min_length,
        max_length=max_length,
        **extra,
    )


def choices(values: tuple[str, ...], description: str) -> QueryParameter:
    """How an optional string query parameter taking one of ``values`` is documented:
    ``Annotated[str | None, choices(...)]``."""
    return _documented(description, type=OpenAPIType.STRING, enum=values)


Flag = Annotated[str | None, _documented("true or false", type=OpenAPIType.BOOLEAN)]
PageLimit = Annotated[
    QueryInt | None,
    int_range(1, LIMITS.page_size, f"Page size (default {LIMITS.page_size_default})"),
]
PageOffset = Annotated[QueryInt | None, int_range(0, LIMITS.page_offset, "How many to skip")]
