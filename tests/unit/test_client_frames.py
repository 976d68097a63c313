"""Client frames on the event socket: parsed safely, sized against the body limit."""

from __future__ import annotations

import pytest

from agentlanes.api.stream import client_frame_text, parse_client_frame


def test_parse_names_the_problem() -> None:
    assert parse_client_frame('{"type": "ping"}') == {"type": "ping"}
    with pytest.raises(ValueError, match="frame is not JSON"):
        parse_client_frame("{nope")
    with pytest.raises(ValueError, match="frame is nested too deeply"):
        parse_client_frame("[" * 100_000)


def test_text_and_binary_frames_within_the_limit() -> None:
    assert client_frame_text({"type": "websocket.receive", "text": "abc"}, 10) == "abc"
    assert client_frame_text({"type": "websocket.receive", "bytes": b"\xffab"}, 10) == "\ufffdab"
    assert client_frame_text({"type": "websocket.receive"}, 10) is None


@pytest.mark.parametrize(
    "message",
    [
        {"type": "websocket.receive", "text": "x" * 11},
        {"type": "websocket.receive", "text": "é" * 6},  # 6 characters, 12 bytes
        {"type": "websocket.receive", "bytes": b"x" * 11},
    ],
)
def test_frames_over_the_limit_are_refused(message: dict[str, object]) -> None:
    with pytest.raises(OverflowError, match="the limit is 10 bytes"):
        client_frame_text(message, 10)
