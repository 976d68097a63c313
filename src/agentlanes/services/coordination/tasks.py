"""Tasks: create, read, list, atomic claim, status changes, notes, stale claims (the
ready list and what blocks a task: readiness.py; the wire views: task_views.py).

State machine (``TRANSITIONS``; ``in_progress`` is entered only by claiming)::

    pending ──claim──► in_progress ──► done
       │  ▲               │  │  └────► cancelled
       │  └───────────────┘  └──────► blocked
       ├──► blocked ──► pending
       └──► cancelled

``done`` and ``cancelled`` are final. Leaving ``in_progress`` ends the claim. When the
claiming session times out the task stays ``in_progress`` with ``stale_since`` set (and a
system note): anyone may then claim it over; when it checks out or is superseded, the claim
is released and the task goes back to ``pending``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.clock import utcnow
from agentlanes.errors import InvalidInput, NotFound, StateConflict, TaskAlreadyClaimed
from agentlanes.services import names, validation
from agentlanes.services.context import ServiceContext
from agentlanes.services.coordination.readiness import blockers
from agentlanes.services.coordination.task_views import actor_view, note_view, task_view
from agentlanes.services.paging import FIRST_PAGE, PageRequest
from agentlanes.services.project_tx import ProjectTx
from agentlanes.services.session_auth import active_session, is_live
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.coordination import Task, TaskNote
from agentlanes.store.models import AgentSession, Project

STATUSES = ("pending", "in_progress", "blocked", "done", "cancelled")
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "pending": ("blocked", "cancelled"),
    "in_progress": ("pending", "blocked", "done", "cancelled"),
    "blocked": ("pending", "cancelled"),
    "done": (),
    "cancelled": (),
}
PRIORITY_MIN, PRIORITY_MAX, PRIORITY_DEFAULT = 0, 4, 2
SYSTEM = "system"


@dataclass(frozen=True)
class TaskInput:
    title: str | None = None
    description: str | None = None
    priority: int | None = None
    paths: list[str] | None = None
    depends_on: list[str] | None = None
    parent_id: str | None = None


# -- reads ---------------------------------------------------------------------------------


async def _task(db: AsyncSession, project_id: int, task_id: str) -> Task:
    return await queries.get_in_project(db, Task, project_id, task_id, "task")


async def _notes(db: AsyncSession, task_id: str) -> Sequence[TaskNote]:
    stmt = select(TaskNote).where(TaskNote.task_id == task_id).order_by(col(TaskNote.id))
    return (await db.exec(stmt)).all()


async def get_task(ctx: ServiceContext, project: Project, task_id: str) -> dict[str, Any]:
    assert project.id is not None
    async with ctx.db.read() as db:
        task = await _task(db, project.id, task_id)
        notes = await _notes(db, task.id)
        blocked_by = await blockers(db, project.id, task)
    return {**task_view(task, notes), "blocked_by": blocked_by}


async def list_tasks(
    ctx: ServiceContext,
    project: Project,
    *,
    status: str | None = None,
    claimed_by: str | None = None,
    parent_id: str | None = None,
    stale: bool | None = None,
    page: PageRequest = FIRST_PAGE,
) -> dict[str, Any]:
    """Tasks, oldest first, filtered and paged; ``total`` counts every match."""
    validation.check_choice(status, "status", STATUSES)
    assert project.id is not None
    conditions: list[Any] = [Task.project_id == project.id]
    if status is not None:
        conditions.append(Task.status == status)
    if claimed_by is not None:
        conditions.append(Task.claimed_agent_name == claimed_by)
    if parent_id is not None:
        conditions.append(Task.parent_id == parent_id)
    if stale is True:
        conditions.append(col(Task.stale_since).is_not(None))
    elif stale is False:
        conditions.append(col(Task.stale_since).is_(None))
    order = (col(Task.created_at), col(Task.id))
    async with ctx.db.read() as db:
        found = await page.read(db, Task, conditions, order)
    return found.answer("tasks", task_view)


# -- writes --------------------------------------------------------------------------------


async def _check_input(
    db: AsyncSession, project_id: int, data: TaskInput, ctx: ServiceContext
) -> tuple[str, str | None, int, list[str], list[str], str | None]:
    title = validation.check_text(
        data.title, "title", max_chars=LIMITS.task_title_chars, required=True, single_line=True
    )
    assert title is not None
    description = validation.check_text(
        data.description, "description", max_chars=LIMITS.task_description_chars
    )
    priority = PRIORITY_DEFAULT if data.priority is None else data.priority
    if not PRIORITY_MIN <= priority <= PRIORITY_MAX:
        raise InvalidInput("priority", f"must be {PRIORITY_MIN}-{PRIORITY_MAX} (0 = most urgent)")
    paths = await validation.check_patterns_off_loop(data.paths, ctx.settings, "paths")
    deps = list(dict.fromkeys(data.depends_on or []))
    if len(deps) > LIMITS.task_dependencies:
        raise InvalidInput("depends_on", f"at most {LIMITS.task_dependencies} dependencies")
    if deps:
        stmt = select(Task.id).where(Task.project_id == project_id, col(Task.id).in_(deps))
        found = set((await db.exec(stmt)).all())
        for index, dep in enumerate(deps):
            if dep not in found:
                # 404, not 400: the request is well formed, what it names does not exist.
                raise NotFound(
                    f"depends_on: no task {dep!r} in this project",
                    field="depends_on",
                    index=index,
                    task_id=dep,
                )
    if data.parent_id is not None:
        parent = await db.get(Task, data.parent_id)
        if parent is None or parent.project_id != project_id:
            raise NotFound(
                f"parent_id: no task {data.parent_id!r} in this project", field="parent_id"
            )
    return title, description, priority, paths, deps, data.parent_id


async def create_task(
    ctx: ServiceContext, project: Project, data: TaskInput, token: str | None = None
) -> dict[str, Any]:
    """Create a pending task (``created_by`` is the caller's agent when a token is sent)."""
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        creator = await active_session(tx.db, project, token, within_ttl=True) if token else None
        title, description, priority, paths, deps, parent = await _check_input(
            tx.db, project.id, data, ctx
        )
        now = utcnow()
        task = Task(
            id=names.new_id("task"),
            project_id=project.id,
            title=title,
            description=description,
            priority=priority,
            status="pending",
            paths=paths,
            depends_on=deps,
            parent_id=parent,
            created_by=creator.agent_name if creator else None,
            created_at=now,
            updated_at=now,
        )
        tx.db.add(task)
        view = task_view(task)
        await tx.emit("task.created", {"task": view, **actor_view(creator)})
    return view


async def _active_task_of(db: AsyncSession, session_id: str) -> Task | None:
    stmt = select(Task).where(Task.claimed_session_id == session_id, Task.status == "in_progress")
    return (await db.exec(stmt)).first()


async def _claimer(db: AsyncSession, task: Task) -> AgentSession | None:
    if task.claimed_session_id is None:
        return None
    return await db.get(AgentSession, task.claimed_session_id)


async def claim_task(
    ctx: ServiceContext, project: Project, task_id: str, token: str | None
) -> dict[str, Any]:
    """Claim a task for the caller's session, atomically (the project lock decides races).

    Refused with 409 ``TASK_ALREADY_CLAIMED`` when a live session holds it, 409 ``CONFLICT``
    when it is not claimable (status, unfinished dependencies, unpassed gates) or when the
    session already works on another task. A stale claim (its session gone) is taken over."""
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token, within_ttl=True)
        task = await _task(tx.db, project.id, task_id)
        took_over: dict[str, Any] | None = None
        if task.status == "in_progress":
            holder = await _claimer(tx.db, task)
            if holder is not None and holder.id == session.id:
                return task_view(task)  # claiming what you hold already: no change
            if is_live(holder):
                assert holder is not None
                raise TaskAlreadyClaimed(
                    f"task {task.id} is claimed by {holder.agent_name}",
                    task_id=task.id,
                    claimed_by={"session_id": holder.id, "agent_name": holder.agent_name},
                )
            took_over = {
                "session_id": task.claimed_session_id,
                "agent_name": task.claimed_agent_name,
            }
        elif task.status != "pending":
            raise StateConflict(
                f"task {task.id} is {task.status}; only a pending task can be claimed",
                task_id=task.id,
                status=task.status,
            )
        else:
            blocked_by = await blockers(tx.db, project.id, task)
            if blocked_by["dependencies"] or blocked_by["checkpoints"]:
                raise StateConflict(
                    f"task {task.id} is not ready: it waits on "
                    + ", ".join(blocked_by["dependencies"] + blocked_by["checkpoints"]),
                    task_id=task.id,
                    blocked_by=blocked_by,
                )
        current = await _active_task_of(tx.db, session.id)
        if current is not None and current.id != task.id:
            raise StateConflict(
                f"this session already works on task {current.id}; finish or release it first",
                active_task_id=current.id,
            )
        now = utcnow()
        task.status = "in_progress"
        task.claimed_session_id = session.id
        task.claimed_agent_name = session.agent_name
        task.claimed_at = now
        task.stale_since = None
        task.updated_at = now
        tx.db.add(task)
        view = task_view(task)
        await tx.emit("task.claimed", {"task": view, **actor_view(session), "took_over": took_over})
    return view


