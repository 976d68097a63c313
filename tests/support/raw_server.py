"""A real TCP server that answers every connection with whatever bytes a test sets.

For the hooks' lean HTTP client: a proxy's error page, a bad Content-Length, a chunk size
that is not hex, a body cut short, a connection reset. Each connection reads the request's
head (and its Content-Length body) or a TLS client hello, sends ``answer`` and closes;
``reset = True`` closes with an RST instead of sending anything.
"""

from __future__ import annotations

import socket
import ssl
import struct
import threading
from types import TracebackType


class RawServer:
    def __init__(self, answer: bytes = b"", tls: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.tls = tls  # speak TLS with this server context (its certificate)
        self.reset = False
        self.requests = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = int(self._listener.getsockname()[1])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(5)
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                if self.tls is not None:
                    conn.settimeout(5)
                    conn = self.tls.wrap_socket(conn, server_side=True)
                self._answer(conn)
            except OSError:  # ssl.SSLError too: the client refused the handshake
                pass
            finally:
                conn.close()

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        self.requests += 1
        data = b""
        while b"\r\n\r\n" not in data and not data.startswith(b"\x16"):  # 0x16: TLS hello
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and value.strip().isdigit():
                while len(body) < int(value):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    body += chunk
        if self.reset:
            # SO_LINGER with a zero timeout: close() sends an RST, the client sees a reset.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        conn.sendall(self.answer)
