"""Each endpoint once: method, path, body and how to read the answer.

The sync and async clients run these ``Call`` values over their own transport, so the
two stay identical by construction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from agentlanes.client import models as m

T = TypeVar("T")
API = "/api/v1"


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP request and the parser of its answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    body: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    # "required": send the session token and fail locally without one;
    # "optional": send it when there is one; "none": never.
    token: str = "none"


def drop_unset(**values: Any) -> dict[str, Any]:
    """Leave out the fields the caller did not give, so the server's defaults apply."""
    return {k: v for k, v in values.items() if v is not None}


def as_json(data: Any) -> Any:
    """The parser of an answer kept as the server's plain JSON."""
    return data


def any_route(
    method: str,
    path: str,
    body: dict[str, Any] | None,
    params: dict[str, Any] | None,
    *,
    with_token: bool,
) -> Call[Any]:
    """Any endpoint under the server's base URL, answered as plain JSON; sends the session
    token when there is one (unless ``with_token`` is false)."""
    token = "optional" if with_token else "none"
    return Call(method.upper(), path, as_json, body, params or {}, token=token)


def checkin(
    agent_name: str | None,
    declared_area: str | None,
    declared_files: list[str] | None,
    meta: dict[str, Any] | None,
    claims: list[dict[str, Any]] | None = None,
) -> Call[m.CheckinResult]:
    body = drop_unset(
        agent_name=agent_name,
        declared_area=declared_area,
        declared_files=declared_files,
        meta=meta,
        claims=claims,
    )
    return Call("POST", f"{API}/checkin", m.CheckinResult.model_validate, body)


def heartbeat() -> Call[m.HeartbeatResult]:
    return Call("POST", f"{API}/heartbeat", m.HeartbeatResult.model_validate, {}, token="required")


def status(
    declared_area: str | None,
    declared_files: list[str] | None,
    status_text: str | None,
    edits: list[dict[str, Any]] | None = None,
) -> Call[m.StatusResult]:
    body = drop_unset(
        declared_area=declared_area,
        declared_files=declared_files,
        status_text=status_text,
        edits=edits,
    )
    return Call("POST", f"{API}/status", m.StatusResult.model_validate, body, token="required")


def checkout(
    outcome_status: m.OutcomeStatus | None,
    work_summary: str | None,
    files_touched: list[str] | None,
) -> Call[m.CheckoutResult]:
    body = drop_unset(
        outcome_status=outcome_status, work_summary=work_summary, files_touched=files_touched
    )
    return Call("POST", f"{API}/checkout", m.CheckoutResult.model_validate, body, token="required")


def news(after: str | None, limit: int | None, deliver: bool) -> Call[Any]:
    """The agent's news after a cursor (POST: the messages among the items count as
    delivered, for a caller that puts them in the agent's context)."""
    if deliver:
        body = drop_unset(after=after, limit=limit) | {"deliver": True}
        return Call("POST", f"{API}/news", as_json, body, token="required")
    return Call(
        "GET", f"{API}/news", as_json, params=drop_unset(after=after, limit=limit), token="required"
    )


def presence() -> Call[m.Presence]:
    return Call("GET", f"{API}/presence", m.Presence.model_validate)


def check_conflicts(
    paths: list[str] | None, patterns: list[str] | None, declared_area: str | None
) -> Call[m.ConflictCheck]:
    body = drop_unset(paths=paths, patterns=patterns, declared_area=declared_area)
    return Call(
        "POST", f"{API}/conflicts/check", m.ConflictCheck.model_validate, body, token="optional"
    )


def session_conflicts(
    session_id: str, cursor: str | None = None, limit: int | None = None
) -> Call[m.SessionConflicts]:
    return Call(
        "GET",
        f"{API}/sessions/{quote(session_id, safe='')}/conflicts",
        m.SessionConflicts.model_validate,
        params=drop_unset(cursor=cursor, limit=limit),
    )


def project() -> Call[m.ProjectInfo]:
    return Call("GET", f"{API}/project", m.ProjectInfo.model_validate)


def event_log(since: int | None, limit: int | None, epoch: str | None = None) -> Call[m.EventLog]:
    return Call(
        "GET",
        f"{API}/events/log",
        m.EventLog.model_validate,
        params=drop_unset(since=since, limit=limit, epoch=epoch),
    )


# -- waiting for a lane (SPEC) ----------------------------------------------------------------


def _wait_result(data: Any) -> m.WaitResult:
    return m.WaitResult.model_validate(data)


def queue_wait(
    paths: list[str], timeout_seconds: int | None, urgency: m.Urgency | None
) -> Call[m.WaitResult]:
    body = drop_unset(paths=paths, timeout_seconds=timeout_seconds, urgency=urgency)
    return Call("POST", f"{API}/queue", _wait_result, body, token="required")


def queue_list(
    session_id: str | None = None, limit: int | None = None, offset: int | None = None
) -> Call[m.QueueList]:
    params = drop_unset(session_id=session_id, limit=limit, offset=offset)
    return Call("GET", f"{API}/queue", m.QueueList.model_validate, params=params)


def queue_cancel(queue_id: str) -> Call[m.Wait]:
    return Call(
        "DELETE", f"{API}/queue/{quote(queue_id, safe='')}", m.Wait.model_validate, token="required"
    )


def ask(to: str, paths: list[str], reason: str) -> Call[m.ReleaseRequest]:
    body = {"to": to, "paths": paths, "reason": reason}
    return Call(
        "POST", f"{API}/release-requests", m.ReleaseRequest.model_validate, body, token="required"
    )


def hotspots(days: int | None, limit: int | None) -> Call[m.Hotspots]:
    params = drop_unset(days=days, limit=limit)
    return Call("GET", f"{API}/hotspots", m.Hotspots.model_validate, params=params)