async def change_status(
    ctx: ServiceContext,
    project: Project,
    task_id: str,
    status: str | None,
    *,
    note: str | None = None,
    token: str | None = None,
) -> dict[str, Any]:
    """Move a task along ``TRANSITIONS``; a refused move names the allowed ones. While a live
    session holds the task only that session may change it."""
    if status is None:
        raise InvalidInput("status", "required")
    validation.check_choice(status, "status", STATUSES)
    note = validation.check_text(note, "note", max_chars=LIMITS.task_note_chars)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token, within_ttl=True) if token else None
        task = await _task(tx.db, project.id, task_id)
        allowed = TRANSITIONS[task.status]
        # A move the task's current status does not allow is a 409: the request is well
        # formed, the task's state refuses it (and says which moves it allows).
        if status == "in_progress" and task.status == "pending":
            raise StateConflict(
                "status: a task enters in_progress by POST /api/v1/tasks/{id}/claim",
                field="status",
                current=task.status,
                allowed=list(allowed),
            )
        if status not in allowed:
            raise StateConflict(
                f"status: cannot go from {task.status} to {status}; allowed: "
                + (", ".join(allowed) or "none (final)"),
                field="status",
                current=task.status,
                allowed=list(allowed),
            )
        holder = await _claimer(tx.db, task)
        if task.status == "in_progress" and is_live(holder):
            assert holder is not None
            if session is None or session.id != holder.id:
                raise TaskAlreadyClaimed(
                    f"task {task.id} is claimed by {holder.agent_name}; only its session "
                    "may change its status",
                    task_id=task.id,
                    claimed_by={"session_id": holder.id, "agent_name": holder.agent_name},
                )
        now = utcnow()
        previous = task.status
        task.status = status
        task.claimed_session_id = None
        task.claimed_agent_name = None
        task.claimed_at = None
        task.stale_since = None
        task.updated_at = now
        tx.db.add(task)
        note_row = None
        if note:
            note_row = TaskNote(
                task_id=task.id,
                author=session.agent_name if session else "api",
                kind="agent",
                body=note,
                created_at=now,
            )
            tx.db.add(note_row)
            await tx.db.flush()
        view = task_view(task)
        await tx.emit(
            "task.status",
            {
                "task": view,
                "from": previous,
                "to": status,
                **actor_view(session),
                "note": note_view(note_row) if note_row else None,
            },
        )
    return view


