"""The agent registry: one row per agent name in a project, with a role and a config object.

The project declares which config keys an agent may hold (``agent_config_keys``, set when
the project is created); other keys are dropped and named in ``dropped_keys``.
"""

from __future__ import annotations

import re
from typing import Any

from sqlmodel import col, select

from agentlanes.clock import iso, utcnow
from agentlanes.errors import InvalidInput, NotFound
from agentlanes.services import names, validation
from agentlanes.services.context import ServiceContext
from agentlanes.services.paging import FIRST_PAGE, PageRequest
from agentlanes.settings import LIMITS
from agentlanes.store.coordination import RegisteredAgent
from agentlanes.store.models import Project

ROLE_RE = re.compile(r"^[A-Za-z0-9._ -]{1,64}\Z")


def agent_view(a: RegisteredAgent) -> dict[str, Any]:
    return {
        "agent_id": a.id,
        "name": a.name,
        "role": a.role,
        "config": dict(a.config or {}),
        "created_at": iso(a.created_at),
        "updated_at": iso(a.updated_at),
    }


def _name(value: str) -> str:
    if not validation.AGENT_NAME_RE.match(value):
        raise InvalidInput("name", "must be 1-64 characters of A-Z a-z 0-9 . _ -")
    return value


async def upsert(
    ctx: ServiceContext,
    project: Project,
    name: str,
    *,
    role: str | None,
    config: dict[str, Any] | None,
    sent: frozenset[str],
) -> tuple[dict[str, Any], bool]:
    """Create or update an agent; return (view with ``dropped_keys``, created).

    Fields left out keep their value; ``config`` replaces the whole object (after the
    undeclared keys are dropped)."""
    name = _name(name)
    if role is not None and not ROLE_RE.match(role):
        raise InvalidInput("role", "must be 1-64 characters of A-Z a-z 0-9 . _ - and spaces")
    dropped: list[str] = []
    kept: dict[str, Any] | None = None
    if config is not None:
        validation.check_json_size(config, "config", LIMITS.agent_config_bytes)
        allowed = set(project.agent_config_keys or [])
        kept = {k: v for k, v in config.items() if k in allowed}
        dropped = sorted(k for k in config if k not in allowed)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        stmt = select(RegisteredAgent).where(
            RegisteredAgent.project_id == project.id, RegisteredAgent.name == name
        )
        agent = (await tx.db.exec(stmt)).first()
        now = utcnow()
        created = agent is None
        if agent is None:
            agent = RegisteredAgent(
                id=names.new_id("agent"),
                project_id=project.id,
                name=name,
                role=None,
                config={},
                created_at=now,
                updated_at=now,
            )
        if "role" in sent:
            agent.role = role
        if kept is not None:
            agent.config = kept
        elif "config" in sent:
            agent.config = {}
        agent.updated_at = now
        tx.db.add(agent)
        view = agent_view(agent)
        await tx.emit(
            "agent.registered", {"agent": view, "created": created, "dropped_keys": dropped}
        )
    return {**view, "dropped_keys": dropped}, created


async def get_agent(ctx: ServiceContext, project: Project, name: str) -> dict[str, Any]:
    assert project.id is not None
    async with ctx.db.read() as db:
        stmt = select(RegisteredAgent).where(
            RegisteredAgent.project_id == project.id, RegisteredAgent.name == name
        )
        agent = (await db.exec(stmt)).first()
    if agent is None:
        raise NotFound(f"no agent {name!r} registered in this project")
    return agent_view(agent)


async def list_agents(
    ctx: ServiceContext,
    project: Project,
    *,
    role: str | None = None,
    page: PageRequest = FIRST_PAGE,
) -> dict[str, Any]:
    """Registered agents by name; ``allowed_config_keys`` says what config may hold."""
    assert project.id is not None
    conditions: list[Any] = [RegisteredAgent.project_id == project.id]
    if role is not None:
        conditions.append(RegisteredAgent.role == role)
    async with ctx.db.read() as db:
        found = await page.read(db, RegisteredAgent, conditions, (col(RegisteredAgent.name),))
    return found.answer(
        "agents", agent_view, allowed_config_keys=list(project.agent_config_keys or [])
    )
