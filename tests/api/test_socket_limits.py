"""The event socket's own frame limit (max_body_bytes), under any ASGI server: here the
in-process test client, where uvicorn's ws_max_size does not apply."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.exceptions import WebSocketDisconnect

from tests.api.conftest import new_project


def test_a_frame_over_max_body_bytes_closes_with_1009(app_factory: Any, sqlite_url: str) -> None:
    client = app_factory(database_url=sqlite_url, max_body_bytes=4096)
    api = new_project(client)
    with client.websocket_connect("/api/v1/events", headers=api.headers()) as ws:
        assert ws.receive_json()["type"] == "presence.snapshot"
        ws.send_text("x" * 4000)  # under the limit: an error frame, the socket stays
        assert ws.receive_json()["error"]["message"] == "frame is not JSON"
        ws.send_bytes(b"y" * 4097)
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
    assert closed.value.code == 1009
    assert "4096 bytes" in str(closed.value.detail)
