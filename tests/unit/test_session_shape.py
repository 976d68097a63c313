"""One live-session shape on the server: the documented model (``api.answers.SessionView``,
what the OpenAPI document shows) is the list of fields; the view the server encodes
(``services.views.session_view``), the fields it reads (``services.views.LiveFields``)
and the projection's live session (``services.projection.LiveSession``) follow it. A
field added to one of them and not to the others fails here."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from agentlanes.api.answers import SessionView
from agentlanes.services.projection import LiveSession
from agentlanes.services.views import LiveFields, session_view
from agentlanes.store.models import AgentSession

# The one field named otherwise on the wire than in the row and the projection.
WIRE_NAME = {"id": "session_id"}
# What the projection keeps of a live session besides what presence shows.
BOOKKEEPING = {"encoded", "claimed_at"}


def _row() -> AgentSession:
    """A stored session with every field the view shows set to something not a default."""
    started = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    return AgentSession(
        id="s-1",
        project_id=1,
        agent_name="agent-a",
        display_name="agent-1",
        declared_area="the parser",
        declared_files=["src/**", "docs/a.md"],
        meta={"tool": "claude-code", "n": 3},
        status="active",
        status_text="reading",
        claimed_at={"src/**": started.isoformat()},
        edits={"src/a.py": {"base": "abc123", "ranges": [[3, 4], [10, 9]]}},
        claims=[{"path": "src/b.py", "base": "abc123", "ranges": [[5, 9]], "symbol": "B.c"}],
        started_at=started,
        last_heartbeat_at=started + timedelta(seconds=7, microseconds=1),
        expires_at=started + timedelta(seconds=127, microseconds=2),
    )


def _documented() -> list[str]:
    return list(SessionView.model_fields)


def test_the_view_the_server_sends_is_the_documented_one() -> None:
    view = session_view(_row())
    assert list(view) == _documented()  # the same fields, in the documented order
    # Each value has the documented type and form: validated and dumped back, it is the same.
    assert SessionView.model_validate(view).model_dump(mode="json") == view


def test_a_live_session_shows_what_its_row_shows_and_what_its_event_carries() -> None:
    row = _row()
    live = LiveSession.of_row(row)
    assert session_view(live) == session_view(row)
    # A process that learns of the session from its event keeps the same session.
    again = LiveSession.of_view(session_view(live))
    assert session_view(again) == session_view(row)
    assert again == live


def test_the_projection_keeps_the_documented_fields_and_only_bookkeeping_besides() -> None:
    shown = [f.name for f in dataclasses.fields(LiveFields)]
    assert [WIRE_NAME.get(name, name) for name in shown] == _documented()
    kept = {f.name for f in dataclasses.fields(LiveSession)}
    extra = kept - set(shown)
    assert extra == BOOKKEEPING, (
        f"LiveSession fields {sorted(extra - BOOKKEEPING)}: a field presence shows belongs "
        "in LiveFields, session_view and SessionView; bookkeeping belongs in BOOKKEEPING"
    )


def test_every_field_the_view_shows_comes_from_the_session() -> None:
    """No field of the view is a constant: each changes with the field it is named for."""
    row = _row()
    base = session_view(row)
    changed: dict[str, Any] = {
        "id": "s-2",
        "agent_name": "agent-b",
        "display_name": "agent-2",
        "declared_area": None,
        "declared_files": ["lib/**"],
        "status_text": None,
        "meta": {},
        "started_at": row.started_at - timedelta(days=1),
        "last_heartbeat_at": row.last_heartbeat_at + timedelta(days=1),
        "expires_at": row.expires_at + timedelta(days=1),
        "edits": {},
        "claims": [],
    }
    assert set(changed) == {f.name for f in dataclasses.fields(LiveFields)}
    for name, value in changed.items():
        other = session_view(AgentSession.model_validate({**row.model_dump(), name: value}))
        wire = WIRE_NAME.get(name, name)
        assert other[wire] != base[wire], name
        assert {k: v for k, v in other.items() if k != wire} == {
            k: v for k, v in base.items() if k != wire
        }, name
