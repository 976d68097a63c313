"""Coordination beyond files: tasks, checkpoints, messages, leases, consensus, agents.

Each group hangs off a client (``client.tasks.claim(task_id)``). A group is generic in
what its client's ``run`` gives: ``Tasks[Any]`` on ``Client`` answers at once,
``Tasks[Coroutine[Any, Any, Any]]`` on ``AsyncClient`` answers with a coroutine, so mypy
flags a call left without ``await`` (``unused-coroutine``) or its coroutine used as the
answer. Answers are the server's JSON objects as documented in docs/api.md
§ Coordination (plain dicts: these shapes are young and grow fields).
Errors are ``ApiError`` values with the server's code (``TASK_ALREADY_CLAIMED``,
``LEASE_CONFLICT`` with ``extra["lease_holder"]`` ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from agentlanes.client.calls import API, Call, as_json, drop_unset
from agentlanes.client.models import CheckpointStatus, ConsensusStatus, TaskStatus, Vote

# What running a call gives: the answer (Client) or a coroutine of it (AsyncClient).
R = TypeVar("R")


def _seg(value: str) -> str:
    """One path segment, escaped (ids and agent names come from callers)."""
    return quote(str(value), safe="")


class _Group(Generic[R]):
    def __init__(self, run: Callable[[Call[Any]], R]) -> None:
        self._run = run

    def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        token: str = "optional",
    ) -> R:
        return self._run(
            Call(method, f"{API}{path}", as_json, body, drop_unset(**(params or {})), token)
        )


class Tasks(_Group[R]):
    """A shared work queue: create, list, ready, claim, status, notes."""

    def create(
        self,
        title: str,
        *,
        description: str | None = None,
        priority: int | None = None,
        paths: list[str] | None = None,
        depends_on: list[str] | None = None,
        parent_id: str | None = None,
    ) -> R:
        """Create a task (``created_by`` is the caller's agent when it has a session)."""
        body = drop_unset(
            title=title,
            description=description,
            priority=priority,
            paths=paths,
            depends_on=depends_on,
            parent_id=parent_id,
        )
        return self._call("POST", "/tasks", body)

    def list(
        self,
        status: TaskStatus | None = None,
        *,
        claimed_by: str | None = None,
        parent_id: str | None = None,
        stale: bool | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> R:
        """``{"tasks", "total", "limit", "offset"}``, oldest first."""
        params = dict(
            status=status,
            claimed_by=claimed_by,
            parent_id=parent_id,
            stale=None if stale is None else str(stale).lower(),
            limit=limit,
            offset=offset,
        )
        return self._call("GET", "/tasks", params=params)

    def ready(self, limit: int | None = None) -> R:
        """Tasks an idle agent can take now, most urgent first."""
        return self._call("GET", "/tasks/ready", params={"limit": limit})

    def get(self, task_id: str) -> R:
        """A task with its notes and what blocks it."""
        return self._call("GET", f"/tasks/{_seg(task_id)}")

    def claim(self, task_id: str) -> R:
        """Take a task atomically (409 ``TASK_ALREADY_CLAIMED`` if someone holds it)."""
        return self._call("POST", f"/tasks/{_seg(task_id)}/claim", {}, token="required")

    def set_status(self, task_id: str, status: TaskStatus, *, note: str | None = None) -> R:
        """Move a task (``done``, ``blocked``, ``pending``, ``cancelled``)."""
        body = drop_unset(status=status, note=note)
        return self._call("POST", f"/tasks/{_seg(task_id)}/status", body)

    def add_note(self, task_id: str, body: str) -> R:
        """Add a note to a task's log."""
        return self._call("POST", f"/tasks/{_seg(task_id)}/notes", {"body": body})


class Checkpoints(_Group[R]):
    """Named gates over tasks."""

    def create(self, name: str, task_ids: list[str], *, description: str | None = None) -> R:
        body = drop_unset(name=name, task_ids=task_ids, description=description)
        return self._call("POST", "/checkpoints", body)

    def list(
        self,
        status: CheckpointStatus | None = None,
        *,
        task_id: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> R:
        params = dict(status=status, task_id=task_id, limit=limit, offset=offset)
        return self._call("GET", "/checkpoints", params=params)

    def get(self, checkpoint_id: str) -> R:
        return self._call("GET", f"/checkpoints/{_seg(checkpoint_id)}")

    def resolve(
        self, checkpoint_id: str, status: CheckpointStatus, *, note: str | None = None
    ) -> R:
        """``passed`` unblocks its tasks; ``failed`` keeps them blocked."""
        body = drop_unset(status=status, note=note)
        return self._call("POST", f"/checkpoints/{_seg(checkpoint_id)}/resolve", body)


class Messages(_Group[R]):
    """Messages to an agent or ``broadcast``, with read and acknowledged state."""

    def send(
        self,
        to: str,
        body: str,
        *,
        type: str | None = None,
        thread_id: str | None = None,
        human: str | None = None,
    ) -> R:
        """Send to ``to``: a live agent's name or display name (``claude-1``), a
        registered agent, or ``broadcast`` (else ``ApiError`` 404 ``AGENT_NOT_FOUND``,
        ``extra["live_agents"]``). ``human``: a person speaking under that name with the
        project key alone (no session token is sent); the message is marked human."""
        payload = drop_unset(to=to, body=body, type=type, thread_id=thread_id, human=human)
        return self._call(
            "POST", "/messages", payload, token="none" if human is not None else "required"
        )

    def inbox(
        self,
        *,
        unread: bool | None = None,
        unacked: bool | None = None,
        type: str | None = None,
        thread_id: str | None = None,
        after_id: int | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> R:
        params = dict(
            unread=None if unread is None else str(unread).lower(),
            unacked=None if unacked is None else str(unacked).lower(),
            type=type,
            thread_id=thread_id,
            after_id=after_id,
            limit=limit,
            offset=offset,
        )
        return self._call("GET", "/messages/inbox", params=params, token="required")

    def read(self, message_id: int) -> R:
        return self._call("POST", f"/messages/{_seg(str(message_id))}/read", {}, token="required")

    def ack(self, message_id: int) -> R:
        return self._call("POST", f"/messages/{_seg(str(message_id))}/ack", {}, token="required")


class Leases(_Group[R]):
    """Exclusive, expiring holds on any resource key, with fencing tokens."""

    def acquire(self, resource: str, *, ttl_seconds: int | None = None) -> R:
        """409 ``LEASE_CONFLICT`` (``extra["lease_holder"]``) when another session holds it."""
        body = drop_unset(resource=resource, ttl_seconds=ttl_seconds)
        return self._call("POST", "/leases", body, token="required")

    def list(
        self,
        resource: str | None = None,
        *,
        agent_name: str | None = None,
        include_ended: bool | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> R:
        params = dict(
            resource=resource,
            agent_name=agent_name,
            include_ended=None if include_ended is None else str(include_ended).lower(),
            limit=limit,
            offset=offset,
        )
        return self._call("GET", "/leases", params=params)

    def renew(self, lease_id: str, *, ttl_seconds: int | None = None) -> R:
        body = drop_unset(ttl_seconds=ttl_seconds)
        return self._call("POST", f"/leases/{_seg(lease_id)}/renew", body, token="required")

    def release(self, lease_id: str) -> R:
        return self._call("POST", f"/leases/{_seg(lease_id)}/release", {}, token="required")

    def validate(self, resource: str, fencing_token: int) -> R:
        """Is this fencing token still the current one for the resource?"""
        body = {"resource": resource, "fencing_token": fencing_token}
        return self._call("POST", "/leases/validate", body, token="none")


class Consensus(_Group[R]):
    """Votes of the other live agents before a sensitive action."""

    def request(
        self,
        action: str,
        reason: str,
        *,
        subject: str | None = None,
        timeout_seconds: int | None = None,
    ) -> R:
        body = drop_unset(
            action=action, reason=reason, subject=subject, timeout_seconds=timeout_seconds
        )
        return self._call("POST", "/consensus", body, token="required")

    def list(
        self,
        status: ConsensusStatus | None = None,
        *,
        limit: int | None = None,
        offset: int | None = None,
    ) -> R:
        return self._call(
            "GET", "/consensus", params=dict(status=status, limit=limit, offset=offset)
        )

    def get(self, consensus_id: str) -> R:
        return self._call("GET", f"/consensus/{_seg(consensus_id)}")

    def vote(self, consensus_id: str, vote: Vote, *, comment: str | None = None) -> R:
        body = drop_unset(vote=vote, comment=comment)
        return self._call("POST", f"/consensus/{_seg(consensus_id)}/vote", body, token="required")


class Agents(_Group[R]):
    """The agent registry: roles and the config keys the project allows."""

    def upsert(
        self, name: str, *, role: str | None = None, config: dict[str, Any] | None = None
    ) -> R:
        return self._call("PUT", f"/agents/{_seg(name)}", drop_unset(role=role, config=config))

    def list(
        self, role: str | None = None, *, limit: int | None = None, offset: int | None = None
    ) -> R:
        return self._call("GET", "/agents", params=dict(role=role, limit=limit, offset=offset))

    def get(self, name: str) -> R:
        return self._call("GET", f"/agents/{_seg(name)}")
