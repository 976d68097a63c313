"""Schemathesis hooks for fuzzing a running agentlanes server against its OpenAPI document.

Load with ``SCHEMATHESIS_HOOKS=tests.support.schemathesis_hooks`` (from the checkout's root)
and set ``AGENTLANES_ST_URL`` (the server) and ``AGENTLANES_ST_API_KEY`` (a project's key);
``AGENTLANES_ST_ADMIN_TOKEN`` too to fuzz the admin API. They give schemathesis what a
JSON Schema cannot say:

- credentials: every case carries the project's key, the admin token, and the token of a
  live session (one per worker thread, checked in again after a case checked it out:
  the next case must not inherit an ended session);
- the two string formats of the document, ``glob-pattern`` and ``repo-path`` (their rules are
  in docs/patterns.md), as generators of valid values;
- the cross-field rules: a project's heartbeat TTL is at least its interval; an edit's
  range ``[start, end]`` has ``1 <= start <= end + 1`` (SPEC "Line-level claims"); a
  person's message (``human``) carries no session token, in the body or the header;
- the state a run builds up: a session keeps the edits of at most 100 files, so the run's
  session drops its edits once it holds 50;
- how to tell a body that breaks those formats: schemathesis counts every value of a custom
  format in a negative case as invalid, so a body it says the server should have refused
  is checked again with the formats checked by the pattern rules (the server's normaliser);
- that a session named by id may have ended since its id was handed out (410 by contract).
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from typing import Any

import httpx
import jsonschema_rs
import schemathesis
from hypothesis import strategies as st

from agentlanes.domain import PatternError, normalise_path, normalise_pattern
from agentlanes.services.validation import pattern_limits
from agentlanes.settings import Settings

_SEGMENT = st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,11}", fullmatch=True)
_GLOB_SEGMENT = st.one_of(
    _SEGMENT,
    st.sampled_from(["*", "*.py", "test_*", "?.md", "[ab]*", "{src,lib}", "**"]),
)

schemathesis.openapi.format("repo-path", st.lists(_SEGMENT, min_size=1, max_size=5).map("/".join))
schemathesis.openapi.format(
    "glob-pattern", st.lists(_GLOB_SEGMENT, min_size=1, max_size=5).map("/".join)
)


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"set {name} (see docs/api.md, 'Fuzzing the contract')")
    return value


class _Sessions(threading.local):
    """One live session per schemathesis worker thread, replaced once it may have ended."""

    token: str | None = None
    started: float = 0.0


_SESSIONS = _Sessions()
# Well inside the default heartbeat TTL (120 s): calls other than heartbeat and status do
# not keep a session alive.
_SESSION_MAX_AGE = 60.0


def _check_in(url: str, key: str) -> str:
    r = httpx.post(
        f"{url}/api/v1/checkin",
        # A name of its own: a check-in under a live name would supersede that session,
        # which another worker may be using.
        json={"agent_name": f"schemathesis-{secrets.token_hex(6)}"},
        headers={"X-API-Key": key},
        timeout=10,
    )
    r.raise_for_status()
    return str(r.json()["session_token"])


@schemathesis.auth(refresh_interval=None)
class LiveSession:
    """The project's key, the admin token, and this worker's live session's token."""

    def get(self, case: Any, ctx: Any) -> dict[str, str]:
        url, key = _env("AGENTLANES_ST_URL"), _env("AGENTLANES_ST_API_KEY")
        if case.operation.path == "/api/v1/checkout":
            # Checking out ends the session: a case of its own, with a session of its own.
            token = _check_in(url, key)
        else:
            if _SESSIONS.token is None or time.monotonic() - _SESSIONS.started > _SESSION_MAX_AGE:
                _SESSIONS.token, _SESSIONS.started = _check_in(url, key), time.monotonic()
            token = _SESSIONS.token
        headers = {"X-API-Key": key, "X-Session-Token": token}
        if _a_persons_message(case):
            del headers["X-Session-Token"]  # a person speaks with the project key alone
        admin = os.environ.get("AGENTLANES_ST_ADMIN_TOKEN")
        if admin:
            headers["Authorization"] = f"Bearer {admin}"
        return headers

    def set(self, case: Any, data: dict[str, str], ctx: Any) -> None:
        case.headers = {**(case.headers or {}), **data}
        # Every phase passes here (the stateful one fills slugs from earlier answers,
        # after any filter): never re-key, change or delete the run's own project.
        params = case.path_parameters or {}
        if (
            case.operation.path.startswith("/api/v1/projects/{slug}")
            and case.method.upper() != "GET"
            and params.get("slug") == _fuzz_slug()
        ):
            case.path_parameters = {**params, "slug": f"spared-{secrets.token_hex(4)}"}


