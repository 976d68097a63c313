"""What the services check, written into the request models' schemas (documentation only).

The services stay the one place that enforces each rule (and names the field in a 400); the
models carry the same rules as JSON Schema so that the OpenAPI document allows exactly what
the server accepts. Each helper returns a pydantic ``Field`` whose ``json_schema_extra``
Litestar copies into the document; limits the settings decide are ``Limit`` values that the
document's finishing step (api/openapi.py) replaces with the running server's figures.

Patterns are written without ``^``/``$`` anchors (``$`` would let a trailing newline through
in Python's regex dialect): "no character outside the set" is ``not: {pattern: [^set]}``.
"""

from __future__ import annotations

from typing import Any, cast

from litestar.openapi.spec import OpenAPIFormat, OpenAPIType, Schema
from pydantic import Field

from agentlanes.domain import names
from agentlanes.services.coordination import leases
from agentlanes.settings import LIMITS


class Limit(int):
    """A limit the settings decide, in a model's ``json_schema_extra``: replaced by the
    running server's value when the document is finished (an int until then)."""

    key: str

    def __new__(cls, key: str) -> Limit:
        value = super().__new__(cls, 0)
        value.key = key
        return value


# White space as the services trim it (Python's `str.strip`, `str.isspace`), written out:
# regex engines disagree on `\s`. ECMA-262's, which JSON Schema validators such as
# jsonschema-rs follow, leaves out \x1c-\x1f and \x85 and takes in \ufeff, so `\S` would
# call "\x85" text that the services trim to nothing.
WHITE_SPACE = (
    "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
)
NON_BLANK = f"[^{WHITE_SPACE}]"
# Single-line text (`validation.check_text(..., single_line=True)`) is refused when, once
# trimmed, it holds a control character: one that is not white space anywhere, or a
# white-space one (tab, newline, ... \x1c-\x1f) with something other than white space on
# both sides.
_CONTROL_AFTER_TRIM = (
    f"[\\x00-\\x08\\x0e-\\x1b]|{NON_BLANK}[\\s\\S]*[\\t-\\r\\x1c-\\x1f][\\s\\S]*{NON_BLANK}"
)
_CONTROL = "[\\x00-\\x1f]"
NAME_CHARS = names.NAME_CHARS
# Formats of our own (described in docs/api.md): OpenAPI takes any format name, Litestar's
# ``Schema.format`` is typed with the registered ones only.
GLOB_PATTERN = cast("OpenAPIFormat", "glob-pattern")
REPO_PATH = cast("OpenAPIFormat", "repo-path")


