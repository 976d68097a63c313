"""Request bodies: types and shapes; the services check the values against the settings.

The values' rules are also written into each field's schema (api/fields.py), so that the
OpenAPI document allows what the services accept. Unknown fields are refused (a typo such
as ``declared_file`` should not pass silently), and the document says so.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, get_args

from litestar.openapi.spec import OpenAPIType, Schema
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationInfo,
    field_validator,
)

from agentlanes.api import fields
from agentlanes.api.fields import Limit
from agentlanes.domain.digests import DIGEST_MAX_HEX, DIGEST_MIN_HEX
from agentlanes.settings import LIMITS


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


def json_size_over(value: Any, max_bytes: int) -> bool:
    """Whether ``value`` as JSON takes more than ``max_bytes``, told after reading at
    most about ``max_bytes`` of it: the count is a lower bound of the JSON's length (a
    string's characters, a key's and its quotes and colon, a separator per item, a
    character per number), so the walk stops as soon as it passes the bound."""
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 2
            for key, inner in item.items():
                size += len(key) + 4 if isinstance(key, str) else 4
                stack.append(inner)
                if size > max_bytes:
                    return True
        elif isinstance(item, list):
            size += 2 + len(item)
            stack.extend(item)
        else:
            size += 1
        if size > max_bytes:
            return True
    return False


def _whole_numbers(value: Any) -> Any:
    """``value`` with each float that is a whole number an int, in nested lists too."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole_numbers(v) for v in value]
    return value


def _takes_int(annotation: Any) -> bool:
    return annotation is int or any(_takes_int(arg) for arg in get_args(annotation))


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Fields whose values are not walked here: lists the services bound and check item by
    # item before anything else (SPEC "One agent cannot hurt another": an edit's ranges are
    # counted against edits_max_ranges before they are read; a walk here first would cost
    # the event loop a second per 100,000 of them). Nested bodies check their own fields.
    UNWALKED: ClassVar[frozenset[str]] = frozenset()
    # Objects with a byte bound (SPEC: size-checked before they are walked): a 150,000-key
    # ``meta`` was copied and walked for seconds before its size was known.
    SIZED: ClassVar[dict[str, int]] = {}

    @field_validator("*", mode="before")
    @classmethod
    def _json_values(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name in cls.UNWALKED:
            return value
        bound = cls.SIZED.get(info.field_name or "")
        if bound is not None and json_size_over(value, bound):
            raise ValueError(f"must serialise to at most {bound} bytes of JSON")
        # PostgreSQL text cannot hold NUL; refuse it everywhere with the field's name.
        if _has_nul(value):
            raise ValueError("must not contain NUL bytes")
        # JSON has numbers, not ints and floats: 4.0 is the integer 4 (as JSON Schema's
        # `integer` says), in a list too (an edit's ranges). True and "4" stay for the
        # strict int check to refuse.
        if isinstance(value, float | list):
            field = cls.model_fields.get(info.field_name or "")
            if field is not None and _takes_int(field.annotation):
                return _whole_numbers(value)
        return value


class TokenBody(Body):
    session_token: StrictStr | None = fields.SESSION_TOKEN


class ProjectCreate(Body):
    name: StrictStr = fields.text(
        LIMITS.project_name_chars, required=True, description="1-200 characters"
    )
    slug: StrictStr | None = Field(
        None,
        json_schema_extra=fields.schema_extra(
            {
                "minLength": 1,
                "maxLength": 64,
                "pattern": "^[a-z0-9]",
                "not": Schema(type=OpenAPIType.STRING, pattern="[^a-z0-9-]"),
                "description": "1-64 of a-z 0-9 - starting with a-z 0-9; default: from the name",
            }
        ),
    )
    conflict_mode: Literal["warn", "block"] | None = None
    heartbeat_interval_seconds: StrictInt | None = fields.heartbeat_interval(
        "Default: the heartbeat_interval_seconds setting"
    )
    heartbeat_ttl_seconds: StrictInt | None = fields.heartbeat_ttl()
    agent_config_keys: list[StrictStr] | None = fields.config_keys(
        "The agent config keys the project accepts (1-64 of A-Z a-z 0-9 _ . -)"
    )
    block_on: Literal["claims", "lines"] | None = fields.block_on()
    line_margin: StrictInt | None = fields.line_margin()
    # Waiting for a lane (SPEC).
    auto_queue: StrictBool | None = Field(
        None, description="Queue a refused scope change for the session at once (default off)"
    )


class ClaimIn(Body):
    """Lines of one file claimed before editing them (SPEC "Line-level claims": range
    claims), as ``lanes checkin --files 'src/auth.py#Login.check'`` reads them."""

    path: StrictStr = Field(
        ...,
        json_schema_extra=fields.schema_extra(
            {
                "format": "repo-path",
                "minLength": 1,
                "maxLength": Limit("max_pattern_length"),
                # One file: no wildcard, brace or escape, no trailing '/'.
                "not": Schema(type=OpenAPIType.STRING, pattern="[*?\\[\\\\{]|/$"),
                "description": "The file, relative to the repository root (one file: no wildcard)",
            }
        ),
    )
    base: StrictStr | None = Field(
        None,
        json_schema_extra=fields.schema_extra(
            {
                "minLength": 4,
                "maxLength": 64,
                "not": Schema(type=OpenAPIType.STRING, pattern="[^0-9a-f]"),
                "description": "The file's blob id at HEAD the lines count in; null for a "
                "file new since HEAD. The claims of one file share one base",
            }
        ),
    )
    # Checked by the service, count first, as an edit's ranges.
    ranges: list[Any] = Field(
        ...,
        json_schema_extra=fields.schema_extra(
            {
                "items": Schema(
                    type=OpenAPIType.ARRAY,
                    prefix_items=[
                        Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=LIMITS.edit_line_max),
                        Schema(type=OpenAPIType.INTEGER, minimum=0, maximum=LIMITS.edit_line_max),
                    ],
                    min_items=2,
                    max_items=2,
                ),
                "minItems": 1,
                "maxItems": Limit("edits_max_ranges"),
                "description": "The base lines claimed, [start, end], 1-based and inclusive "
                "(as an edit's ranges). Graded against the other sessions' range claims and "
                "edits as edits are: meet, a certain overlap; apart, they coexist",
            }
        ),
    )
    symbol: StrictStr | None = fields.text(
        200,
        nonblank=True,
        single_line=True,
        description="The symbol the lines were read from (Login.check), shown to others",
    )

    UNWALKED = frozenset({"ranges"})


