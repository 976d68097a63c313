"""What an MCP session over HTTP is to agentlanes, kept where every process can read it.

``/mcp`` runs the SDK without sessions of its own (stateless: any process answers any
request), and gives each client its own ``Mcp-Session-Id`` at ``initialize``. Behind that
id stands one agent: its project and, once it has checked in, its agentlanes session token,
name and heartbeat interval. With ``redis_url`` set that record is in Redis, so a load
balancer may send each request to any process (no stickiness); without Redis the server is
one process and keeps it in memory.

Redis never holds a usable secret: the record's key is a hash of the MCP session id, and
the session token in it is sealed (AES-GCM) with a key derived from that id, which only the
client and the request in flight know. A record lives ``IDLE_SECONDS`` after the session's
last request (the SDK's idle timeout for its own sessions), or until the client's DELETE.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import os
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any

from agentlanes.client.errors import ApiError, ClientError
from agentlanes.mcp import toolsets
from agentlanes.mcp.lanes import Lanes

log = logging.getLogger("agentlanes.mcp")

IDLE_SECONDS = 30 * 60
# The SDK's default for its own sessions, per process (without Redis); past it the
# longest idle session is let go.
MAX_LOCAL_SESSIONS = 10_000


@dataclass
class AgentRecord:
    project_id: int
    token: str | None = None
    agent: str | None = None
    interval: float = 30.0
    news_cursor: str | None = None  # where the `news` tool read up to, on any process
    tools: list[str] | None = None  # the tool groups it sees (None: the default set)


def _lookup(sid: str) -> str:
    return hashlib.sha256(b"agentlanes-mcp-session:" + sid.encode()).hexdigest()


def _seal(sid: str, token: str | None) -> str | None:
    if token is None:
        return None
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = hashlib.sha256(b"agentlanes-mcp-token:" + sid.encode()).digest()
    nonce = os.urandom(12)
    return base64.b64encode(nonce + AESGCM(key).encrypt(nonce, token.encode(), None)).decode()


def _unseal(sid: str, sealed: str | None) -> str | None:
    if not sealed:
        return None
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = hashlib.sha256(b"agentlanes-mcp-token:" + sid.encode()).digest()
    raw = base64.b64decode(sealed)
    return AESGCM(key).decrypt(raw[:12], raw[12:], None).decode()


def _dump(sid: str, record: AgentRecord) -> str:
    data: dict[str, Any] = asdict(record)
    data["token"] = _seal(sid, record.token)
    return json.dumps(data)


def _load(sid: str, text: str | bytes) -> AgentRecord:
    data = json.loads(text)
    data["token"] = _unseal(sid, data.get("token"))
    return AgentRecord(**data)


class SessionStore:
    """In memory: one process (no Redis). ``per_project``: the most open MCP sessions one
    project may hold (``max_mcp_sessions_per_project``), counted first; past
    ``MAX_LOCAL_SESSIONS`` in all, the process lets go of its longest idle session rather
    than refuse a new project (SPEC "One agent cannot hurt another": ten projects' full
    quotas must not lock an eleventh out)."""

    def __init__(self, per_project: int = MAX_LOCAL_SESSIONS) -> None:
        # record key -> (record, idle-out time); the least recently used first.
        self._records: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._projects: dict[str, int] = {}  # record key -> project id
        self._counts: dict[int, int] = {}  # project id -> its open sessions
        self.per_project = per_project
        self.evicted = 0

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        self._records.clear()
        self._projects.clear()
        self._counts.clear()

    def _forget(self, key: str) -> None:
        self._records.pop(key, None)
        project = self._projects.pop(key, None)
        if project is not None:
            left = self._counts.get(project, 0) - 1
            if left > 0:
                self._counts[project] = left
            else:
                self._counts.pop(project, None)

    def _sweep(self) -> None:
        """Forget the sessions idled out (the least recently used come first: the sweep
        stops at the first one still open)."""
        now = time.monotonic()
        while self._records:
            key, (_, until) = next(iter(self._records.items()))
            if until > now:
                break
            self._forget(key)

    async def create(self, sid: str, record: AgentRecord) -> str | None:
        """Keep a new session; else why not: the project holds ``per_project`` already.
        A process holding ``MAX_LOCAL_SESSIONS`` forgets its longest idle one first."""
        self._sweep()
        if self._counts.get(record.project_id, 0) >= self.per_project:
            return "project"
        while len(self._records) >= MAX_LOCAL_SESSIONS:
            self._forget(next(iter(self._records)))
            self.evicted += 1
        await self.save(sid, record)
        return None

    async def save(self, sid: str, record: AgentRecord) -> None:
        key = _lookup(sid)
        if self._projects.get(key) != record.project_id:
            self._forget(key)
            self._projects[key] = record.project_id
            self._counts[record.project_id] = self._counts.get(record.project_id, 0) + 1
        self._records[key] = (_dump(sid, record), time.monotonic() + IDLE_SECONDS)
        self._records.move_to_end(key)

    async def load(self, sid: str, *, touch: bool = True) -> AgentRecord | None:
        key = _lookup(sid)
        found = self._records.get(key)
        if found is None or found[1] <= time.monotonic():
            self._forget(key)
            return None
        if touch:
            self._records[key] = (found[0], time.monotonic() + IDLE_SECONDS)
            self._records.move_to_end(key)
        return _load(sid, found[0])

    async def drop(self, sid: str) -> None:
        self._forget(_lookup(sid))


class RedisSessionStore(SessionStore):
    """In Redis: every process of the service reads the same records."""

    def __init__(self, url: str, prefix: str, per_project: int = MAX_LOCAL_SESSIONS) -> None:
        super().__init__(per_project)
        import redis.asyncio as aioredis

        self.prefix = f"{prefix}:mcp:"
        self.open_prefix = f"{prefix}:mcp-open:"
        self._redis = aioredis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)

    async def stop(self) -> None:
        await self._redis.aclose()

    def _open(self, project_id: int) -> str:
        """The project's open sessions: a sorted set of record keys, scored by when each
        idles out (every process counts the same set)."""
        return f"{self.open_prefix}{project_id}"

    async def create(self, sid: str, record: AgentRecord) -> str | None:
        opened, now = self._open(record.project_id), time.time()
        await self._redis.zremrangebyscore(opened, "-inf", now)
        # Counted, then added: two processes creating at the same instant may pass one
        # over the cap (a bound on memory, not an exact quota).
        if await self._redis.zcard(opened) >= self.per_project:
            return "project"
        await self.save(sid, record)
        return None

    async def save(self, sid: str, record: AgentRecord) -> None:
        key = _lookup(sid)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.set(self.prefix + key, _dump(sid, record), ex=IDLE_SECONDS)
            opened = self._open(record.project_id)
            pipe.zadd(opened, {key: time.time() + IDLE_SECONDS})
            pipe.expire(opened, IDLE_SECONDS)
            await pipe.execute()

    async def load(self, sid: str, *, touch: bool = True) -> AgentRecord | None:
        key = self.prefix + _lookup(sid)
        text = await (self._redis.getex(key, ex=IDLE_SECONDS) if touch else self._redis.get(key))
        if text is None:
            return None
        record = _load(sid, text)
        if touch:
            await self._redis.zadd(
                self._open(record.project_id), {_lookup(sid): time.time() + IDLE_SECONDS}
            )
        return record

    async def drop(self, sid: str) -> None:
        key = self.prefix + _lookup(sid)
        text = await self._redis.get(key)
        await self._redis.delete(key)
        if text is not None:
            project_id = json.loads(text).get("project_id")
            await self._redis.zrem(self._open(project_id), _lookup(sid))


def create_store(redis_url: str, prefix: str, per_project: int) -> SessionStore:
    if redis_url:
        return RedisSessionStore(redis_url, prefix, per_project)
    return SessionStore(per_project)


class SharedLanes(Lanes):
    """One agent of an MCP session over HTTP as this process serves it: its state is the
    session's record, which any process may change."""

    def __init__(self, client: Any, sid: str, store: SessionStore) -> None:
        super().__init__(client)
        self.sid = sid
        self.store = store
        self.saved: tuple[str | None, str | None, float, str | None, list[str]] | None = None

    def _state(self) -> tuple[str | None, str | None, float, str | None, list[str]]:
        return (self.client.session_token, self.agent, self.interval, self.news_cursor,
                list(self.tools))  # fmt: skip

    def adopt(self, record: AgentRecord) -> None:
        self.client.session_token = record.token
        self.agent = record.agent
        self.interval = record.interval
        self.news_cursor = record.news_cursor
        self.tools = tuple(record.tools or toolsets.DEFAULT)
        self.saved = self._state()

    async def persist(self, project_id: int) -> None:
        """Keep what a tool changed (a check-in's token, a check-out) in the record."""
        state = self._state()
        if state != self.saved:
            await self.store.save(self.sid, AgentRecord(project_id, *state))
            self.saved = state

    def beating(self) -> bool:
        return self._beat is not None and not self._beat.done()

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                record = await self.store.load(self.sid, touch=False)
            except Exception:  # the store away for a moment: the TTL leaves room
                log.warning("MCP session store unavailable", exc_info=True)
                continue
            if record is None or record.token is None:
                return  # the MCP session ended (DELETE, idle) or the agent checked out
            if record.token != self.client.session_token:
                self.adopt(record)  # checked in again, through another process
            try:
                await self.client.heartbeat()
            except ApiError as exc:
                # Ended, or the project deleted or its key revoked (401): beating again
                # cannot help, so stop rather than retry for the record's lifetime.
                if exc.code in ("SESSION_ENDED", "SESSION_NOT_FOUND", "UNAUTHORIZED"):
                    return
            except ClientError:
                continue