@schemathesis.hook
def after_call(ctx: Any, case: Any, response: Any) -> None:
    """Should the worker's session have ended all the same, the next case checks in. A
    session holding the edits of many files, or many claims, drops them (a session keeps
    at most 100 edited files, and edits take its claims at most 100 past max_patterns: a
    later report would be refused for the run's history, not for its own body)."""
    if response.status_code == 410:
        _SESSIONS.token = None
        return
    if response.status_code != 200 or case.path != "/api/v1/status":
        return
    try:
        answer = response.json()
        held = [e["path"] for e in answer.get("edits") or []]
        claims = len(answer.get("declared_files") or [])
    except (ValueError, AttributeError, KeyError, TypeError):
        return
    token = (case.headers or {}).get("X-Session-Token")
    if (len(held) >= 50 or claims >= 200) and token:
        httpx.post(
            f"{_env('AGENTLANES_ST_URL')}/api/v1/status",
            json={
                "edits": [{"path": p, "base": None, "ranges": []} for p in held],
                "declared_files": [],
            },
            headers={"X-API-Key": _env("AGENTLANES_ST_API_KEY"), "X-Session-Token": token},
            timeout=30,
        )


def ranges_in_order(ctx: Any, case: Any) -> bool:
    """Leave out bodies with an edit or range-claim range ``[start, end]`` outside
    ``1 <= start <= end + 1``, an edit whose ``digests`` are not one per range, or range
    claims of one file on two bases (400s the schema describes but cannot state)."""
    body = case.body
    if not isinstance(body, dict):
        return True
    edits = body.get("edits") if isinstance(body.get("edits"), list) else []
    claims = body.get("claims") if isinstance(body.get("claims"), list) else []
    bases: dict[str, Any] = {}
    for item in [*edits, *claims]:
        ranges = item.get("ranges") if isinstance(item, dict) else None
        if not _in_order(ranges):
            return False
        digests = item.get("digests") if isinstance(item, dict) else None
        if isinstance(digests, list) and isinstance(ranges, list) and len(digests) != len(ranges):
            return False
    for claim in claims:
        path = claim.get("path") if isinstance(claim, dict) else None
        if isinstance(path, str):
            path = "/".join(p for p in path.split("/") if p not in ("", "."))
            if bases.setdefault(path, claim.get("base")) != claim.get("base"):
                return False
    return True


def _in_order(ranges: Any) -> bool:
    # Ranges that are not a list at all (a fuzzed `true`) are the server's to refuse.
    for pair in ranges if isinstance(ranges, list) else []:
        pair_of_ints = (
            isinstance(pair, list)
            and len(pair) == 2
            # JSON numbers: 12.0 is the integer 12 to the server as to JSON Schema
            and all(isinstance(n, int | float) and not isinstance(n, bool) for n in pair)
        )
        if pair_of_ints and not 1 <= pair[0] <= pair[1] + 1:
            return False
    return True


