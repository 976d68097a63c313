"""The application factory: routes, error handling, lifespan (database, hub, jobs)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from litestar import Litestar, MediaType, Response, get
from litestar.enums import ScopeType
from litestar.openapi import OpenAPIConfig
from litestar.plugins.prometheus import PrometheusConfig, PrometheusController
from litestar.plugins.pydantic import PydanticPlugin
from litestar.stores.base import Store
from litestar.types import Middleware

from agentlanes import __version__
from agentlanes.admin_token import admin_token_problem
from agentlanes.api import dashboard, ops
from agentlanes.api.agents import AgentController
from agentlanes.api.allow import OptionsAllow
from agentlanes.api.board import BoardController
from agentlanes.api.checkpoints import CheckpointController
from agentlanes.api.conflicts import ConflictListController
from agentlanes.api.consensus import ConsensusController
from agentlanes.api.current_project import CurrentProjectController
from agentlanes.api.deps import DEPENDENCIES
from agentlanes.api.edge import edge_middleware, security_headers
from agentlanes.api.errors import EXCEPTION_HANDLERS
from agentlanes.api.events import EventController, events_socket
from agentlanes.api.leases import LeaseController
from agentlanes.api.limits import rate_limit, rate_limit_stores
from agentlanes.api.messages import MessageController
from agentlanes.api.metrics import LeanPrometheusMiddleware
from agentlanes.api.news import NewsController
from agentlanes.api.openapi import ContractJsonPlugin, components
from agentlanes.api.projects import ProjectController
from agentlanes.api.query import QUERY_DECODERS
from agentlanes.api.queue import QueueController
from agentlanes.api.server_info import server_info
from agentlanes.api.sessions import SessionController
from agentlanes.api.tasks import TaskController
from agentlanes.api.viewer import PackagedSwaggerPlugin
from agentlanes.hub import create_hub
from agentlanes.jobs import start_scheduler
from agentlanes.mcp.http import McpMount
from agentlanes.services import coordination
from agentlanes.services.context import ServiceContext
from agentlanes.settings import Settings, get_settings
from agentlanes.store import migrate
from agentlanes.store.database import Database

log = logging.getLogger("agentlanes")


class MetricsController(PrometheusController):
    path = "/metrics"

    # Redeclared only so that the document names the real content type (the Prometheus
    # text format), not JSON.
    @get(media_type=MediaType.TEXT, summary="Prometheus metrics", tags=["operations"])
    async def get(self) -> Response[bytes]:
        return await PrometheusController.get.fn(self)


def create_app(settings: Settings | None = None, *, run_jobs: bool = True) -> Litestar:
    settings = settings or get_settings()
    problem = admin_token_problem(settings.admin_token)
    if problem:
        # Refuse to serve an admin API that anyone could open (generate: openssl rand -hex 32).
        raise ValueError(f"{problem} (openssl rand -hex 32 makes one; empty turns it off)")

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        db = Database(settings.database_url)
        await migrate.upgrade(db)  # serialised across processes (store/migrate.py)
        hub = create_hub(settings)
        await hub.start()
        ctx = ServiceContext(settings=settings, db=db, hub=hub)
        coordination.register(ctx)
        await ctx.liveness.start(db)
        app.state.ctx = ctx
        scheduled = start_scheduler(ctx) if run_jobs else None
        try:
            yield
        finally:
            if scheduled is not None:
                # Runs in flight end (or are cancelled) before the database closes.
                await scheduled.stop(settings.job_shutdown_grace_seconds)
            await hub.stop()
            await ctx.liveness.stop()  # the last beats written through
            await db.dispose()

    prometheus = PrometheusConfig(
        app_name="agentlanes",
        prefix="agentlanes",
        group_path=True,
        scopes={ScopeType.HTTP},
        middleware_class=LeanPrometheusMiddleware,
    )
    mcp = McpMount(settings)  # the MCP tools over streamable HTTP at /mcp
    # Host/Origin first: a request refused there costs nothing and counts nowhere.
    middleware: list[Middleware] = [edge_middleware(settings), prometheus.middleware]
    stores: dict[str, Store] = {}
    if settings.rate_limit_per_minute:
        middleware.append(rate_limit(settings.rate_limit_per_minute))
        stores = rate_limit_stores(settings)  # Redis when configured: one limit for all
    app = Litestar(
        route_handlers=[
            ProjectController,
            CurrentProjectController,
            SessionController,
            ConflictListController,
            BoardController,
            EventController,
            events_socket,
            TaskController,
            CheckpointController,
            MessageController,
            NewsController,
            LeaseController,
            QueueController,
            ConsensusController,
            AgentController,
            server_info,
            ops.healthz,
            ops.readyz,
            MetricsController,
            dashboard.index,
            dashboard.static_router,
            *mcp.handlers,
        ],
        dependencies=DEPENDENCIES,
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[lifespan, *mcp.lifespans],
        middleware=middleware,
        before_send=[security_headers, OptionsAllow()],
        stores=stores,
        # Strict: Litestar validates bodies with strict=False by default, which overrides the
        # models' StrictInt/StrictStr (false or "1" became a priority of 0 or 1).
        plugins=[PydanticPlugin(validate_strict=True)],
        request_max_body_size=settings.max_body_bytes,
        # Integer query parameters read by our rule (api/query.py).
        type_decoders=QUERY_DECODERS,
        openapi_config=OpenAPIConfig(
            title="agentlanes",
            version=__version__,
            path="/schema",
            # The document served is the contract (api/openapi.py); the viewer's files ship
            # in the package (api/viewer.py): no CDN.
            render_plugins=[ContractJsonPlugin(settings), PackagedSwaggerPlugin()],
            components=components(),
        ),
        debug=False,
        # Logging is configured by `agentlanes serve` (and uvicorn), not by Litestar.
        logging_config=None,
    )
    return app