def claims_field(description: str) -> Any:
    return Field(
        None,
        max_length=LIMITS.edit_files,
        json_schema_extra={"maxItems": LIMITS.edit_files, "description": description},
    )


class CheckinBody(Body):
    agent_name: StrictStr | None = fields.name(
        "1-64 of A-Z a-z 0-9 . _ -; omitted, the server makes one up"
    )
    declared_area: StrictStr | None = fields.text(
        LIMITS.area_chars, nonblank=True, single_line=True, description="The work area"
    )
    declared_files: list[StrictStr] | None = fields.patterns("The file patterns it will touch")
    meta: dict[str, Any] | None = fields.json_object(LIMITS.meta_bytes, "Free-form metadata")
    claims: list[ClaimIn] | None = claims_field(
        "Lines it claims before editing them (a function, a method); each file joins its "
        "claims, graded by lines (SPEC Line-level claims)"
    )

    UNWALKED = frozenset({"claims"})

    SIZED = {"meta": LIMITS.meta_bytes}


class EditIn(Body):
    """What the agent changed in one file (SPEC "Line-level claims")."""

    path: StrictStr = Field(
        ...,
        json_schema_extra={
            "format": "repo-path",
            "minLength": 1,
            "maxLength": Limit("max_pattern_length"),
            "description": "The file, relative to the repository root",
        },
    )
    base: StrictStr | None = Field(
        None,
        json_schema_extra=fields.schema_extra(
            {
                "minLength": 4,
                "maxLength": 64,
                "not": Schema(type=OpenAPIType.STRING, pattern="[^0-9a-f]"),
                "description": "The file's blob id at HEAD (git rev-parse HEAD:PATH); "
                "null for a file new since HEAD",
            }
        ),
    )
    # Checked by the service (services/line_claims.py), count first: at most
    # edits_max_ranges pairs, each [start, end] of whole numbers.
    ranges: list[Any] = Field(
        ...,
        json_schema_extra=fields.schema_extra(
            {
                "items": Schema(
                    type=OpenAPIType.ARRAY,
                    prefix_items=[
                        Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=LIMITS.edit_line_max),
                        Schema(type=OpenAPIType.INTEGER, minimum=0, maximum=LIMITS.edit_line_max),
                    ],
                    min_items=2,
                    max_items=2,
                ),
                "maxItems": Limit("edits_max_ranges"),
                "description": "The base lines each `git diff -U0` hunk replaces, [start, end], "
                "1-based and inclusive (end >= start - 1); [a+1, a] is an insertion after line "
                "a; [[1, 0]] a new file; [] no change left (the file's edits are dropped). At "
                "most edits_max_ranges per file (more: 400); more than "
                f"{LIMITS.edit_ranges} are kept as one covering range",
            }
        ),
    )

    # Checked by the service, count first (one per range).
    digests: list[Any] | None = Field(
        None,
        json_schema_extra=fields.schema_extra(
            {
                "items": Schema(
                    type=[OpenAPIType.STRING, OpenAPIType.NULL],
                    min_length=DIGEST_MIN_HEX,
                    max_length=DIGEST_MAX_HEX,
                    pattern="^[0-9a-f]+$",
                ),
                "maxItems": Limit("edits_max_ranges"),
                "description": "One per range (optional): a digest of the range's new text "
                "(the first 16 hex digits of the SHA-256 of its new lines; null: not known). "
                "Two ranges with the same lines and the same digest are the same change, "
                "which git's merge takes once: they do not meet",
            }
        ),
    )

    UNWALKED = frozenset({"ranges", "digests"})