def schema_extra(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` as a ``Field``'s ``json_schema_extra``, typed as Litestar reads it: it
    writes them into the document and takes its own ``Schema`` objects there (``not``,
    ``items``), where pydantic's type says JSON values only."""
    return values


def _not_matching(pattern: str) -> Schema:
    # `type: string` inside, so that `null` (allowed by optional fields) still passes.
    return Schema(type=OpenAPIType.STRING, pattern=pattern)


def text(
    max_chars: int | Limit,
    *,
    required: bool = False,
    nonblank: bool | None = None,
    single_line: bool = False,
    trimmed: bool = True,
    description: str | None = None,
) -> Any:
    """A string the services trim (unless ``trimmed=False``) and check against
    ``max_chars``; required (or ``nonblank``) text must hold something besides white space;
    single-line text no control character (white space at either end is trimmed first)."""
    extra: dict[str, Any] = {"maxLength": max_chars}
    if required:
        extra["minLength"] = 1
    if nonblank if nonblank is not None else required:
        extra["pattern"] = NON_BLANK
    if single_line:
        extra["not"] = _not_matching(_CONTROL_AFTER_TRIM if trimmed else _CONTROL)
    if description:
        extra["description"] = description
    return Field(... if required else None, json_schema_extra=extra)


def name(description: str, *, required: bool = False) -> Any:
    """An agent name: 1-64 of ``A-Z a-z 0-9 . _ -``."""
    extra: dict[str, Any] = {
        "minLength": 1,
        "maxLength": 64,
        "not": _not_matching(f"[^{NAME_CHARS}]"),
        "description": description,
    }
    return Field(... if required else None, json_schema_extra=extra)


def one_of(*values: str, required: bool = False, description: str | None = None) -> Any:
    extra: dict[str, Any] = {"enum": list(values)}
    if not required:
        extra["enum"].append(None)
    if description:
        extra["description"] = description
    return Field(... if required else None, json_schema_extra=extra)


def heartbeat_interval(description: str) -> Any:
    return integer(1, LIMITS.heartbeat_interval_max_seconds, description=description)


def block_on() -> Any:
    """The project setting of line-level claims (SPEC): what block mode refuses on."""
    return Field(
        None,
        description=(
            "What block mode refuses on: claims (every certain overlap, the default) or "
            "lines (only an overlap whose edits meet, or where only the other side edited)"
        ),
    )


def line_margin() -> Any:
    return integer(
        0,
        LIMITS.line_margin_max,
        description="Unchanged lines between two edits that still count as meeting (default 0)",
    )


def heartbeat_ttl() -> Any:
    return integer(
        1, LIMITS.heartbeat_ttl_max_seconds, description="At least heartbeat_interval_seconds"
    )


def config_keys(description: str) -> Any:
    """A project's agent config keys: each 1-64 of A-Z a-z 0-9 _ . -."""
    item = Schema(
        type=OpenAPIType.STRING,
        min_length=1,
        max_length=64,
        schema_not=_not_matching("[^A-Za-z0-9_.-]"),
    )
    extra = {"items": item, "maxItems": LIMITS.agent_config_keys, "description": description}
    return Field(None, json_schema_extra=schema_extra(extra))


def integer(minimum: int, maximum: int | Limit, *, required: bool = False, description: str) -> Any:
    extra: dict[str, Any] = {"minimum": minimum, "maximum": maximum, "description": description}
    return Field(... if required else None, json_schema_extra=extra)


def patterns(description: str) -> Any:
    """File patterns (SPEC "File patterns"): at most ``max_patterns``, each at most
    ``max_pattern_length``; the rest of the pattern rules (relative, no ``..``, wildcard and
    brace limits) are the ``glob-pattern`` format's, described in docs/api.md."""
    item = Schema(
        type=OpenAPIType.STRING,
        format=GLOB_PATTERN,
        min_length=1,
        max_length=Limit("max_pattern_length"),
    )
    extra: dict[str, Any] = {
        "maxItems": Limit("max_patterns"),
        "items": item,
        "description": description,
    }
    return Field(None, json_schema_extra=extra)


def paths(description: str) -> Any:
    """Concrete relative file paths: at most ``max_paths``, each a ``repo-path``."""
    item = Schema(
        type=OpenAPIType.STRING,
        format=REPO_PATH,
        min_length=1,
        max_length=Limit("max_pattern_length"),
    )
    extra: dict[str, Any] = {
        "maxItems": Limit("max_paths"),
        "items": item,
        "description": description,
    }
    return Field(None, json_schema_extra=extra)


def ids(max_items: int, *, required: bool = False, description: str) -> Any:
    extra: dict[str, Any] = {"maxItems": max_items, "description": description}
    if required:
        extra["minItems"] = 1
    return Field(... if required else None, json_schema_extra=extra)


def resource(description: str = "A resource key such as deploy:prod") -> Any:
    """Lease resource keys: 1-256 characters, none of them a control character (taken as sent)."""
    extra: dict[str, Any] = {
        "minLength": 1,
        "maxLength": 256,
        "not": _not_matching(leases.RESOURCE_FORBIDDEN),
        "description": description,
    }
    return Field(..., json_schema_extra=extra)


def json_object(max_bytes: int, description: str) -> Any:
    # The byte limit is on the JSON text and has no JSON Schema keyword; it is described.
    return Field(None, json_schema_extra={"description": f"{description} (≤ {max_bytes} bytes)"})


SESSION_TOKEN = Field(
    None,
    json_schema_extra={
        "description": (
            "The session token, for clients that cannot send the X-Session-Token header "
            "(the header wins when both are sent)."
        )
    },
)
