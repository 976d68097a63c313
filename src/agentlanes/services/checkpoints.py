"""Checkpoints: named gates over tasks. A gated task is ready only when every checkpoint over
it has ``passed``; ``failed`` keeps it blocked. A checkpoint is resolved once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.clock import iso, utcnow
from agentlanes.errors import Conflict, InvalidInput, NotFound
from agentlanes.services import checks
from agentlanes.services.acting import acting_session
from agentlanes.services.context import ServiceContext
from agentlanes.store import queries
from agentlanes.store.coordination import Checkpoint, Task
from agentlanes.store.models import Project

STATUSES = ("pending", "passed", "failed")
RESOLUTIONS = ("passed", "failed")
MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 10_000
MAX_TASKS = 500


@dataclass(frozen=True)
class CheckpointInput:
    name: str | None = None
    task_ids: list[str] | None = None
    description: str | None = None


def checkpoint_view(cp: Checkpoint) -> dict[str, Any]:
    return {
        "checkpoint_id": cp.id,
        "name": cp.name,
        "description": cp.description,
        "task_ids": list(cp.task_ids or []),
        "status": cp.status,
        "created_by": cp.created_by,
        "resolved_by": cp.resolved_by,
        "note": cp.resolution_note,
        "created_at": iso(cp.created_at),
        "resolved_at": iso(cp.resolved_at),
    }


async def _checkpoint(db: AsyncSession, project_id: int, checkpoint_id: str) -> Checkpoint:
    cp = await db.get(Checkpoint, checkpoint_id)
    if cp is None or cp.project_id != project_id:
        raise NotFound(f"no checkpoint {checkpoint_id!r} in this project")
    return cp


async def create_checkpoint(
    ctx: ServiceContext, project: Project, data: CheckpointInput, token: str | None = None
) -> dict[str, Any]:
    name = checks.text(data.name, "name", max_chars=MAX_NAME_CHARS, required=True)
    description = checks.text(data.description, "description", max_chars=MAX_DESCRIPTION_CHARS)
    task_ids = list(dict.fromkeys(data.task_ids or []))
    if not task_ids:
        raise InvalidInput("task_ids", "required: at least one task id to gate")
    if len(task_ids) > MAX_TASKS:
        raise InvalidInput("task_ids", f"at most {MAX_TASKS} tasks")
    assert name is not None and project.id is not None
    async with ctx.project_tx(project.id) as tx:
        creator = await acting_session(tx.session, project, token) if token else None
        stmt = select(Task.id).where(Task.project_id == project.id, col(Task.id).in_(task_ids))
        found = set((await tx.session.exec(stmt)).all())
        for index, task_id in enumerate(task_ids):
            if task_id not in found:
                # 404, not 400: the request is well formed, what it names does not exist.
                raise NotFound(
                    f"task_ids: no task {task_id!r} in this project", field="task_ids", index=index
                )
        cp = Checkpoint(
            id=checks.new_id("chk"),
            project_id=project.id,
            name=name,
            description=description,
            task_ids=task_ids,
            status="pending",
            created_by=creator.agent_name if creator else None,
            created_at=utcnow(),
        )
        tx.session.add(cp)
        view = checkpoint_view(cp)
        await tx.emit(
            "checkpoint.created",
            {"checkpoint": view, "agent_name": creator.agent_name if creator else None},
        )
    return view


async def resolve_checkpoint(
    ctx: ServiceContext,
    project: Project,
    checkpoint_id: str,
    status: str | None,
    *,
    note: str | None = None,
    token: str | None = None,
) -> dict[str, Any]:
    """Resolve a pending checkpoint ``passed`` or ``failed`` (409 ``CONFLICT`` if it was
    resolved already). The answer and the event list ``unblocked_task_ids``: the gated tasks
    whose every checkpoint has now passed."""
    if status is None:
        raise InvalidInput("status", "required: passed or failed")
    if status not in RESOLUTIONS:
        raise InvalidInput("status", "must be passed or failed")
    note = checks.text(note, "note", max_chars=MAX_DESCRIPTION_CHARS)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        resolver = await acting_session(tx.session, project, token) if token else None
        cp = await _checkpoint(tx.session, project.id, checkpoint_id)
        if cp.status != "pending":
            raise Conflict(
                f"checkpoint {cp.id} was already resolved ({cp.status})",
                checkpoint_id=cp.id,
                status=cp.status,
            )
        cp.status = status
        cp.resolved_by = resolver.agent_name if resolver else None
        cp.resolution_note = note
        cp.resolved_at = utcnow()
        tx.session.add(cp)
        await tx.session.flush()
        unblocked: list[str] = []
        if status == "passed":
            others = (
                await tx.session.exec(
                    select(Checkpoint).where(
                        Checkpoint.project_id == project.id, Checkpoint.status != "passed"
                    )
                )
            ).all()
            still_gated = {t for other in others for t in other.task_ids or []}
            unblocked = [t for t in cp.task_ids or [] if t not in still_gated]
        view = {**checkpoint_view(cp), "unblocked_task_ids": unblocked}
        await tx.emit(
            "checkpoint.resolved",
            {
                "checkpoint": checkpoint_view(cp),
                "unblocked_task_ids": unblocked,
                "agent_name": cp.resolved_by,
            },
        )
    return view


async def get_checkpoint(
    ctx: ServiceContext, project: Project, checkpoint_id: str
) -> dict[str, Any]:
    assert project.id is not None
    async with ctx.db.read() as db:
        return checkpoint_view(await _checkpoint(db, project.id, checkpoint_id))


async def list_checkpoints(
    ctx: ServiceContext,
    project: Project,
    *,
    status: str | None = None,
    task_id: str | None = None,
    limit: int | None = None,
    offset: int | None = None,
) -> dict[str, Any]:
    """Checkpoints, oldest first; ``task_id`` keeps those that gate that task."""
    checks.one_of(status, "status", STATUSES)
    limit, offset = checks.page(limit, offset)
    assert project.id is not None
    conditions: list[Any] = [Checkpoint.project_id == project.id]
    if status is not None:
        conditions.append(Checkpoint.status == status)
    order = (col(Checkpoint.created_at), col(Checkpoint.id))
    async with ctx.db.read() as db:
        if task_id is None:
            rows, total = await queries.page_of(db, Checkpoint, conditions, order, limit, offset)
        else:
            # task_ids is a JSON list: filter in Python (a project has few checkpoints).
            every = (await db.exec(select(Checkpoint).where(*conditions).order_by(*order))).all()
            matching = [cp for cp in every if task_id in (cp.task_ids or [])]
            total = len(matching)
            rows = matching[offset : offset + limit]
    return {
        "checkpoints": [checkpoint_view(cp) for cp in rows],
        "total": total,
        "limit": limit,
        "offset": offset,
    }
