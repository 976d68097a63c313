"""Projects: create, list, show, update, rotate or revoke the key, delete; and resolving
an API key to its project.

Changes to a project are events on its own log (``project.updated``, ``project.key_rotated``,
``project.key_revoked``), so dashboards and agents follow them live.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from secrets import token_hex
from typing import Any

from sqlalchemy import delete, or_
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from agentlanes import tokens
from agentlanes.clock import iso, utcnow
from agentlanes.errors import InvalidInput, NotFound, StateConflict, Unauthorized
from agentlanes.services import project_watch
from agentlanes.services.context import ServiceContext
from agentlanes.services.project_cache import RecentProjects
from agentlanes.services.project_tx import ProjectTx
from agentlanes.services.views import project_view
from agentlanes.settings import LIMITS
from agentlanes.store.coordination import (
    Checkpoint,
    ConsensusRequest,
    ConsensusVote,
    Lease,
    LeaseCounter,
    Message,
    MessageReceipt,
    RegisteredAgent,
    Task,
    TaskNote,
)
from agentlanes.store.models import AgentSession, Event, Project, RealtimeToken

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")
CONFIG_KEY_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")
MODES = ("warn", "block")
BLOCK_ON = ("claims", "lines")


@dataclass(frozen=True)
class ProjectInput:
    name: str
    slug: str | None = None
    conflict_mode: str | None = None
    heartbeat_interval_seconds: int | None = None
    heartbeat_ttl_seconds: int | None = None
    agent_config_keys: list[str] | None = None
    block_on: str | None = None
    line_margin: int | None = None
    auto_queue: bool | None = None


@dataclass(frozen=True)
class ProjectChanges:
    """A PATCH: the fields given; None means "leave as it is"."""

    name: str | None = None
    conflict_mode: str | None = None
    heartbeat_interval_seconds: int | None = None
    heartbeat_ttl_seconds: int | None = None
    agent_config_keys: list[str] | None = None
    block_on: str | None = None
    line_margin: int | None = None
    auto_queue: bool | None = None


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")[:64].rstrip("-")
    # A name with nothing to make a slug of (all punctuation, or not Latin) still gets one.
    return slug or f"project-{token_hex(3)}"


def _check_name(name: str) -> str:
    # The limit counts what is sent (as the schema's maxLength does); the name is kept trimmed.
    trimmed = name.strip()
    if len(name) > LIMITS.project_name_chars or not trimmed:
        raise InvalidInput("name", f"must be 1-{LIMITS.project_name_chars} characters")
    return trimmed


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise InvalidInput("conflict_mode", "must be warn or block")
    return mode


def _check_block_on(value: str) -> str:
    if value not in BLOCK_ON:
        raise InvalidInput("block_on", "must be claims or lines")
    return value


def _check_margin(value: int) -> int:
    if not 0 <= value <= LIMITS.line_margin_max:
        raise InvalidInput("line_margin", f"must be 0-{LIMITS.line_margin_max}")
    return value


def _check_heartbeat(interval: int, ttl: int) -> None:
    if not 1 <= interval <= LIMITS.heartbeat_interval_max_seconds:
        raise InvalidInput(
            "heartbeat_interval_seconds", f"must be 1-{LIMITS.heartbeat_interval_max_seconds}"
        )
    if not 1 <= ttl <= LIMITS.heartbeat_ttl_max_seconds:
        raise InvalidInput("heartbeat_ttl_seconds", f"must be 1-{LIMITS.heartbeat_ttl_max_seconds}")
    if ttl < interval:
        raise InvalidInput("heartbeat_ttl_seconds", "must be at least heartbeat_interval_seconds")


def _check_config_keys(keys: list[str]) -> list[str]:
    if len(keys) > LIMITS.agent_config_keys:  # counted before they are read
        raise InvalidInput("agent_config_keys", f"at most {LIMITS.agent_config_keys} keys")
    for key in keys:
        if not CONFIG_KEY_RE.fullmatch(key):
            raise InvalidInput("agent_config_keys", f"bad key {key!r}: 1-64 of A-Z a-z 0-9 _ . -")
    return sorted(set(keys))


def admin_view(p: Project) -> dict[str, Any]:
    """What the admin API shows of a project: its settings and the state of its keys."""
    return {
        **project_view(p),
        "key": {
            "revoked_at": iso(p.key_revoked_at),
            # The key replaced by the last rotation works until then (null: none does).
            "previous_valid_until": iso(p.previous_key_expires_at)
            if p.previous_key_expires_at and p.previous_key_expires_at > utcnow()
            else None,
        },
    }


def forget_cached_keys(ctx: ServiceContext) -> None:
    """Drop this process's key → project cache, so a change is seen by the next request.

    Other processes see the change within ``project_watch_seconds``
    (services/project_watch.py)."""
    old = ctx.known_projects
    ctx.known_projects = RecentProjects(ttl=old.ttl, size=old.size)


async def create_project(ctx: ServiceContext, data: ProjectInput) -> dict[str, Any]:
    """Create a project; the API key is in the answer and nowhere else, ever."""
    name = _check_name(data.name)
    slug = data.slug if data.slug is not None else slugify(name)
    if not SLUG_RE.fullmatch(slug):
        raise InvalidInput("slug", "must be 1-64 characters of a-z 0-9 - (starting with a-z 0-9)")
    mode = _check_mode(data.conflict_mode or ctx.settings.conflict_mode)
    interval = data.heartbeat_interval_seconds
    if interval is None:
        interval = ctx.settings.heartbeat_interval_seconds
    ttl = data.heartbeat_ttl_seconds
    if ttl is None:
        ttl = ctx.settings.heartbeat_ttl_seconds
    _check_heartbeat(interval, ttl)
    keys = _check_config_keys(data.agent_config_keys or [])
    block_on = _check_block_on(data.block_on or "claims")
    margin = _check_margin(data.line_margin or 0)

    api_key = tokens.new_api_key()
    project = Project(
        slug=slug,
        name=name,
        api_key_hash=tokens.hash_secret(api_key),
        conflict_mode=mode,
        heartbeat_interval_seconds=interval,
        heartbeat_ttl_seconds=ttl,
        agent_config_keys=keys,
        block_on=block_on,
        line_margin=margin,
        auto_queue=bool(data.auto_queue),
        created_at=utcnow(),
    )
    try:
        async with ctx.db.write() as db:
            exists = (await db.exec(select(Project.id).where(Project.slug == slug))).first()
            if exists is not None:
                raise StateConflict(f"a project with slug {slug!r} exists", field="slug")
            db.add(project)
    except IntegrityError:
        raise StateConflict(f"a project with slug {slug!r} exists", field="slug") from None
    return {**admin_view(project), "api_key": api_key}


async def list_projects(ctx: ServiceContext) -> list[dict[str, Any]]:
    async with ctx.db.read() as db:
        rows = (await db.exec(select(Project).order_by(col(Project.id)))).all()
    return [admin_view(p) for p in rows]


async def _by_slug(ctx: ServiceContext, slug: str) -> Project:
    async with ctx.db.read() as db:
        project = (await db.exec(select(Project).where(Project.slug == slug))).first()
    if project is None:
        raise NotFound(f"no project with slug {slug!r}")
    return project


async def _reread(tx: ProjectTx, current: Project) -> Project:
    """The project's row again, under its lock (it may have changed, or gone, meanwhile)."""
    project = await tx.db.get(Project, current.id, populate_existing=True)
    if project is None:
        raise NotFound(f"no project with slug {current.slug!r}")
    return project


