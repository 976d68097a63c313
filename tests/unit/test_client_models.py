"""The client's result models: times as aware datetimes, closed fields as Literals with a
forward-compatible ``Unknown``, ``raw()`` as the server's JSON, and one live-session shape
with the server (``api.answers.SessionView``, the model the server documents)."""

from __future__ import annotations

import types
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pydantic
import pytest

from agentlanes.api.answers import SessionView
from agentlanes.client import models as m
from agentlanes.clock import iso

NOW = datetime(2026, 5, 4, 3, 2, 1, 123456, tzinfo=UTC)

# A live session as the server writes it (services/views.py: times through clock.iso).
WIRE_SESSION: dict[str, Any] = {
    "session_id": "ses_1",
    "agent_name": "alice",
    "display_name": "alice-1",
    "declared_area": "api",
    "declared_files": ["src/api/**"],
    "status_text": "refactoring",
    "meta": {"model": "x"},
    "started_at": iso(NOW),
    "last_heartbeat_at": iso(NOW + timedelta(seconds=30)),
    "expires_at": iso(NOW + timedelta(seconds=150)),
    "edits": [
        {"path": "src/api/a.py", "base": "e69de29", "ranges": [[3, 4]]},
        {"path": "src/api/b.py", "base": "e69de29", "ranges": [[1, 2]], "digests": ["0" * 16]},
    ],
    "claims": [
        {"path": "src/api/c.py", "base": "e69de29", "ranges": [[5, 9]], "symbol": "Api.get"},
        {"path": "src/api/c.py", "base": "e69de29", "ranges": [[20, 20]]},
    ],
}


# -- times -------------------------------------------------------------------------------------


def test_times_are_aware_utc_datetimes_and_raw_gives_the_servers_strings_back() -> None:
    session = m.Session.model_validate(WIRE_SESSION)
    assert session.started_at == NOW
    assert session.started_at.tzinfo is UTC
    assert session.expires_at - session.started_at == timedelta(seconds=150)
    raw = session.raw()
    assert raw == WIRE_SESSION  # byte for byte the server's spelling (microseconds, Z)
    assert isinstance(raw["started_at"], str)


def test_a_time_with_another_offset_or_none_is_read_as_the_same_instant_in_utc() -> None:
    beat = {"session_id": "s", "status": "active", "expires_at": "2026-05-04T05:02:01+02:00"}
    result = m.HeartbeatResult.model_validate({**beat, "last_heartbeat_at": "2026-05-04T03:02:01"})
    assert result.expires_at == datetime(2026, 5, 4, 3, 2, 1, tzinfo=UTC)
    assert result.expires_at.tzinfo is UTC
    assert result.last_heartbeat_at == datetime(2026, 5, 4, 3, 2, 1, tzinfo=UTC)
    assert result.raw()["expires_at"] == "2026-05-04T03:02:01.000000Z"
    east = datetime(2026, 5, 4, 5, 2, 1, tzinfo=timezone(timedelta(hours=2)))
    built = m.HeartbeatResult(session_id="s", last_heartbeat_at=east, expires_at=east)
    assert built.expires_at.tzinfo is UTC
    assert built.raw()["expires_at"] == "2026-05-04T03:02:01.000000Z"


def test_an_event_frame_without_a_time_keeps_none() -> None:
    pong = m.Event.model_validate({"type": "pong"})
    assert pong.ts is None and pong.raw()["ts"] is None
    event = m.Event.model_validate({"type": "agent.checkin", "offset": 3, "ts": iso(NOW)})
    assert event.ts == NOW and event.raw()["ts"] == iso(NOW)


# -- closed fields -----------------------------------------------------------------------------


def test_a_known_status_is_the_plain_string() -> None:
    out = m.CheckoutResult.model_validate(
        {
            "session_id": "s",
            "status": "checked_out",
            "outcome_status": "partial",
            "ended_at": iso(NOW),
        }
    )
    assert out.outcome_status == "partial" and type(out.outcome_status) is str
    assert type(out.status) is str


def test_an_unknown_status_from_a_newer_server_arrives_as_unknown_and_raw_keeps_it() -> None:
    beat = m.HeartbeatResult.model_validate(
        {
            "session_id": "s",
            "status": "paused",
            "last_heartbeat_at": iso(NOW),
            "expires_at": iso(NOW),
        }
    )
    assert isinstance(beat.status, m.Unknown)
    assert beat.status == "paused" and f"{beat.status}" == "paused"
    assert repr(beat.status) == "Unknown('paused')"
    assert beat.raw()["status"] == "paused"
    project = m.ProjectInfo.model_validate(
        {
            "slug": "p",
            "name": "p",
            "conflict_mode": "strict",
            "heartbeat_interval_seconds": 30,
            "heartbeat_ttl_seconds": 120,
        }
    )
    assert isinstance(project.conflict_mode, m.Unknown)
    assert project.raw()["conflict_mode"] == "strict"