def edits_field(description: str) -> Any:
    return Field(
        None,
        max_length=LIMITS.edit_files,
        json_schema_extra={"maxItems": LIMITS.edit_files, "description": description},
    )


class StatusBody(TokenBody):
    declared_area: StrictStr | None = fields.text(
        LIMITS.area_chars, nonblank=True, single_line=True, description="The new work area"
    )
    declared_files: list[StrictStr] | None = fields.patterns("The new file patterns")
    status_text: StrictStr | None = fields.text(LIMITS.status_text_chars, trimmed=False)
    edits: list[EditIn] | None = edits_field(
        "What the agent changed, per file: replaces the edits of the files listed; each "
        "file's path joins the claims (SPEC Line-level claims)"
    )
    claims: list[ClaimIn] | None = claims_field(
        "Lines it claims before editing them: replaces its range claims ([]: none)"
    )

    UNWALKED = frozenset({"edits", "claims"})


class CheckoutBody(TokenBody):
    outcome_status: Literal["completed", "partial", "failed"] | None = None
    work_summary: StrictStr | None = fields.text(
        Limit("max_work_summary_chars"), trimmed=False, description="What was done"
    )
    files_touched: list[StrictStr] | None = fields.paths("The files it changed")


class ConflictCheckBody(TokenBody):
    paths: list[StrictStr] | None = fields.paths("Concrete files (a git hook's staged paths)")
    patterns: list[StrictStr] | None = fields.patterns("File patterns")
    declared_area: StrictStr | None = fields.text(
        LIMITS.area_chars, nonblank=True, single_line=True, description="A work area"
    )
    edits: list[EditIn] | None = edits_field(
        "The asker's own edits, to grade each conflict by (default: its session's, when a "
        "session token is given)"
    )
    claims: list[ClaimIn] | None = claims_field(
        "The asker's own range claims, to grade each conflict by (default: its session's, "
        "when a session token is given): the lines it claims of a file are its claim there"
    )

    UNWALKED = frozenset({"edits", "claims"})


class EmptyBody(TokenBody):
    pass


# -- response shapes of a conflict (SPEC "Sessions"; read by clients and the OpenAPI) -----


class OverlappingFileOut(BaseModel):
    """One of their patterns sharing a path with one of mine (or a staged path)."""

    pattern: str  # mine, or the staged path
    their_pattern: str
    example: str  # a path both claim
    certain: bool  # claimed by both without reading a slash-less literal as a directory
    if_directory: str | None = (
        None  # when not certain: the prefix of example that must be a directory
    )
    # conflicts/check: when their pattern joined their claims (block mode: the older
    # claim stands).
    claimed_at: str | None = None


class EditedFileOut(BaseModel):
    """A file of the overlap that one side or both edited."""

    path: str
    edited_by: Literal["both", "them"]
    grade: Literal["lines", "file"] | None = None  # both
    same_base: bool | None = None  # both: false, the line numbers cannot be compared
    base: str | None = None  # theirs: the blob id their ranges count in
    ranges: list[list[int]] | None = None  # theirs
    my_ranges: list[list[int]] | None = None


class ClaimedFileOut(BaseModel):
    """A file of the overlap that one side or both claim by range, graded by lines."""

    path: str
    grade: Literal["lines", "file"]  # lines: a certain overlap; file: they coexist
    ranges: list[list[int]] | None = None  # their range claims on it
    my_ranges: list[list[int]] | None = None


class ConflictOut(BaseModel):
    """Another live session my scope collides with. ``certain``: the areas are the same or
    some file overlap is certain (what ``block`` mode refuses on)."""

    session_id: str
    agent_name: str
    declared_area: str | None = None
    overlapping_area: bool
    certain: bool
    overlapping_files: list[OverlappingFileOut]
    files_truncated: bool = Field(
        default=False,
        description="true when it has more overlapping files than answer_max_files (absent: false)",
    )
    grade: Literal["lines", "file", "claims"] | None = Field(
        default=None,
        description="lines: a file both sessions edited has changes that meet (a merge "
        "conflict ahead, or two different bases); file: both edited a file of the overlap "
        "and git merges them; claims: no file of the overlap edited by both",
    )
    edits: list[EditedFileOut] | None = Field(
        default=None,
        description="The overlap's edited files: lines first, then the other side's",
    )
    claims: list[ClaimedFileOut] | None = Field(
        default=None,
        description="The overlap's files claimed by range on either side (absent: none): "
        "lines first. Apart, the file's overlap is not certain",
    )
