"""Changes to a project take effect on every process within a second, however they were
made (the admin API of any process, or ``agentlanes project`` writing the database
directly): SPEC, "One agent cannot hurt another", and issue #28.

Each process keeps projects in memory: the key → project cache (``RecentProjects``), the
project each open socket serves, the live projection, liveness, the hub's offsets. The
process that makes a change applies it to its own memory at once (``project_changed``,
``project_deleted``); every process also reads the rows of the projects it holds every
``project_watch_seconds`` (one query by primary key) and compares them with what it
holds (``check``), which finds changes made anywhere, a deleted project included (its
row is gone: its events went with it, so the event log cannot say so).

A changed key state is judged on every socket of the project: a revoked key, or a
replaced one whose grace is over, closes it with 4401; a replaced key in its grace
closes it when the grace ends. A deleted project's sockets close with 4401 and
everything kept for it is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlmodel import col, select

from agentlanes.clock import utcnow
from agentlanes.services.context import ServiceContext
from agentlanes.services.open_sockets import CLOSE_UNAUTHORIZED, OpenSocket, key_state
from agentlanes.store.models import Project

log = logging.getLogger("agentlanes.projects")

# What a socket or a cached request sees of a project: a change to any of these is
# applied (the name and slug only show, the rest decide).
_FIELDS = (
    "api_key_hash",
    "previous_api_key_hash",
    "previous_key_expires_at",
    "key_revoked_at",
    "conflict_mode",
    "block_on",
    "line_margin",
    "heartbeat_interval_seconds",
    "heartbeat_ttl_seconds",
    "agent_config_keys",
    "name",
    "slug",
    "epoch",
)
_KEY_FIELDS = _FIELDS[:4]


def _state(project: Project, fields: tuple[str, ...] = _FIELDS) -> tuple[Any, ...]:
    return tuple(getattr(project, name) for name in fields)


async def _close(socket: OpenSocket, reason: str) -> None:
    await socket.close_with(CLOSE_UNAUTHORIZED, reason)


async def _judge_sockets(ctx: ServiceContext, project: Project) -> int:
    """Apply the project's current row to its open sockets; returns how many closed."""
    assert project.id is not None
    now = utcnow()
    closing: list[asyncio.Task[None]] = []
    for socket in ctx.sockets.of(project.id):
        keys_changed = _state(socket.project, _KEY_FIELDS) != _state(project, _KEY_FIELDS)
        socket.project = project
        if not keys_changed:
            continue
        state = key_state(project, socket.key_hash, now)
        if state.refused:
            ctx.sockets.remove(socket)
            closing.append(asyncio.create_task(_close(socket, state.refused)))
        else:
            ctx.sockets.close_at(socket, state.until)
    if closing:
        await asyncio.gather(*closing)
    return len(closing)


async def project_changed(ctx: ServiceContext, project: Project) -> None:
    """The project's row changed (settings or keys): forget cached copies, and judge its
    sockets by the new row."""
    assert project.id is not None
    ctx.known_projects.forget_project(project.id)
    await _judge_sockets(ctx, project)


async def project_deleted(ctx: ServiceContext, project_id: int) -> None:
    """The project is gone: close its sockets (4401) and drop everything kept for it."""
    ctx.known_projects.forget_project(project_id)
    sockets = ctx.sockets.of(project_id)
    for socket in sockets:
        ctx.sockets.remove(socket)
    await asyncio.gather(*(_close(s, "the project was deleted") for s in sockets))
    ctx.projections.forget(project_id)
    ctx.hub.forget(project_id)
    ctx.conflict_pairs.forget_project(project_id)
    ctx.lease_refusals.forget_project(project_id)
    for token_hash in [h for h, (pid, _) in ctx.token_ids.items() if pid == project_id]:
        del ctx.token_ids[token_hash]
    await ctx.liveness.forget_project(project_id)


async def check(ctx: ServiceContext) -> int:
    """Compare the projects this process holds with their rows; apply what changed.
    Also closes sockets whose key's grace has ended. Returns how many projects changed."""
    for socket in ctx.sockets.due(utcnow()):
        ctx.sockets.remove(socket)
        await _close(socket, "this API key was replaced and its grace period is over")
    held = (
        set(ctx.known_projects.project_ids())
        | set(ctx.sockets.projects())
        | set(ctx.projections.project_ids())
    )
    if not held:
        return 0
    async with ctx.db.read() as db:
        rows = (await db.exec(select(Project).where(col(Project.id).in_(held)))).all()
    found = {p.id: p for p in rows}
    changed = 0
    for project_id in held:
        project = found.get(project_id)
        if project is None:
            log.info("project %s was deleted: its sockets close", project_id)
            await project_deleted(ctx, project_id)
            changed += 1
            continue
        state = _state(project)
        cached = ctx.known_projects.of_project(project_id)
        sockets = ctx.sockets.of(project_id)
        if any(_state(p) != state for p in cached) or any(
            _state(s.project) != state for s in sockets
        ):
            await project_changed(ctx, project)
            changed += 1
    return changed
