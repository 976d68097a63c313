"""Checkpoints: named gates over tasks. A gated task is ready only when every checkpoint over
it has ``passed``; ``failed`` keeps it blocked. A checkpoint is resolved once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.clock import iso, utcnow
from agentlanes.errors import InvalidInput, NotFound, StateConflict
from agentlanes.services import names, validation
from agentlanes.services.context import ServiceContext
from agentlanes.services.paging import FIRST_PAGE, PageRequest
from agentlanes.services.session_auth import active_session
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.coordination import Checkpoint, Task
from agentlanes.store.models import Project

STATUSES = ("pending", "passed", "failed")
RESOLUTIONS = ("passed", "failed")


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
    return await queries.get_in_project(db, Checkpoint, project_id, checkpoint_id, "checkpoint")


async def create_checkpoint(
    ctx: ServiceContext, project: Project, data: CheckpointInput, token: str | None = None
) -> dict[str, Any]:
    name = validation.check_text(
        data.name, "name", max_chars=LIMITS.checkpoint_name_chars, required=True
    )
    description = validation.check_text(
        data.description, "description", max_chars=LIMITS.checkpoint_description_chars
    )
    task_ids = list(dict.fromkeys(data.task_ids or []))
    if not task_ids:
        raise InvalidInput("task_ids", "required: at least one task id to gate")
    if len(task_ids) > LIMITS.checkpoint_tasks:
        raise InvalidInput("task_ids", f"at most {LIMITS.checkpoint_tasks} tasks")
    assert name is not None and project.id is not None
    async with ctx.project_tx(project.id) as tx:
        creator = await active_session(tx.db, project, token, within_ttl=True) if token else None
        stmt = select(Task.id).where(Task.project_id == project.id, col(Task.id).in_(task_ids))
        found = set((await tx.db.exec(stmt)).all())
        for index, task_id in enumerate(task_ids):
            if task_id not in found:
                # 404, not 400: the request is well formed, what it names does not exist.
                raise NotFound(
                    f"task_ids: no task {task_id!r} in this project", field="task_ids", index=index
                )
        cp = Checkpoint(
            id=names.new_id("chk"),
            project_id=project.id,
            name=name,
            description=description,
            task_ids=task_ids,
            status="pending",
            created_by=creator.agent_name if creator else None,
            created_at=utcnow(),
        )
        tx.db.add(cp)
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
    note = validation.check_text(note, "note", max_chars=LIMITS.checkpoint_description_chars)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        resolver = await active_session(tx.db, project, token, within_ttl=True) if token else None
        cp = await _checkpoint(tx.db, project.id, checkpoint_id)
        if cp.status != "pending":
            raise StateConflict(
                f"checkpoint {cp.id} was already resolved ({cp.status})",
                checkpoint_id=cp.id,
                status=cp.status,
            )
        cp.status = status
        cp.resolved_by = resolver.agent_name if resolver else None
        cp.resolution_note = note
        cp.resolved_at = utcnow()
        tx.db.add(cp)
        await tx.db.flush()
        unblocked: list[str] = []
        if status == "passed":
            others = (
                await tx.db.exec(
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
    page: PageRequest = FIRST_PAGE,
) -> dict[str, Any]:
    """Checkpoints, oldest first; ``task_id`` keeps those that gate that task."""
    validation.check_choice(status, "status", STATUSES)
    assert project.id is not None
    conditions: list[Any] = [Checkpoint.project_id == project.id]
    if status is not None:
        conditions.append(Checkpoint.status == status)
    order = (col(Checkpoint.created_at), col(Checkpoint.id))
    async with ctx.db.read() as db:
        if task_id is None:
            found = await page.read(db, Checkpoint, conditions, order)
        else:
            # task_ids is a JSON list: filter in Python (a project has few checkpoints).
            every = (await db.exec(select(Checkpoint).where(*conditions).order_by(*order))).all()
            found = page.of_list([cp for cp in every if task_id in (cp.task_ids or [])])
    return found.answer("checkpoints", checkpoint_view)
