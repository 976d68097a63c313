"""uvicorn's websockets-sansio protocol, with a close that a stalled peer cannot block.

uvicorn makes every ASGI ``send`` wait until the transport is writable again. For a peer
that stopped reading (its TCP window is shut, our write buffer is over the high-water
mark) that wait never ends, so the 4008 close for a slow subscriber would never go out
and the connection, with its buffered frames, would stay open forever.

Here a ``websocket.close`` on a stalled connection is written straight away, queued
behind what the peer has not read yet: a peer that starts reading again gets every frame
it was sent and then the close with its code and reason. If it has not completed the
closing handshake within ``close_timeout`` (10 s), the connection is aborted, which
drops the buffered bytes instead of keeping them until the peer reads.

A text frame that is not valid UTF-8 is closed with 1007 and a reason, as uvicorn does,
but without logging a traceback per frame: any client could fill the log with them.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State
from websockets.server import ServerProtocol

CLOSE_INVALID_DATA = 1007
# The ASGI extension (scope["extensions"]) that writes a whole frame at once: a callable
# taking the frame's bytes, True when written (api/stream.py fans events out with it).
SEND_NOW = "agentlanes.websocket.send_now"


class StalledPeerSafeProtocol(WebSocketsSansIOProtocol):
    """``agentlanes serve`` runs uvicorn with this as its ``ws`` protocol class."""

    conn: ServerProtocol

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:  # the app starts later: it finds the extension in its scope
            scope["extensions"][SEND_NOW] = self.send_now

    def send_now(self, wire: bytes) -> bool:
        """Write one whole server frame (``Frame.wire``) now, if the socket is open and
        writable; False (nothing written) otherwise, and the caller sends it the ASGI way,
        which waits. The frame is the one ``websocket.send`` would write: no extension is
        negotiated (``ws_per_message_deflate`` is off), and a server never masks."""
        if (
            self.handshake_complete
            and not self.close_sent
            and not self.disconnected
            and self.initial_response is None
            and self.writable.is_set()
            and self.conn.state is State.OPEN
            and not self.conn.extensions
            and not self.transport.is_closing()
        ):
            self.transport.write(wire)
            return True
        return False

    async def send(self, message: Any) -> None:
        if (
            message["type"] == "websocket.close"
            and not self.writable.is_set()
            and self.handshake_complete
            and not self.close_sent
            and not self.disconnected
            and self.initial_response is None
            and not self.transport.is_closing()
        ):
            code = message.get("code", 1000)
            reason = message.get("reason", "") or ""
            self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
            self.conn.send_close(code, reason)
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.close_sent = True
            if self.read_paused:
                self.read_paused = False
                self.transport.resume_reading()
            self.close_timer = self.loop.call_later(self.close_timeout, self.transport.abort)
            return
        await super().send(message)
        if message["type"] == "websocket.close" and self.close_timer is not None:
            # abort, not close, when the peer never answers: close would keep the unread
            # buffer until the peer drains it, which a stalled peer never does.
            self.close_timer.cancel()
            self.close_timer = self.loop.call_later(self.close_timeout, self.transport.abort)

    def send_receive_event_to_app(self) -> None:
        if self.curr_msg_data_type == "text" and not self.close_sent:
            try:
                b"".join(self.frames).decode()
            except UnicodeDecodeError:
                self.frames = []
                self.conn.send_close(CLOSE_INVALID_DATA, "text frame is not valid UTF-8")
                self.handle_parser_exception()
                return
        super().send_receive_event_to_app()
