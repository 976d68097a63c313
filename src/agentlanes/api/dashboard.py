"""The live dashboard: static files shipped in the package, no build step, no CDN."""

from __future__ import annotations

from pathlib import Path

from litestar import Response, get
from litestar.static_files import create_static_files_router

STATIC_DIR = Path(__file__).resolve().parent.parent / "dashboard" / "static"


@get("/", include_in_schema=False)
async def index() -> Response[bytes]:
    page = STATIC_DIR / "index.html"
    body = page.read_bytes() if page.exists() else b"<h1>agentlanes</h1>"
    return Response(body, media_type="text/html; charset=utf-8")


static_router = create_static_files_router(
    path="/static", directories=[STATIC_DIR], include_in_schema=False
)
