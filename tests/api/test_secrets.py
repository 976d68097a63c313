"""Keys and tokens are stored only as hashes."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import text

from agentlanes.store.database import Database
from tests.api.conftest import Api


async def _dump(url: str) -> str:
    db = Database(url)
    try:
        async with db.reader.connect() as conn:
            rows = []
            for table in ("projects", "sessions", "realtime_tokens", "events"):
                rows += [
                    repr(r) for r in (await conn.execute(text(f"SELECT * FROM {table}"))).all()
                ]
        return "\n".join(rows)
    finally:
        await db.dispose()


def test_no_key_or_token_is_stored_in_clear(api: Api, database_url: str, client: Any) -> None:
    s = api.checkin(agent_name="alice")
    rt = api.post("/realtime/token").json()["token"]
    dump = asyncio.run(_dump(database_url))
    assert api.key not in dump
    assert s["session_token"] not in dump
    assert rt not in dump
    assert "alice" in dump  # the dump did read the rows
