"""Projects: creation (admin API and CLI) and resolving an API key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from secrets import token_hex
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from agentlanes import secrets
from agentlanes.clock import utcnow
from agentlanes.errors import Conflict, InvalidInput, Unauthorized
from agentlanes.services.context import ServiceContext
from agentlanes.services.views import project_view
from agentlanes.store import queries
from agentlanes.store.models import Project

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
MODES = ("warn", "block")


@dataclass(frozen=True)
class ProjectInput:
    name: str
    slug: str | None = None
    conflict_mode: str | None = None
    heartbeat_interval_seconds: int | None = None
    heartbeat_ttl_seconds: int | None = None
    agent_config_keys: list[str] | None = None


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")[:64].rstrip("-")
    # A name with nothing to make a slug of (all punctuation, or not Latin) still gets one.
    return slug or f"project-{token_hex(3)}"


async def create_project(ctx: ServiceContext, data: ProjectInput) -> dict[str, Any]:
    """Create a project; the API key is in the answer and nowhere else, ever."""
    name = data.name.strip()
    if not name or len(name) > 200:
        raise InvalidInput("name", "must be 1-200 characters")
    slug = data.slug if data.slug is not None else slugify(name)
    if not SLUG_RE.fullmatch(slug):
        raise InvalidInput("slug", "must be 1-64 characters of a-z 0-9 - (starting with a-z 0-9)")
    mode = data.conflict_mode or ctx.settings.conflict_mode
    if mode not in MODES:
        raise InvalidInput("conflict_mode", "must be warn or block")
    interval = data.heartbeat_interval_seconds
    if interval is None:
        interval = ctx.settings.heartbeat_interval_seconds
    ttl = data.heartbeat_ttl_seconds
    if ttl is None:
        ttl = ctx.settings.heartbeat_ttl_seconds
    if not 1 <= interval <= 86_400:
        raise InvalidInput("heartbeat_interval_seconds", "must be 1-86400")
    if not 1 <= ttl <= 86_400 * 7:
        raise InvalidInput("heartbeat_ttl_seconds", "must be 1-604800")
    if ttl < interval:
        raise InvalidInput("heartbeat_ttl_seconds", "must be at least heartbeat_interval_seconds")
    keys = data.agent_config_keys or []
    for key in keys:
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", key):
            raise InvalidInput("agent_config_keys", f"bad key {key!r}: 1-64 of A-Z a-z 0-9 _ . -")

    api_key = secrets.new_api_key()
    project = Project(
        slug=slug,
        name=name,
        api_key_hash=secrets.hash_secret(api_key),
        conflict_mode=mode,
        heartbeat_interval_seconds=interval,
        heartbeat_ttl_seconds=ttl,
        agent_config_keys=sorted(set(keys)),
        created_at=utcnow(),
    )
    try:
        async with ctx.db.write() as db:
            exists = (await db.exec(select(Project.id).where(Project.slug == slug))).first()
            if exists is not None:
                raise Conflict(f"a project with slug {slug!r} exists", field="slug")
            db.add(project)
    except IntegrityError:
        raise Conflict(f"a project with slug {slug!r} exists", field="slug") from None
    return {**project_view(project), "api_key": api_key}


async def list_projects(ctx: ServiceContext) -> list[dict[str, Any]]:
    async with ctx.db.read() as db:
        rows = (await db.exec(select(Project).order_by(col(Project.id)))).all()
    return [project_view(p) for p in rows]


async def project_for_key(ctx: ServiceContext, api_key: str | None) -> Project:
    """The project an API key opens; 401 for a missing or unknown key.

    Projects never change after creation, so a found one is remembered (by key hash, for
    a short while) and every request does not pay a database round trip to authenticate."""
    if not api_key:
        raise Unauthorized("missing X-API-Key header")
    key_hash = secrets.hash_secret(api_key)
    project = ctx.known_projects.get(key_hash)
    if project is None:
        async with ctx.db.read() as db:
            project = await queries.project_by_key_hash(db, key_hash)
        if project is not None:
            ctx.known_projects.put(key_hash, project)
    if project is None or not secrets.same_secret(api_key, project.api_key_hash):
        raise Unauthorized("unknown API key")
    return project