async def add_note(
    ctx: ServiceContext, project: Project, task_id: str, body: str | None, token: str | None
) -> dict[str, Any]:
    """Append a note (author: the caller's agent, or "api" without a session token)."""
    text = validation.check_text(body, "body", max_chars=LIMITS.task_note_chars, required=True)
    assert text is not None and project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await active_session(tx.db, project, token, within_ttl=True) if token else None
        task = await _task(tx.db, project.id, task_id)
        note = TaskNote(
            task_id=task.id,
            author=session.agent_name if session else "api",
            kind="agent",
            body=text,
            created_at=utcnow(),
        )
        tx.db.add(note)
        await tx.db.flush()
        view = note_view(note)
        await tx.emit("task.note", {"task_id": task.id, "note": view, **actor_view(session)})
    return view


# -- when a session ends -------------------------------------------------------------------


async def release_session_tasks(tx: ProjectTx, session: AgentSession, reason: str) -> None:
    """Session-end hook. Timed out: its task keeps the claim, marked ``stale_since`` with a
    system note (``task.stale``). Checked out or superseded: the claim is released and the
    task goes back to pending (``task.released``)."""
    stmt = select(Task).where(Task.claimed_session_id == session.id, Task.status == "in_progress")
    now = utcnow()
    for task in (await tx.db.exec(stmt)).all():
        if reason == "timed_out":
            task.stale_since = now
            task.updated_at = now
            note = TaskNote(
                task_id=task.id,
                author=SYSTEM,
                kind="system",
                body=(
                    f"claim went stale: session {session.id} ({session.agent_name}) timed out; "
                    "another session may claim this task"
                ),
                created_at=now,
            )
            tx.db.add(task)
            tx.db.add(note)
            await tx.db.flush()
            await tx.emit(
                "task.stale",
                {"task": task_view(task), **actor_view(session), "note": note_view(note)},
            )
        else:
            task.status = "pending"
            task.claimed_session_id = None
            task.claimed_agent_name = None
            task.claimed_at = None
            task.updated_at = now
            tx.db.add(task)
            await tx.emit(
                "task.released", {"task": task_view(task), **actor_view(session), "reason": reason}
            )
