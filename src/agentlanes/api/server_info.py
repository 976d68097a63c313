"""``GET /server``: what this server is, for the CLI's project commands.

No key needed, and nothing secret: the version, whether the admin API is on, and a
fingerprint of the database (a hash; never the URL), so that ``agentlanes project …``
can tell whether the database it would write to directly is this server's.
"""

from __future__ import annotations

from litestar import get
from litestar.datastructures import State

from agentlanes import __version__
from agentlanes.services.context import ServiceContext
from agentlanes.store.identity import database_fingerprint


@get("/server", summary="Version, admin API on/off, database fingerprint", tags=["operations"])
async def server_info(state: State) -> dict[str, object]:
    ctx: ServiceContext = state.ctx
    return {
        "service": "agentlanes",
        "version": __version__,
        "admin_api": bool(ctx.settings.admin_token),
        "database": database_fingerprint(ctx.settings.database_url),
    }