async def show_project(ctx: ServiceContext, slug: str) -> dict[str, Any]:
    project = await _by_slug(ctx, slug)
    async with ctx.db.read() as db:
        active = (
            await db.exec(
                select(AgentSession).where(
                    AgentSession.project_id == project.id, AgentSession.status == "active"
                )
            )
        ).all()
    # Heartbeats reach the database in batches: count the ones this process knows too.
    live = await ctx.liveness.overlay(list(active), utcnow())
    return {**admin_view(project), "live_sessions": len(live), "last_offset": project.last_offset}


async def update_project(ctx: ServiceContext, slug: str, changes: ProjectChanges) -> dict[str, Any]:
    """Change settings; the ``project.updated`` event lists what changed, from and to.
    Nothing to change (no field given, or the same values) is no event and no error."""
    current = await _by_slug(ctx, slug)
    assert current.id is not None
    async with ctx.project_tx(current.id) as tx:
        project = await _reread(tx, current)
        wanted: dict[str, Any] = {}
        if changes.name is not None:
            wanted["name"] = _check_name(changes.name)
        if changes.conflict_mode is not None:
            wanted["conflict_mode"] = _check_mode(changes.conflict_mode)
        interval = changes.heartbeat_interval_seconds
        ttl = changes.heartbeat_ttl_seconds
        if interval is not None or ttl is not None:
            interval = project.heartbeat_interval_seconds if interval is None else interval
            ttl = project.heartbeat_ttl_seconds if ttl is None else ttl
            _check_heartbeat(interval, ttl)
            wanted["heartbeat_interval_seconds"] = interval
            wanted["heartbeat_ttl_seconds"] = ttl
        if changes.agent_config_keys is not None:
            wanted["agent_config_keys"] = _check_config_keys(changes.agent_config_keys)
        if changes.block_on is not None:
            wanted["block_on"] = _check_block_on(changes.block_on)
        if changes.line_margin is not None:
            wanted["line_margin"] = _check_margin(changes.line_margin)
        if changes.auto_queue is not None:
            wanted["auto_queue"] = bool(changes.auto_queue)
        changed = {
            k: {"from": getattr(project, k), "to": v}
            for k, v in wanted.items()
            if getattr(project, k) != v
        }
        for key, change in changed.items():
            setattr(project, key, change["to"])
        if changed:
            tx.db.add(project)
            await tx.emit("project.updated", {"project": project_view(project), "changes": changed})
    forget_cached_keys(ctx)
    await project_watch.project_changed(ctx, project)
    return {**admin_view(project), "changes": changed}


