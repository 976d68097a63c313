"""Tasks: create, list, the ready list, atomic claim, status changes, notes, stale claims.

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

from agentlanes.clock import iso, utcnow
from agentlanes.domain.conflicts import ConflictDetector, Scope
from agentlanes.errors import Conflict, InvalidInput, NotFound, TaskAlreadyClaimed
from agentlanes.services import checks, scope
from agentlanes.services.acting import acting_session, is_live
from agentlanes.services.context import ProjectTx, ServiceContext
from agentlanes.services.sessions import live_sessions
from agentlanes.store import queries
from agentlanes.store.coordination import Checkpoint, Task, TaskNote
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
MAX_TITLE_CHARS = 200
MAX_DESCRIPTION_CHARS = 20_000
MAX_NOTE_CHARS = 10_000
MAX_DEPENDENCIES = 100
SYSTEM = "system"


@dataclass(frozen=True)
class TaskInput:
    title: str | None = None
    description: str | None = None
    priority: int | None = None
    paths: list[str] | None = None
    depends_on: list[str] | None = None
    parent_id: str | None = None


def task_view(t: Task, notes: Sequence[TaskNote] | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "task_id": t.id,
        "title": t.title,
        "description": t.description,
        "priority": t.priority,
        "status": t.status,
        "paths": list(t.paths or []),
        "depends_on": list(t.depends_on or []),
        "parent_id": t.parent_id,
        "created_by": t.created_by,
        "claimed_by": (
            {"session_id": t.claimed_session_id, "agent_name": t.claimed_agent_name}
            if t.claimed_session_id
            else None
        ),
        "claimed_at": iso(t.claimed_at),
        "stale_since": iso(t.stale_since),
        "created_at": iso(t.created_at),
        "updated_at": iso(t.updated_at),
    }
    if notes is not None:
        view["notes"] = [note_view(n) for n in notes]
    return view


def note_view(n: TaskNote) -> dict[str, Any]:
    return {
        "note_id": n.id,
        "task_id": n.task_id,
        "author": n.author,
        "kind": n.kind,
        "body": n.body,
        "created_at": iso(n.created_at),
    }


def _actor(session: AgentSession | None) -> dict[str, Any]:
    return {
        "session_id": session.id if session else None,
        "agent_name": session.agent_name if session else None,
    }


# -- reads ---------------------------------------------------------------------------------


async def _task(db: AsyncSession, project_id: int, task_id: str) -> Task:
    task = await db.get(Task, task_id)
    if task is None or task.project_id != project_id:
        raise NotFound(f"no task {task_id!r} in this project")
    return task


async def _notes(db: AsyncSession, task_id: str) -> Sequence[TaskNote]:
    stmt = select(TaskNote).where(TaskNote.task_id == task_id).order_by(col(TaskNote.id))
    return (await db.exec(stmt)).all()


async def _statuses(db: AsyncSession, ids: Sequence[str]) -> dict[str, str]:
    if not ids:
        return {}
    stmt = select(Task.id, Task.status).where(col(Task.id).in_(list(ids)))
    return dict((await db.exec(stmt)).all())  # type: ignore[arg-type]


async def _gates(db: AsyncSession, project_id: int) -> dict[str, list[Checkpoint]]:
    """Each gated task id -> the checkpoints over it."""
    stmt = select(Checkpoint).where(Checkpoint.project_id == project_id)
    gates: dict[str, list[Checkpoint]] = {}
    for cp in (await db.exec(stmt)).all():
        for task_id in cp.task_ids or []:
            gates.setdefault(task_id, []).append(cp)
    return gates


async def blockers(db: AsyncSession, project_id: int, task: Task) -> dict[str, list[str]]:
    """What keeps a task from being ready: unfinished dependencies, unpassed gates."""
    deps = list(task.depends_on or [])
    statuses = await _statuses(db, deps)
    gates = (await _gates(db, project_id)).get(task.id, [])
    return {
        "dependencies": [d for d in deps if statuses.get(d) != "done"],
        "checkpoints": [cp.id for cp in gates if cp.status != "passed"],
    }


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
    limit: int | None = None,
    offset: int | None = None,
) -> dict[str, Any]:
    """Tasks, oldest first, filtered and paged; ``total`` counts every match."""
    checks.one_of(status, "status", STATUSES)
    limit, offset = checks.page(limit, offset)
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
        rows, total = await queries.page_of(db, Task, conditions, order, limit, offset)
    return {
        "tasks": [task_view(t) for t in rows],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


async def ready_tasks(
    ctx: ServiceContext, project: Project, *, token: str | None = None, limit: int | None = None
) -> dict[str, Any]:
    """Pending tasks whose dependencies are done, whose gates all passed, that nobody
    claims, and whose paths no live session claims (its declared files, or the paths of
    the task it is working on). Most urgent first, then oldest. With a token, the caller's
    own session's claims do not count against a task."""
    limit, _ = checks.page(limit, 0)
    assert project.id is not None
    now = utcnow()
    async with ctx.db.read() as db:
        own_id = (await acting_session(db, project, token)).id if token else None
        # Only the columns the decision needs: loading whole rows of every pending task
        # was most of the cost; full rows are read for the ready ones alone.
        stmt = (
            select(Task.id, Task.depends_on, Task.paths, Task.claimed_session_id)
            .where(Task.project_id == project.id, Task.status == "pending")
            .order_by(col(Task.priority), col(Task.created_at), col(Task.id))
        )
        pending = (await db.exec(stmt)).all()  # type: ignore[call-overload]
        dep_ids = {d for row in pending for d in row[1] or []}
        statuses = await _statuses(db, sorted(dep_ids))
        gates = await _gates(db, project.id)
        # The live projection (services/projection.py), not a read of every session.
        _, live = await live_sessions(ctx, project.id, now)
        working = (
            await db.exec(
                select(Task.claimed_session_id, Task.paths).where(  # type: ignore[call-overload]
                    Task.project_id == project.id,
                    Task.status == "in_progress",
                    col(Task.claimed_session_id).is_not(None),
                )
            )
        ).all()
        task_paths: dict[str, list[str]] = {}
        for session_id, paths in working:
            task_paths.setdefault(session_id or "", []).extend(paths or [])
        detector = ConflictDetector()
        for s in live:
            patterns = tuple(dict.fromkeys([*(s.declared_files or []), *task_paths.get(s.id, [])]))
            detector.add(Scope(s.id, s.agent_name, None, patterns))
        ready_ids: list[str] = []
        for task_id, depends_on, paths, claimed in pending:
            if claimed is not None:
                continue
            if any(statuses.get(d) != "done" for d in depends_on or []):
                continue
            if any(cp.status != "passed" for cp in gates.get(task_id, [])):
                continue
            found = detector.find(patterns=paths, exclude_session_id=own_id) if paths else []
            if any(c.certain for c in found):  # certain overlaps only (SPEC)
                continue
            ready_ids.append(task_id)
            if len(ready_ids) >= limit:
                break
        rows = {
            t.id: t for t in (await db.exec(select(Task).where(col(Task.id).in_(ready_ids)))).all()
        }
    ready = [task_view(rows[task_id]) for task_id in ready_ids if task_id in rows]
    return {"tasks": ready}


