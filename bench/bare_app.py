"""The baseline for bench/api.py: a bare Litestar endpoint on the same uvicorn settings."""

from __future__ import annotations

import sys

import uvicorn
from litestar import Litestar, post


@post("/bare", status_code=200)
async def bare(data: dict[str, object] | None = None) -> dict[str, str]:
    return {"status": "ok"}


if __name__ == "__main__":
    uvicorn.run(
        Litestar([bare], logging_config=None),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        access_log=False,
    )
