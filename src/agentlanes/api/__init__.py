"""The HTTP and WebSocket edge (Litestar)."""
