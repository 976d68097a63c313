"""Hotspots (SPEC "Waiting for a lane"): the paths most refused and waited for, with the
wait times. What is counted:

* ``refused``: each path a check-in or status change was refused on (the 409 of block
  mode; each conflict's example path, at most REFUSAL_PATHS per refusal);
* ``waited``: each path of a wait for a lane once it ends, with how long it waited and how
  it ended (granted, cancelled, timed_out, ended with its session); the waits still open
  are counted from the live projection (``waiting_now``).

An agent-side refusal (the editor guard, the git hook) reaches the server only when the
agent then waits (``lanes wait``, or auto_queue), so it counts as a wait. Rows older than
``hotspot_days_max`` days are pruned.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlmodel import col

from agentlanes.clock import utcnow
from agentlanes.errors import InvalidInput
from agentlanes.services.context import ServiceContext
from agentlanes.services.current import current_projection
from agentlanes.services.project_tx import ProjectTx
from agentlanes.settings import LIMITS
from agentlanes.store.models import LaneStat, Project, QueueEntry

# Paths counted per refusal, at most; hotspots listed per answer, at most.
REFUSAL_PATHS = 10
LIST_MAX = 100
REFUSED = "refused"
WAITED = "waited"


def note_wait(tx: ProjectTx, row: QueueEntry, waited: float, outcome: str) -> None:
    """A wait ended: each of its paths was waited for ``waited`` seconds."""
    for path in row.paths[:REFUSAL_PATHS]:
        tx.db.add(
            LaneStat(
                project_id=row.project_id,
                path=path,
                kind=WAITED,
                agent_name=row.agent_name,
                at=row.ended_at or utcnow(),
                wait_seconds=waited,
                outcome=outcome,
            )
        )


def refused_paths(conflicts: Iterable[dict[str, Any]]) -> list[str]:
    """The paths a refusal was about: each certain conflict's example paths, in order."""
    out: list[str] = []
    for c in conflicts:
        for f in c.get("overlapping_files") or []:
            if f.get("certain") and f["example"] not in out:
                out.append(f["example"])
    return out[:REFUSAL_PATHS]


def note_refusal(tx: ProjectTx, agent_name: str, paths: list[str], now: datetime) -> None:
    """A refusal on ``paths``, written in ``tx``."""
    for path in paths[:REFUSAL_PATHS]:
        tx.db.add(
            LaneStat(
                project_id=tx.project_id, path=path, kind=REFUSED, agent_name=agent_name, at=now
            )
        )


async def record_refusal(
    ctx: ServiceContext, project_id: int, agent_name: str, paths: list[str]
) -> None:
    """A refusal whose own transaction wrote nothing of it (a refused check-in): its
    paths, in a small write of their own."""
    if not paths:
        return
    async with ctx.db.write() as db:
        for path in paths[:REFUSAL_PATHS]:
            db.add(
                LaneStat(
                    project_id=project_id,
                    path=path,
                    kind=REFUSED,
                    agent_name=agent_name,
                    at=utcnow(),
                )
            )


async def hotspots(
    ctx: ServiceContext, project: Project, *, days: int | None, limit: int | None
) -> dict[str, Any]:
    """The paths most refused and waited for in the last ``days`` days (default 7)."""
    days = 7 if days is None else days
    if not 1 <= days <= LIMITS.hotspot_days_max:
        raise InvalidInput("days", f"must be 1-{LIMITS.hotspot_days_max}")
    limit = 20 if limit is None else limit
    if not 1 <= limit <= LIST_MAX:
        raise InvalidInput("limit", f"must be 1-{LIST_MAX}")
    assert project.id is not None
    since = utcnow() - timedelta(days=days)
    stmt = (
        select(
            col(LaneStat.path),
            col(LaneStat.kind),
            func.count(),
            func.avg(col(LaneStat.wait_seconds)),
            func.max(col(LaneStat.wait_seconds)),
        )
        .where(col(LaneStat.project_id) == project.id, col(LaneStat.at) >= since)
        .group_by(col(LaneStat.path), col(LaneStat.kind))
        .order_by(func.count().desc())
        .limit(10 * LIST_MAX)
    )
    async with ctx.db.read_conn() as conn:
        rows = (await conn.execute(stmt)).all()
    current = await current_projection(ctx, project.id)
    spots: dict[str, dict[str, Any]] = {}

    def spot(path: str) -> dict[str, Any]:
        return spots.setdefault(
            path,
            {
                "path": path,
                "refused": 0,
                "waits": 0,
                "waiting_now": 0,
                "wait_seconds_avg": None,
                "wait_seconds_max": None,
            },
        )

    for path, kind, count, avg, most in rows:
        if kind == REFUSED:
            spot(path)["refused"] = int(count)
        else:
            s = spot(path)
            s["waits"] = int(count)
            s["wait_seconds_avg"] = None if avg is None else round(float(avg), 3)
            s["wait_seconds_max"] = None if most is None else round(float(most), 3)
    for entry in current.waiting.values():
        for path in entry["paths"]:
            spot(path)["waiting_now"] += 1
    ranked = sorted(
        spots.values(),
        key=lambda s: (-(s["refused"] + s["waits"] + s["waiting_now"]), s["path"]),
    )
    return {"days": days, "hotspots": ranked[:limit], "total": len(ranked)}


async def prune(ctx: ServiceContext) -> int:
    """Drop rows older than ``hotspot_days_max`` days (a scheduled job)."""
    cutoff = utcnow() - timedelta(days=LIMITS.hotspot_days_max)
    async with ctx.db.write() as db:
        result = await db.exec(delete(LaneStat).where(col(LaneStat.at) < cutoff))
    return int(result.rowcount or 0)
