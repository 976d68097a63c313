"""One event to thousands of idle sockets: the hub writes each socket's frame at once,
through the server protocol's ``send_now`` (server/wsprotocol.py), while that socket's
pump waits with nothing queued; otherwise the frame is queued and sent in order."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from websockets.frames import Frame as WsFrame
from websockets.frames import Opcode

from agentlanes.api.stream import EventStream
from agentlanes.hub import Frame
from agentlanes.hub.memory import MemoryHub
from agentlanes.server.wsprotocol import SEND_NOW


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 70000])
def test_a_frames_wire_bytes_are_what_websockets_would_send(size: int) -> None:
    text = "é" * (size // 2) + "x" * (size % 2)
    expected = WsFrame(Opcode.TEXT, text.encode()).serialize(mask=False, extensions=[])
    assert Frame(1, text).wire() == expected


class FakeSocket:
    """The ASGI side of a socket: what the pump sends, and the protocol's send_now."""

    def __init__(self) -> None:
        self.now: list[bytes] = []
        self.sent: list[str] = []
        self.writable = True
        self.hold: asyncio.Event | None = None
        self.scope: dict[str, Any] = {"extensions": {SEND_NOW: self.send_now}}

    def send_now(self, wire: bytes) -> bool:
        if not self.writable:
            return False
        self.now.append(wire)
        return True

    async def send(self, message: dict[str, Any]) -> None:
        if self.hold is not None:
            await self.hold.wait()
        self.sent.append(message["text"])


def _stream(hub: MemoryHub, socket: FakeSocket) -> EventStream:
    ctx: Any = SimpleNamespace(hub=hub)
    stream = EventStream(ctx, socket, SimpleNamespace(id=1))  # type: ignore[arg-type]
    stream.subscriber = hub.subscribe(1, 100)
    stream.subscriber.direct = stream._direct
    stream.last_sent = 5
    return stream


def _frame(offset: int) -> Frame:
    return Frame(offset, f'{{"offset":{offset}}}')


def test_an_idle_sockets_next_frame_is_written_at_once_else_queued_in_order() -> None:
    async def scenario() -> None:
        hub, socket = MemoryHub(), FakeSocket()
        stream = _stream(hub, socket)
        pump = asyncio.create_task(stream._pump_frames())
        await asyncio.sleep(0)  # the pump waits for a frame
        hub.deliver_local(1, [_frame(6)])
        assert socket.now == [_frame(6).wire()] and socket.sent == []
        assert stream.last_sent == 6
        # Not writable: queued, and the pump sends it (the ASGI way, which waits).
        socket.writable = False
        hub.deliver_local(1, [_frame(7)])
        await asyncio.sleep(0.01)
        assert socket.sent == ['{"offset":7}'] and stream.last_sent == 7
        # The pump is busy sending 8: 9 must wait behind it, not overtake it.
        socket.writable = True
        socket.hold = asyncio.Event()
        socket.writable = False
        hub.deliver_local(1, [_frame(8)])
        await asyncio.sleep(0.01)
        socket.writable = True
        hub.deliver_local(1, [_frame(9)])
        socket.hold.set()
        await asyncio.sleep(0.01)
        assert socket.sent == ['{"offset":7}', '{"offset":8}', '{"offset":9}']
        assert len(socket.now) == 1
        # Idle again: the next one goes at once; one already sent is skipped.
        socket.hold = None
        hub.deliver_local(1, [_frame(9)])  # queued (not the next), then skipped
        await asyncio.sleep(0.01)
        hub.deliver_local(1, [_frame(10)])
        assert socket.now[-1] == _frame(10).wire() and len(socket.sent) == 3
        pump.cancel()
        await asyncio.gather(pump, return_exceptions=True)

    asyncio.run(scenario())


def test_a_socket_with_a_news_push_is_never_written_at_once() -> None:
    async def scenario() -> None:
        hub, socket = MemoryHub(), FakeSocket()
        stream = _stream(hub, socket)
        pushes: list[int] = []

        async def push() -> None:
            pushes.append(stream.last_sent)

        stream.news = SimpleNamespace(push=push)  # type: ignore[assignment]
        pump = asyncio.create_task(stream._pump_frames())
        await asyncio.sleep(0)
        hub.deliver_local(1, [_frame(6)])
        await asyncio.sleep(0.01)
        assert socket.now == [] and socket.sent == ['{"offset":6}'] and pushes == [6]
        pump.cancel()
        await asyncio.gather(pump, return_exceptions=True)

    asyncio.run(scenario())


def test_a_frame_arriving_while_the_pump_reads_the_log_is_not_sent_twice() -> None:
    """The pump fills a gap from the log (6, 7) and is sending 6 when the live 6 comes:
    written at once as well, it would go out twice."""

    async def scenario() -> None:
        hub, socket = MemoryHub(), FakeSocket()
        stream = _stream(hub, socket)

        class Log:
            async def read(self, _project: int, after: int, _upto: int | None) -> list[Frame]:
                return [_frame(o) for o in (6, 7) if o > after]

        stream.ctx.log_reads = Log()
        socket.hold = asyncio.Event()
        pump = asyncio.create_task(stream._pump_frames())
        await asyncio.sleep(0)
        hub.deliver_local(1, [_frame(7)])  # a gap: 6 not seen yet; the pump reads the log
        await asyncio.sleep(0.01)
        hub.deliver_local(1, [_frame(6)])  # the live 6, late, while 6 is being sent
        socket.hold.set()
        await asyncio.sleep(0.01)
        assert socket.sent == ['{"offset":6}', '{"offset":7}'] and socket.now == []
        pump.cancel()
        await asyncio.gather(pump, return_exceptions=True)

    asyncio.run(scenario())


def test_a_real_stream_takes_the_servers_send_now(tmp_path: Any, make_settings: Any) -> None:
    """Started as the server starts it (snapshot first), the socket's next event is
    written through send_now."""
    from sqlmodel import select

    from agentlanes.services import sessions
    from agentlanes.services.context import ServiceContext
    from agentlanes.services.projects import ProjectInput, create_project
    from agentlanes.store.database import Database
    from agentlanes.store.models import Project

    url = f"sqlite:///{tmp_path / 'a.db'}"

    async def scenario() -> None:
        ctx = ServiceContext(
            settings=make_settings(database_url=url), db=Database(url), hub=MemoryHub()
        )
        await ctx.db.create_all()
        try:
            created = await create_project(ctx, ProjectInput(name="direct"))
            async with ctx.db.read() as s:
                project = (
                    await s.exec(select(Project).where(Project.slug == created["slug"]))
                ).one()
            socket = FakeSocket()
            stream = EventStream(ctx, socket, project)  # type: ignore[arg-type]
            await stream.start(None)
            assert socket.sent[0].startswith('{"type":"presence.snapshot"')
            pump = asyncio.create_task(stream._pump_frames())
            await asyncio.sleep(0)
            await sessions.checkin(ctx, project, sessions.CheckinInput(agent_name="a"))
            assert len(socket.now) == 1 and b'"type":"agent.checkin"' in socket.now[0]
            assert len(socket.sent) == 1
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)
        finally:
            await ctx.db.dispose()

    asyncio.run(scenario())
