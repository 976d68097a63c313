"""When a task is ready: its dependencies done, its gates passed, nobody claiming it, and
no live session claiming its paths for certain (that session's declared files, or the
paths of the task it works on). The ready list is these rules over every pending task;
``task_board`` spells them out per task."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import anyio.to_thread
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from agentlanes.clock import utcnow
from agentlanes.domain.conflicts import ConflictDetector, Scope, SearchTooLong, work_clock
from agentlanes.services import validation
from agentlanes.services.context import ServiceContext
from agentlanes.services.coordination.task_views import task_view
from agentlanes.services.session_auth import active_session
from agentlanes.services.sessions import live_sessions
from agentlanes.store.coordination import Checkpoint, Task
from agentlanes.store.models import Project


async def task_statuses(db: AsyncSession, ids: Sequence[str]) -> dict[str, str]:
    """Each of these task ids -> its status (ids of no task are left out)."""
    if not ids:
        return {}
    stmt = select(Task.id, Task.status).where(col(Task.id).in_(list(ids)))
    return dict((await db.exec(stmt)).all())


def gates_by_task(checkpoints: Iterable[Checkpoint]) -> dict[str, list[Checkpoint]]:
    """Each gated task id -> the checkpoints over it."""
    gates: dict[str, list[Checkpoint]] = {}
    for cp in checkpoints:
        for task_id in cp.task_ids or []:
            gates.setdefault(task_id, []).append(cp)
    return gates


async def project_gates(db: AsyncSession, project_id: int) -> dict[str, list[Checkpoint]]:
    stmt = select(Checkpoint).where(Checkpoint.project_id == project_id)
    return gates_by_task((await db.exec(stmt)).all())


class Claimant(Protocol):
    """What the detector reads of a live session: its row or the projection's view of it."""

    @property
    def id(self) -> str: ...

    @property
    def agent_name(self) -> str: ...

    @property
    def declared_files(self) -> list[str]: ...


def claims_detector(live: Iterable[Claimant], task_paths: dict[str, list[str]]) -> ConflictDetector:
    """A detector over what each live session claims: its declared files and the paths of
    the task it works on (``task_paths``: session id -> paths)."""
    detector = ConflictDetector()
    for s in live:
        patterns = tuple(dict.fromkeys([*(s.declared_files or []), *task_paths.get(s.id, [])]))
        detector.add(Scope(s.id, s.agent_name, None, patterns))
    return detector


async def blockers(db: AsyncSession, project_id: int, task: Task) -> dict[str, list[str]]:
    """What keeps a task from being ready: unfinished dependencies, unpassed gates."""
    deps = list(task.depends_on or [])
    statuses = await task_statuses(db, deps)
    gates = (await project_gates(db, project_id)).get(task.id, [])
    return {
        "dependencies": [d for d in deps if statuses.get(d) != "done"],
        "checkpoints": [cp.id for cp in gates if cp.status != "passed"],
    }


def _ready(
    live: Iterable[Claimant],
    task_paths: dict[str, list[str]],
    pending: Iterable[Any],
    statuses: dict[str, str],
    gates: dict[str, list[Checkpoint]],
    own_id: str | None,
    limit: int,
    deadline: float,
) -> list[str]:
    """The ready tasks' ids, decided in a worker thread (long paths against many live
    patterns can take seconds: never on the event loop). Past ``deadline`` the tasks
    not yet decided are left out, as a task that may be claimed is (SPEC "One agent
    cannot hurt another": no request takes more than 2 s)."""
    detector = claims_detector(live, task_paths)
    ready_ids: list[str] = []
    for task_id, depends_on, paths, claimed in pending:
        if claimed is not None:
            continue
        if any(statuses.get(d) != "done" for d in depends_on or []):
            continue
        if any(cp.status != "passed" for cp in gates.get(task_id, [])):
            continue
        try:
            found = (
                detector.find(
                    patterns=paths, exclude_session_id=own_id, deadline=deadline, max_files=1
                )
                if paths
                else []
            )
        except SearchTooLong:
            break
        if any(c.certain for c in found):  # certain overlaps only (SPEC)
            continue
        ready_ids.append(task_id)
        if len(ready_ids) >= limit:
            break
    return ready_ids


async def ready_tasks(
    ctx: ServiceContext, project: Project, *, token: str | None = None, limit: int | None = None
) -> dict[str, Any]:
    """Pending tasks that are ready (see the module), most urgent first, then oldest. With a
    token, the caller's own session's claims do not count against a task."""
    limit, _ = validation.check_page(limit, 0)
    assert project.id is not None
    now = utcnow()
    async with ctx.db.read() as db:
        own_id = (await active_session(db, project, token, within_ttl=True)).id if token else None
        # Only the columns the decision needs: loading whole rows of every pending task
        # was most of the cost; full rows are read for the ready ones alone.
        stmt = (
            select(Task.id, Task.depends_on, Task.paths, Task.claimed_session_id)
            .where(Task.project_id == project.id, Task.status == "pending")
            .order_by(col(Task.priority), col(Task.created_at), col(Task.id))
        )
        pending = (await db.exec(stmt)).all()
        dep_ids = {d for row in pending for d in row[1] or []}
        statuses = await task_statuses(db, sorted(dep_ids))
        gates = await project_gates(db, project.id)
        # The live projection (services/projection.py), not a read of every session.
        _, live = await live_sessions(ctx, project.id, now)
        working = (
            await db.exec(
                select(Task.claimed_session_id, Task.paths).where(
                    Task.project_id == project.id,
                    Task.status == "in_progress",
                    col(Task.claimed_session_id).is_not(None),
                )
            )
        ).all()
        task_paths: dict[str, list[str]] = {}
        for session_id, paths in working:
            task_paths.setdefault(session_id or "", []).extend(paths or [])
        budget = ctx.settings.conflict_search_seconds
        # The deadline counts the worker thread's own work (domain.conflicts.work_clock).
        ready_ids = await anyio.to_thread.run_sync(
            lambda: _ready(
                live, task_paths, pending, statuses, gates, own_id, limit, work_clock() + budget
            )
        )
        rows = {
            t.id: t for t in (await db.exec(select(Task).where(col(Task.id).in_(ready_ids)))).all()
        }
    return {"tasks": [task_view(rows[task_id]) for task_id in ready_ids if task_id in rows]}
