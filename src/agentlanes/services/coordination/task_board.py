"""Every task with where it stands and, for a pending task that is not ready, why not.

The same rules as the ready list (``readiness.ready_tasks``), spelled out per task: the
dependencies not yet done, the gates not yet passed, and the live agents whose claims (their
declared files, or the paths of the task they work on) overlap the task's paths for certain.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from sqlmodel import col, select

from agentlanes.clock import utcnow
from agentlanes.domain.conflicts import ConflictDetector, SearchTooLong, work_clock
from agentlanes.services.context import ServiceContext
from agentlanes.services.coordination.readiness import claims_detector, gates_by_task
from agentlanes.services.coordination.task_views import task_view
from agentlanes.settings import LIMITS
from agentlanes.store import queries
from agentlanes.store.coordination import Checkpoint, Task
from agentlanes.store.models import Project

OPEN = ("pending", "in_progress", "blocked")
RECENT_FINISHED = 30
CLAIMS_SHOWN = 5


def _certain(f: Any) -> bool:
    return bool(getattr(f, "certain", True))


async def task_board(ctx: ServiceContext, project: Project) -> dict[str, Any]:
    """Open tasks (oldest first, at most 500) and the last finished ones, each with a
    ``state`` (ready, waiting, claimed, stale, blocked, done, cancelled) and, when
    waiting, ``waiting_on``."""
    assert project.id is not None
    async with ctx.db.read() as db:
        open_rows = (
            await db.exec(
                select(Task)
                .where(Task.project_id == project.id, col(Task.status).in_(OPEN))
                .order_by(col(Task.priority), col(Task.created_at), col(Task.id))
                .limit(LIMITS.task_board_open)
            )
        ).all()
        finished = (
            await db.exec(
                select(Task)
                .where(Task.project_id == project.id, col(Task.status).in_(("done", "cancelled")))
                .order_by(col(Task.updated_at).desc(), col(Task.id))
                .limit(RECENT_FINISHED)
            )
        ).all()
        dep_ids = sorted({d for t in open_rows for d in t.depends_on or []})
        deps = {
            t.id: t for t in (await db.exec(select(Task).where(col(Task.id).in_(dep_ids)))).all()
        }
        checkpoints = (
            await db.exec(select(Checkpoint).where(Checkpoint.project_id == project.id))
        ).all()
        live = await queries.live_sessions(db, project.id, utcnow())
    gates = gates_by_task(checkpoints)
    task_paths: dict[str, list[str]] = {}
    for t in open_rows:
        if t.status == "in_progress" and t.claimed_session_id:
            task_paths.setdefault(t.claimed_session_id, []).extend(t.paths or [])
    budget = ctx.settings.conflict_search_seconds

    def board() -> list[dict[str, Any]]:
        # The deadline counts this worker thread's own work (domain.conflicts.work_clock).
        deadline = work_clock() + budget
        # In a worker thread: deciding long paths against many live patterns can take
        # seconds, and nobody else waits for it; past the deadline, the claims of the
        # tasks left are reported undecided.
        detector = claims_detector(live, task_paths)
        tasks: list[dict[str, Any]] = []
        for t in open_rows:
            view = task_view(t)
            if t.status == "in_progress":
                view["state"] = "stale" if t.stale_since else "claimed"
            elif t.status == "blocked":
                view["state"] = "blocked"
            else:
                waiting = _waiting_on(t, deps, gates.get(t.id, []), detector, deadline)
                view["state"] = "waiting" if waiting else "ready"
                if waiting:
                    view["waiting_on"] = waiting
            tasks.append(view)
        return tasks

    tasks = await anyio.to_thread.run_sync(board)
    for t in finished:
        tasks.append({**task_view(t), "state": t.status})
    return {"tasks": tasks}


def _waiting_on(
    t: Task,
    deps: dict[str, Task],
    gates: list[Checkpoint],
    detector: ConflictDetector,
    deadline: float | None = None,
) -> dict[str, Any] | None:
    dependencies = [
        {
            "task_id": d,
            "title": deps[d].title if d in deps else None,
            "status": deps[d].status if d in deps else "missing",
        }
        for d in t.depends_on or []
        if d not in deps or deps[d].status != "done"
    ]
    checkpoints = [
        {"checkpoint_id": cp.id, "name": cp.name, "status": cp.status}
        for cp in gates
        if cp.status != "passed"
    ]
    claimed: list[dict[str, Any]] = []
    undecided = False
    found: list[Any] = []
    if t.paths and not t.claimed_session_id:
        try:
            found = detector.find(patterns=list(t.paths), deadline=deadline, max_files=10)
        except SearchTooLong:
            undecided = True
        for c in found:
            certain = [f for f in c.overlapping_files if _certain(f)]
            if certain:
                f = certain[0]
                claimed.append(
                    {
                        "session_id": c.session_id,
                        "agent_name": c.agent_name,
                        "path": f.pattern,
                        "their_pattern": f.their_pattern,
                        "example": f.example,
                    }
                )
    reasons: dict[str, Any] = {}
    if dependencies:
        reasons["dependencies"] = dependencies
    if checkpoints:
        reasons["checkpoints"] = checkpoints
    if claimed:
        reasons["claimed_paths"] = claimed[:CLAIMS_SHOWN]
        reasons["claimed_paths_total"] = len(claimed)
    if undecided:
        # Its paths could not be decided against the live claims in time: not ready.
        reasons["claimed_paths_undecided"] = True
    if t.claimed_session_id:
        reasons["claimed_by"] = t.claimed_agent_name
    return reasons or None