@schemathesis.hook("filter_case").apply_to(method="POST", path="/api/v1/projects")
def heartbeat_ttl_not_below_interval(ctx: Any, case: Any) -> bool:
    """Leave out project bodies whose TTL is below the interval (a 400 the schema describes
    but cannot state). A filter on the case, so that every phase applies it."""
    body = case.body
    if not isinstance(body, dict):
        return True
    # A field left out (or null) takes the server's default: the settings' (not overridden).
    defaults = Settings()
    interval = body.get("heartbeat_interval_seconds") or defaults.heartbeat_interval_seconds
    ttl = body.get("heartbeat_ttl_seconds") or defaults.heartbeat_ttl_seconds
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (interval, ttl))
    return not numbers or ttl >= interval


def _each_failure(hook: Any) -> Any:
    """A function object of its own for one registration: schemathesis keeps a hook's
    operation filter on the function, so the same function registered for several
    operations would apply only to the last one named."""

    def filter_failure(ctx: Any, failure: Any, case: Any, response: Any) -> bool:
        return bool(hook(ctx, failure, case, response))

    return filter_failure


def _each_case(hook: Any) -> Any:
    """As ``_each_failure``, for a case filter."""

    def filter_case(ctx: Any, case: Any) -> bool:
        return bool(hook(ctx, case))

    return filter_case