def test_a_status_that_is_not_a_string_is_an_error_naming_the_field() -> None:
    with pytest.raises(pydantic.ValidationError) as bad:
        m.CheckoutResult.model_validate(
            {"session_id": "s", "status": "checked_out", "outcome_status": 3, "ended_at": iso(NOW)}
        )
    assert {error["loc"][0] for error in bad.value.errors()} == {"outcome_status"}


# -- one live-session shape with the server ----------------------------------------------------


def _strip(tp: Any) -> Any:
    """The type without pydantic's ``Annotated`` metadata."""
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _parts(tp: Any) -> list[Any]:
    tp = _strip(tp)
    if get_origin(tp) in (Union, types.UnionType):
        return [_strip(arg) for arg in get_args(tp)]
    return [tp]


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def accepts(client: Any, server: Any) -> bool:
    """Does the client's type take every value the server's type describes? (The client
    may be more lenient: ``X | None`` takes ``X``, a Literal with ``Unknown`` takes the
    Literal, ``Any`` takes anything.)"""
    client, server = _strip(client), _strip(server)
    if client is Any:
        return True
    if server is Any:
        return False
    client_parts, server_parts = _parts(client), _parts(server)
    if len(client_parts) > 1 or len(server_parts) > 1:
        return all(any(accepts(c, s) for c in client_parts) for s in server_parts)
    if get_origin(server) is Literal:
        if get_origin(client) is Literal:
            return set(get_args(server)) <= set(get_args(client))
        return all(isinstance(value, client) for value in get_args(server))
    if get_origin(server) is not None or get_origin(client) is not None:
        return (
            get_origin(client) is get_origin(server)
            and len(get_args(client)) == len(get_args(server))
            and all(accepts(c, s) for c, s in zip(get_args(client), get_args(server), strict=True))
        )
    if _is_model(client) and _is_model(server):
        return not field_differences(client, server)
    return isinstance(client, type) and isinstance(server, type) and issubclass(server, client)


def field_differences(
    client: type[pydantic.BaseModel], server: type[pydantic.BaseModel]
) -> list[str]:
    """What keeps the client's model from reading the server's: a field missing on either
    side, or a field whose client type does not take the server's values."""
    ours, theirs = client.model_fields, server.model_fields
    found = [f"only the server has {name}" for name in theirs.keys() - ours.keys()]
    found += [f"only the client has {name}" for name in ours.keys() - theirs.keys()]
    for name in ours.keys() & theirs.keys():
        if not accepts(ours[name].annotation, theirs[name].annotation):
            found.append(f"{name}: {ours[name].annotation} does not take {theirs[name].annotation}")
    return sorted(found)


def test_the_clients_session_has_the_fields_of_the_servers_session_view() -> None:
    assert field_differences(m.Session, SessionView) == []


def test_a_session_the_server_writes_reads_alike_on_both_sides() -> None:
    server = SessionView.model_validate(WIRE_SESSION)
    client = m.Session.model_validate(WIRE_SESSION)
    for name in SessionView.model_fields:
        theirs, ours = getattr(server, name), getattr(client, name)
        if isinstance(theirs, list) and theirs and _is_model(type(theirs[0])):
            theirs = [t.model_dump() for t in theirs]
            ours = [o.model_dump() for o in ours]
        assert ours == theirs, name


def test_the_shape_check_itself_finds_drift() -> None:
    """The checker can fail: a renamed field, a time sent as a string, a narrower type."""

    class Drifted(pydantic.BaseModel):
        session_id: str
        agent: str
        started_at: str

    class Server(pydantic.BaseModel):
        session_id: str
        agent_name: str
        started_at: datetime

    assert field_differences(Drifted, Server) == [
        "only the client has agent",
        "only the server has agent_name",
        "started_at: <class 'str'> does not take <class 'datetime.datetime'>",
    ]
    assert not accepts(list[int], list[str])
    assert not accepts(str, str | None)
    assert accepts(str | None, str)
    assert not accepts(Literal["a"], Literal["a", "b"])
    assert accepts(m.OutcomeStatus | m.Unknown, Literal["completed"])
    assert not accepts(dict[str, str], dict[str, Any])