async def rotate_key(ctx: ServiceContext, slug: str, grace_seconds: int | None) -> dict[str, Any]:
    """A new key; the current one keeps working for ``grace_seconds``, then gets 401.

    A key that was itself in its grace period stops at once (one previous key at most).
    After a revocation there is no current key to keep: the grace does not apply."""
    grace = ctx.settings.key_rotation_grace_seconds if grace_seconds is None else grace_seconds
    if not 0 <= grace <= LIMITS.key_rotation_grace_max_seconds:
        raise InvalidInput("grace_seconds", f"must be 0-{LIMITS.key_rotation_grace_max_seconds}")
    current = await _by_slug(ctx, slug)
    assert current.id is not None
    api_key = tokens.new_api_key()
    now = utcnow()
    async with ctx.project_tx(current.id) as tx:
        project = await _reread(tx, current)
        keep_old = grace > 0 and project.key_revoked_at is None
        project.previous_api_key_hash = project.api_key_hash if keep_old else None
        project.previous_key_expires_at = now + timedelta(seconds=grace) if keep_old else None
        project.api_key_hash = tokens.hash_secret(api_key)
        project.key_revoked_at = None
        tx.db.add(project)
        await tx.emit(
            "project.key_rotated",
            {"slug": project.slug, "previous_valid_until": iso(project.previous_key_expires_at)},
        )
    forget_cached_keys(ctx)
    await project_watch.project_changed(ctx, project)
    return {**admin_view(project), "api_key": api_key}


async def revoke_key(ctx: ServiceContext, slug: str) -> dict[str, Any]:
    """Shut every key out at once (current and previous); the data stays. ``rotate-key``
    issues a new key afterwards."""
    current = await _by_slug(ctx, slug)
    assert current.id is not None
    async with ctx.project_tx(current.id) as tx:
        project = await _reread(tx, current)
        # The column is unique and required: store the hash of a secret nobody holds.
        project.api_key_hash = tokens.hash_secret(tokens.new_api_key())
        project.previous_api_key_hash = None
        project.previous_key_expires_at = None
        project.key_revoked_at = utcnow()
        tx.db.add(project)
        await tx.emit("project.key_revoked", {"slug": project.slug})
    forget_cached_keys(ctx)
    await project_watch.project_changed(ctx, project)
    return admin_view(project)