# -- writes --------------------------------------------------------------------------------


async def _check_input(
    db: AsyncSession, project_id: int, data: TaskInput, ctx: ServiceContext
) -> tuple[str, str | None, int, list[str], list[str], str | None]:
    title = checks.text(
        data.title, "title", max_chars=MAX_TITLE_CHARS, required=True, single_line=True
    )
    assert title is not None
    description = checks.text(data.description, "description", max_chars=MAX_DESCRIPTION_CHARS)
    priority = PRIORITY_DEFAULT if data.priority is None else data.priority
    if not PRIORITY_MIN <= priority <= PRIORITY_MAX:
        raise InvalidInput("priority", f"must be {PRIORITY_MIN}-{PRIORITY_MAX} (0 = most urgent)")
    paths = scope.patterns(data.paths, ctx.settings, "paths")
    deps = list(dict.fromkeys(data.depends_on or []))
    if len(deps) > MAX_DEPENDENCIES:
        raise InvalidInput("depends_on", f"at most {MAX_DEPENDENCIES} dependencies")
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
        creator = await acting_session(tx.session, project, token) if token else None
        title, description, priority, paths, deps, parent = await _check_input(
            tx.session, project.id, data, ctx
        )
        now = utcnow()
        task = Task(
            id=checks.new_id("task"),
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
        tx.session.add(task)
        view = task_view(task)
        await tx.emit("task.created", {"task": view, **_actor(creator)})
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
        session = await acting_session(tx.session, project, token)
        task = await _task(tx.session, project.id, task_id)
        took_over: dict[str, Any] | None = None
        if task.status == "in_progress":
            holder = await _claimer(tx.session, task)
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
            raise Conflict(
                f"task {task.id} is {task.status}; only a pending task can be claimed",
                task_id=task.id,
                status=task.status,
            )
        else:
            blocked_by = await blockers(tx.session, project.id, task)
            if blocked_by["dependencies"] or blocked_by["checkpoints"]:
                raise Conflict(
                    f"task {task.id} is not ready: it waits on "
                    + ", ".join(blocked_by["dependencies"] + blocked_by["checkpoints"]),
                    task_id=task.id,
                    blocked_by=blocked_by,
                )
        current = await _active_task_of(tx.session, session.id)
        if current is not None and current.id != task.id:
            raise Conflict(
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
        tx.session.add(task)
        view = task_view(task)
        await tx.emit("task.claimed", {"task": view, **_actor(session), "took_over": took_over})
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
    checks.one_of(status, "status", STATUSES)
    note = checks.text(note, "note", max_chars=MAX_NOTE_CHARS)
    assert project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await acting_session(tx.session, project, token) if token else None
        task = await _task(tx.session, project.id, task_id)
        allowed = TRANSITIONS[task.status]
        # A move the task's current status does not allow is a 409: the request is well
        # formed, the task's state refuses it (and says which moves it allows).
        if status == "in_progress" and task.status == "pending":
            raise Conflict(
                "status: a task enters in_progress by POST /api/v1/tasks/{id}/claim",
                field="status",
                current=task.status,
                allowed=list(allowed),
            )
        if status not in allowed:
            raise Conflict(
                f"status: cannot go from {task.status} to {status}; allowed: "
                + (", ".join(allowed) or "none (final)"),
                field="status",
                current=task.status,
                allowed=list(allowed),
            )
        holder = await _claimer(tx.session, task)
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
        tx.session.add(task)
        note_row = None
        if note:
            note_row = TaskNote(
                task_id=task.id,
                author=session.agent_name if session else "api",
                kind="agent",
                body=note,
                created_at=now,
            )
            tx.session.add(note_row)
            await tx.session.flush()
        view = task_view(task)
        await tx.emit(
            "task.status",
            {
                "task": view,
                "from": previous,
                "to": status,
                **_actor(session),
                "note": note_view(note_row) if note_row else None,
            },
        )
    return view


async def add_note(
    ctx: ServiceContext, project: Project, task_id: str, body: str | None, token: str | None
) -> dict[str, Any]:
    """Append a note (author: the caller's agent, or "api" without a session token)."""
    text = checks.text(body, "body", max_chars=MAX_NOTE_CHARS, required=True)
    assert text is not None and project.id is not None
    async with ctx.project_tx(project.id) as tx:
        session = await acting_session(tx.session, project, token) if token else None
        task = await _task(tx.session, project.id, task_id)
        note = TaskNote(
            task_id=task.id,
            author=session.agent_name if session else "api",
            kind="agent",
            body=text,
            created_at=utcnow(),
        )
        tx.session.add(note)
        await tx.session.flush()
        view = note_view(note)
        await tx.emit("task.note", {"task_id": task.id, "note": view, **_actor(session)})
    return view


# -- when a session ends -------------------------------------------------------------------


async def release_session_tasks(tx: ProjectTx, session: AgentSession, reason: str) -> None:
    """Session-end hook. Timed out: its task keeps the claim, marked ``stale_since`` with a
    system note (``task.stale``). Checked out or superseded: the claim is released and the
    task goes back to pending (``task.released``)."""
    stmt = select(Task).where(Task.claimed_session_id == session.id, Task.status == "in_progress")
    now = utcnow()
    for task in (await tx.session.exec(stmt)).all():
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
            tx.session.add(task)
            tx.session.add(note)
            await tx.session.flush()
            await tx.emit(
                "task.stale",
                {"task": task_view(task), **_actor(session), "note": note_view(note)},
            )
        else:
            task.status = "pending"
            task.claimed_session_id = None
            task.claimed_agent_name = None
            task.claimed_at = None
            task.updated_at = now
            tx.session.add(task)
            await tx.emit(
                "task.released", {"task": task_view(task), **_actor(session), "reason": reason}
            )
