"""The application factory: routes, error handling, lifespan (database, hub, jobs)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from litestar import Litestar
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin
from litestar.plugins.prometheus import PrometheusConfig, PrometheusController

from agentlanes import __version__
from agentlanes.api import dashboard, ops
from agentlanes.api.agents import AgentController
from agentlanes.api.board import BoardController
from agentlanes.api.checkpoints import CheckpointController
from agentlanes.api.conflicts import ConflictListController
from agentlanes.api.consensus import ConsensusController
from agentlanes.api.current_project import CurrentProjectController
from agentlanes.api.deps import DEPENDENCIES
from agentlanes.api.errors import EXCEPTION_HANDLERS
from agentlanes.api.events import EventController, events_socket
from agentlanes.api.leases import LeaseController
from agentlanes.api.limits import rate_limit
from agentlanes.api.messages import MessageController
from agentlanes.api.projects import ProjectController
from agentlanes.api.sessions import SessionController
from agentlanes.api.tasks import TaskController
from agentlanes.hub import create_hub
from agentlanes.jobs import start_scheduler
from agentlanes.mcp_http import McpMount
from agentlanes.services.context import ServiceContext
from agentlanes.settings import Settings, get_settings
from agentlanes.store.database import Database

log = logging.getLogger("agentlanes")


class MetricsController(PrometheusController):
    path = "/metrics"


def create_app(settings: Settings | None = None, *, run_jobs: bool = True) -> Litestar:
    settings = settings or get_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        db = Database(settings.database_url)
        await db.create_all()
        hub = create_hub(settings)
        await hub.start()
        ctx = ServiceContext(settings=settings, db=db, hub=hub)
        app.state.ctx = ctx
        scheduler = start_scheduler(ctx) if run_jobs else None
        try:
            yield
        finally:
            if scheduler is not None:
                scheduler.shutdown(wait=False)
            await hub.stop()
            await db.dispose()

    prometheus = PrometheusConfig(
        app_name="agentlanes",
        prefix="agentlanes",
        group_path=True,
        scopes={"http"},  # type: ignore[arg-type]
    )
    mcp = McpMount(settings)  # the MCP tools over streamable HTTP at /mcp
    middleware = [prometheus.middleware]
    if settings.rate_limit_per_minute:
        middleware.append(rate_limit(settings.rate_limit_per_minute))
    return Litestar(
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
            LeaseController,
            ConsensusController,
            AgentController,
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
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="agentlanes",
            version=__version__,
            path="/schema",
            render_plugins=[JsonRenderPlugin(), SwaggerRenderPlugin()],
        ),
        debug=False,
        # Logging is configured by `agentlanes serve` (and uvicorn), not by Litestar.
        logging_config=None,
    )