async def delete_project(ctx: ServiceContext, slug: str) -> dict[str, Any]:
    """Delete the project and every row that belongs to it, in one transaction."""
    current = await _by_slug(ctx, slug)
    pid = current.id
    assert pid is not None
    counts: dict[str, int] = {}
    async with ctx.project_tx(pid) as tx:
        db = tx.db
        session_ids = list(
            (await db.exec(select(AgentSession.id).where(AgentSession.project_id == pid))).all()
        )
        task_ids = select(Task.id).where(Task.project_id == pid)
        message_ids = select(Message.id).where(Message.project_id == pid)
        request_ids = select(ConsensusRequest.id).where(ConsensusRequest.project_id == pid)
        # Children before parents (foreign keys are enforced on both backends).
        steps: list[tuple[str, Any]] = [
            (
                "consensus_votes",
                delete(ConsensusVote).where(col(ConsensusVote.request_id).in_(request_ids)),
            ),
            (
                "consensus_requests",
                delete(ConsensusRequest).where(col(ConsensusRequest.project_id) == pid),
            ),
            (
                "message_receipts",
                delete(MessageReceipt).where(col(MessageReceipt.message_id).in_(message_ids)),
            ),
            ("messages", delete(Message).where(col(Message.project_id) == pid)),
            ("task_notes", delete(TaskNote).where(col(TaskNote.task_id).in_(task_ids))),
            ("tasks", delete(Task).where(col(Task.project_id) == pid)),
            ("checkpoints", delete(Checkpoint).where(col(Checkpoint.project_id) == pid)),
            ("leases", delete(Lease).where(col(Lease.project_id) == pid)),
            ("lease_counters", delete(LeaseCounter).where(col(LeaseCounter.project_id) == pid)),
            ("agents", delete(RegisteredAgent).where(col(RegisteredAgent.project_id) == pid)),
            ("realtime_tokens", delete(RealtimeToken).where(col(RealtimeToken.project_id) == pid)),
            ("events", delete(Event).where(col(Event.project_id) == pid)),
            ("sessions", delete(AgentSession).where(col(AgentSession.project_id) == pid)),
            ("projects", delete(Project).where(col(Project.id) == pid)),
        ]
        for table, stmt in steps:
            result = await db.exec(stmt)
            counts[table] = int(result.rowcount or 0)
    # Beats still held for its sessions would only be written to rows that are gone.
    await ctx.liveness.forget(session_ids)
    forget_cached_keys(ctx)
    # Its sockets close (4401) and nothing kept for it stays; other processes do the
    # same within project_watch_seconds.
    await project_watch.project_deleted(ctx, pid)
    return {"slug": slug, "deleted": True, "rows_deleted": counts}


async def project_for_key(ctx: ServiceContext, api_key: str | None) -> Project:
    """The project an API key opens; 401 for a missing, unknown, revoked or expired key.

    A found project is remembered by key hash for a short while, so a request does not
    pay a database round trip to authenticate; the grace period of a replaced key is
    checked on every request, cached or not."""
    if not api_key:
        raise Unauthorized("missing X-API-Key header")
    key_hash = tokens.hash_secret(api_key)
    project = ctx.known_projects.get(key_hash)
    if project is None:
        async with ctx.db.read() as db:
            project = (
                await db.exec(
                    select(Project).where(
                        or_(
                            col(Project.api_key_hash) == key_hash,
                            col(Project.previous_api_key_hash) == key_hash,
                        )
                    )
                )
            ).first()
        if project is not None:
            ctx.known_projects.put(key_hash, project)
    if project is None:
        raise Unauthorized("unknown API key")
    if tokens.same_secret(api_key, project.api_key_hash):
        return project
    if (
        project.previous_api_key_hash is not None
        and project.previous_key_expires_at is not None
        and tokens.same_secret(api_key, project.previous_api_key_hash)
    ):
        if project.previous_key_expires_at > utcnow():
            return project
        raise Unauthorized("this API key was replaced and its grace period is over")
    raise Unauthorized("unknown API key")
