"""Where a `project` command goes: the running server's admin API, or the database.

The rule (SPEC "Names"), decided once here and always said on stderr:

1. ``--database``: the configured database, directly.
2. Else, when a server answers at the configured address (``--server`` or the
   ``host``/``port`` settings) and this command has the admin token: that server's
   admin API.
3. A server answers but its admin API is off, or no admin token is set here: the
   database directly, but only when it is the server's own (the server publishes a
   fingerprint of its database at ``GET /server``); otherwise the command stops
   and says why — a key written to another database would be refused by that server.
4. No server answers: the configured database.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import httpx

from agentlanes.cli.errors import (
    EXIT_CONFLICT,
    EXIT_SERVER_ERROR,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CommandError,
)
from agentlanes.settings import Settings

PROBE_TIMEOUT = 2.0


def server_url(settings: Settings, override: str | None) -> str:
    if override:
        return override.rstrip("/")
    host = settings.host
    # A server bound to every address is reached on loopback from this machine.
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.port}"


def _exit_code(status: int) -> int:
    if status == 409:
        return EXIT_CONFLICT
    if 400 <= status < 500 and status != 401:
        return EXIT_USAGE
    return EXIT_SERVER_ERROR


@dataclass
class ServerRoute:
    url: str
    admin_token: str

    @property
    def label(self) -> str:
        return f"via server {self.url}"

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            r = httpx.request(
                method,
                f"{self.url}/api/v1/projects{path}",
                json=body,
                headers={"Authorization": f"Bearer {self.admin_token}"},
                timeout=30,
            )
        except httpx.HTTPError as exc:
            raise CommandError(
                f"{self.url}: {exc} (a server elsewhere? pass --server http://HOST:PORT)",
                EXIT_UNREACHABLE,
            ) from None
        try:
            data = r.json()
        except ValueError:
            data = {"error": {"code": "BAD_ANSWER", "message": r.text[:200]}}
        if r.status_code >= 400:
            message = data.get("error", {}).get("message", r.text[:200])
            if r.status_code == 401:
                message += " (check AGENTLANES_ADMIN_TOKEN against the server's admin_token)"
            raise CommandError(message, _exit_code(r.status_code), payload=data)
        return data


@dataclass
class DatabaseRoute:
    settings: Settings
    why: str = ""

    @property
    def label(self) -> str:
        from agentlanes.store.identity import database_label

        label = f"via database {database_label(self.settings.database_url)}"
        return f"{label} ({self.why})" if self.why else label

    def run(self, use_case: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> Any:
        """Run a service use case on the database (migrating it first, like a server)."""
        from sqlalchemy.exc import DBAPIError

        from agentlanes.errors import AgentlanesError
        from agentlanes.hub.memory import MemoryHub
        from agentlanes.services import coordination
        from agentlanes.services.context import ServiceContext
        from agentlanes.store import migrate
        from agentlanes.store.database import Database

        async def go() -> Any:
            db = Database(self.settings.database_url)
            try:
                await migrate.upgrade(db)
                ctx = ServiceContext(settings=self.settings, db=db, hub=MemoryHub())
                coordination.register(ctx)
                return await use_case(ctx, *args)
            finally:
                await db.dispose()

        try:
            return asyncio.run(go())
        except AgentlanesError as exc:
            raise CommandError(
                exc.message, _exit_code(exc.status_code), payload=exc.body()
            ) from None
        except migrate.MigrationError as exc:
            raise CommandError(str(exc), EXIT_USAGE) from None
        except (OSError, DBAPIError) as exc:
            raise CommandError(f"cannot reach the database: {exc}", EXIT_UNREACHABLE) from None


Route = ServerRoute | DatabaseRoute


def _probe(url: str) -> dict[str, Any] | None:
    """The server's self-description, or None when nothing (agentlanes) answers."""
    try:
        r = httpx.get(f"{url}/server", timeout=PROBE_TIMEOUT)
    except httpx.HTTPError:
        return None
    if r.status_code != 200:
        return None
    try:
        info = r.json()
    except ValueError:
        return None
    return info if isinstance(info, dict) and info.get("service") == "agentlanes" else None


def choose(settings: Settings, *, server: str | None, database: bool) -> Route:
    """Pick the route by the rule in the module docstring, and say which on stderr."""
    from agentlanes.store.identity import database_fingerprint, database_label

    url = server_url(settings, server)
    route: Route
    if database:
        route = DatabaseRoute(settings, "asked with --database")
    else:
        info = _probe(url)
        if info is None and server is None:
            # A server started on another port (`serve --port`) recorded where it listens
            # beside its database: go there if it still answers for this database.
            from agentlanes.server.address import recorded

            elsewhere = recorded(settings.database_url)
            found = _probe(elsewhere) if elsewhere and elsewhere != url else None
            if found is not None and found.get("database") == database_fingerprint(
                settings.database_url
            ):
                print(
                    f"agentlanes: found the server at {elsewhere} (recorded by serve)",
                    file=sys.stderr,
                )
                url, info = str(elsewhere), found
        if info is None:
            route = DatabaseRoute(
                settings,
                f"no agentlanes server answers at {url}; started elsewhere? pass "
                "--server http://HOST:PORT",
            )
        elif info.get("admin_api") and settings.admin_token:
            route = ServerRoute(url, settings.admin_token)
        else:
            why = (
                "its admin API is off"
                if not info.get("admin_api")
                else "AGENTLANES_ADMIN_TOKEN is not set here"
            )
            if info.get("database") != database_fingerprint(settings.database_url):
                raise CommandError(
                    f"a server answers at {url} but {why}, and it uses another database than "
                    f"this command's ({database_label(settings.database_url)}): a key written "
                    "there would not open anything on that server. Set AGENTLANES_ADMIN_TOKEN "
                    "to the server's admin_token, or run this with the server's settings "
                    "(AGENTLANES_DATABASE_URL / AGENTLANES_CONFIG, or its directory); "
                    "--database writes to this command's database anyway.",
                    EXIT_USAGE,
                )
            route = DatabaseRoute(settings, f"the server at {url} uses it; {why}")
    print(f"agentlanes: {route.label}", file=sys.stderr)
    return route