def an_ended_session_is_not_a_refusal(ctx: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keep every finding but one: an id handed out by an earlier answer may name a session
    that has ended since (a check-in under its name superseded it), and such a session's
    conflicts answer 410 SESSION_ENDED by contract, which schemathesis reads as valid data
    refused."""
    return not (response.status_code == 410 and "SESSION_ENDED" in response.text)


# The same on a checkout, a status change and a heartbeat: the stateful phase links a
# check-in's token into their bodies, and that session may have timed out by the time the
# link is followed.
for _method, _path in (
    ("GET", "/api/v1/sessions/{session_id}/conflicts"),
    ("POST", "/api/v1/checkout"),
    ("POST", "/api/v1/status"),
    ("POST", "/api/v1/heartbeat"),
):
    schemathesis.hook("filter_failure").apply_to(method=_method, path=_path)(
        _each_failure(an_ended_session_is_not_a_refusal)
    )


def _a_persons_message(case: Any) -> bool:
    body = case.body
    return (
        case.operation.path == "/api/v1/messages"
        and isinstance(body, dict)
        and body.get("human") is not None
    )


@schemathesis.hook("filter_failure").apply_to(method="POST", path="/api/v1/messages")
def a_persons_name_is_not_an_agents(ctx: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keep every finding but two refusals of a person's message (``human``) the schema
    describes but cannot state: a session token in its body (the stateful phase links one
    in after any case filter; a person speaks without a session), and a name that a live
    session of the run holds (a person speaks as themselves)."""
    refused = response.status_code == 400 and '"field":"human"' in response.text
    return not (
        _a_persons_message(case)
        and refused
        and ("without a session" in response.text or "live agent's name" in response.text)
    )


_FUZZ_SLUG: list[str] = []


def _fuzz_slug() -> str:
    """The slug of the project the run works in (read once with its key)."""
    if not _FUZZ_SLUG:
        r = httpx.get(
            f"{_env('AGENTLANES_ST_URL')}/api/v1/project",
            headers={"X-API-Key": _env("AGENTLANES_ST_API_KEY")},
            timeout=10,
        )
        _FUZZ_SLUG.append(r.json()["slug"])
    return _FUZZ_SLUG[0]


def _not_the_fuzz_project(ctx: Any, case: Any) -> bool:
    """Leave the run's own project alone on the admin routes that change or remove it: a
    revoked or rotated key, a deleted project or block mode would fail every later case."""
    slug = (case.path_parameters or {}).get("slug")
    return slug != _fuzz_slug()


@schemathesis.hook("filter_case").apply_to(method="PATCH", path="/api/v1/projects/{slug}")
def patched_ttl_not_below_interval(ctx: Any, case: Any) -> bool:
    """The cross-field rule on a PATCH, for projects the run created with the defaults
    (a field left out keeps the project's value). The run's own project is left alone."""
    if not _not_the_fuzz_project(ctx, case):
        return False
    return heartbeat_ttl_not_below_interval(ctx, case)


@schemathesis.hook("filter_failure").apply_to(method="PATCH", path="/api/v1/projects/{slug}")
def a_kept_interval_is_the_projects(ctx: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keep every finding but one: a PATCH that names only one of the TTL and the interval
    keeps the project's other, and a project an earlier case created with other values
    (the stateful phase links its slug here) may make the pair break the cross-field rule
    that the case filter checked against the defaults."""
    body = case.body if isinstance(case.body, dict) else {}
    fields = ("heartbeat_ttl_seconds", "heartbeat_interval_seconds")
    named = [body.get(f) is not None for f in fields]
    one_named = named[0] != named[1]
    return not (
        one_named
        and response.status_code == 400
        and "must be at least heartbeat_interval_seconds" in response.text
    )


for _method, _path in (
    ("DELETE", "/api/v1/projects/{slug}"),
    ("POST", "/api/v1/projects/{slug}/rotate-key"),
    ("POST", "/api/v1/projects/{slug}/revoke-key"),
):
    schemathesis.hook("filter_case").apply_to(method=_method, path=_path)(
        _each_case(_not_the_fuzz_project)
    )


_DOCUMENT: list[dict[str, Any]] = []


def _document() -> dict[str, Any]:
    if not _DOCUMENT:
        r = httpx.get(f"{_env('AGENTLANES_ST_URL')}/schema/openapi.json", timeout=10)
        _DOCUMENT.append(r.json())
    return _DOCUMENT[0]


def _follows(rule: Any) -> Any:
    limits = pattern_limits(Settings())  # the server runs on the defaults

    def check(value: str) -> bool:
        try:
            rule(value, limits)
        except PatternError:
            return False
        return True

    return check


# The document's two formats, checked by the server's own pattern rules.
FORMAT_CHECKS = {"glob-pattern": _follows(normalise_pattern), "repo-path": _follows(normalise_path)}


def body_breaks_the_document(case: Any) -> bool:
    """Whether the case's body breaks its operation's schema, with our formats checked by
    the pattern rules (True too when it cannot be told)."""
    try:
        document = _document()
        operation = document["paths"][case.operation.path][case.method.lower()]
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        validator = jsonschema_rs.validator_for(
            {**schema, "components": document["components"]},
            formats=FORMAT_CHECKS,
            validate_formats=True,
        )
        return not validator.is_valid(case.body)
    except (KeyError, TypeError, ValueError, jsonschema_rs.ValidationError):
        return True


@schemathesis.hook("filter_failure")
def an_accepted_body_must_break_the_document(ctx: Any, failure: Any, case: Any, r: Any) -> bool:
    """Keep every finding but one: "schema-violating request accepted" for a case whose only
    mutations are in the body, when the body does not break the document after all.
    Schemathesis cannot check a custom format: it counts every value of `glob-pattern` or
    `repo-path` in a negative case as invalid, the mutated one or not (`files_touched: ["&"]`,
    a fine file name, was reported); here the pattern rules decide."""
    if getattr(failure, "code", None) != "ST201" or case.meta is None:
        return True
    mutations = getattr(case.meta.phase.data, "mutations", ())
    if not mutations or any(m.parameter_location.value != "body" for m in mutations):
        return True
    return body_breaks_the_document(case)


for _method, _path in (
    ("POST", "/api/v1/status"),
    ("POST", "/api/v1/conflicts/check"),
    ("POST", "/api/v1/checkin"),  # range claims
):
    schemathesis.hook("filter_case").apply_to(method=_method, path=_path)(
        _each_case(ranges_in_order)
    )
