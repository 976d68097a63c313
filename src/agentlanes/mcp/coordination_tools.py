"""The coordination tools: tasks, checkpoints, messages, leases, votes and the agent
registry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from mcp.server.mcpserver import Context, MCPServer

from agentlanes.mcp.arguments import (
    CHANGES,
    READ_ONLY,
    LeaseId,
    Limit,
    Note,
    TaskId,
    Ttl,
    about,
)
from agentlanes.mcp.lanes import Resolve

if TYPE_CHECKING:
    from agentlanes.client.models import CheckpointStatus, TaskStatus


def add_coordination_tools(server: MCPServer[Any], resolve: Resolve) -> None:
    """Tasks, checkpoints, messages, leases, votes and the agent registry as tools."""

    @server.tool(annotations=CHANGES)
    async def task_create(
        ctx: Context,
        title: Annotated[str, about("A short title for the task.")],
        description: Annotated[
            str | None, about("What needs doing and how to tell it is done.")
        ] = None,
        priority: Annotated[int | None, about("0 (most urgent) to 4 (least); default 2.")] = None,
        paths: Annotated[
            list[str] | None,
            about("File globs the task will touch (it is not ready while others hold them)."),
        ] = None,
        depends_on: Annotated[
            list[str] | None, about("Ids of tasks that must be done first.")
        ] = None,
        parent_id: Annotated[
            str | None, about("The id of a larger task this one is part of.")
        ] = None,
    ) -> dict[str, Any]:
        """Create a task for any agent to take."""
        lanes = await resolve(ctx)
        return await lanes.call(
            lanes.client.tasks.create(
                title,
                description=description,
                priority=priority,
                paths=paths,
                depends_on=depends_on,
                parent_id=parent_id,
            )
        )

    @server.tool(annotations=READ_ONLY)
    async def tasks_list(
        ctx: Context,
        status: Annotated[
            str | None,
            about("Only tasks in this state: pending, in_progress, blocked, done, cancelled."),
        ] = None,
        claimed_by: Annotated[str | None, about("Only tasks claimed by this agent name.")] = None,
        limit: Limit = None,
    ) -> dict[str, Any]:
        """List the project's tasks with their state and who claimed them."""
        lanes = await resolve(ctx)
        # The filter goes to the server as the agent wrote it: the server checks the word
        # and its answer names the states it takes.
        wanted = cast("TaskStatus | None", status)
        return await lanes.call(
            lanes.client.tasks.list(status=wanted, claimed_by=claimed_by, limit=limit)
        )

    @server.tool(annotations=READ_ONLY)
    async def tasks_ready(ctx: Context, limit: Limit = None) -> dict[str, Any]:
        """Tasks you can take now: pending, dependencies done, gates passed, unclaimed, and
        their paths free of other agents' claims. Most urgent first."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.tasks.ready(limit))

    @server.tool(annotations=READ_ONLY)
    async def task_get(ctx: Context, task_id: TaskId) -> dict[str, Any]:
        """One task with its notes and what blocks it."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.tasks.get(task_id))

    @server.tool(annotations=CHANGES)
    async def task_claim(ctx: Context, task_id: TaskId) -> dict[str, Any]:
        """Take a task (one at a time per session). Fails with TASK_ALREADY_CLAIMED when
        another agent holds it. Needs your session (`checkin` first)."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.tasks.claim(task_id))

    @server.tool(annotations=CHANGES)
    async def task_status(
        ctx: Context,
        task_id: TaskId,
        status: Annotated[
            Literal["pending", "blocked", "done", "cancelled"],
            about("done, blocked, back to pending (gives it up), or cancelled."),
        ],
        note: Note = None,
    ) -> dict[str, Any]:
        """Move a task you hold to a new state."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.tasks.set_status(task_id, status, note=note))

    @server.tool(annotations=CHANGES)
    async def task_note(
        ctx: Context,
        task_id: TaskId,
        body: Annotated[str, about("The note: what you found, what is left.")],
    ) -> dict[str, Any]:
        """Add a note to a task: what you found, what is left, for whoever reads it next."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.tasks.add_note(task_id, body))

    @server.tool(annotations=CHANGES)
    async def checkpoint_create(
        ctx: Context,
        name: Annotated[str, about("The gate's name, e.g. 'API review'.")],
        task_ids: Annotated[list[str], about("The tasks it holds until it passes.")],
        description: Annotated[str | None, about("What has to happen for it to pass.")] = None,
    ) -> dict[str, Any]:
        """A named gate (a review, a sign-off) that holds these tasks until it passes."""
        lanes = await resolve(ctx)
        return await lanes.call(
            lanes.client.checkpoints.create(name, task_ids, description=description)
        )

    @server.tool(annotations=READ_ONLY)
    async def checkpoints_list(
        ctx: Context,
        status: Annotated[
            str | None, about("Only gates in this state: pending, passed, failed.")
        ] = None,
    ) -> dict[str, Any]:
        """List the project's checkpoints (gates over tasks) and their state."""
        lanes = await resolve(ctx)
        wanted = cast("CheckpointStatus | None", status)  # the server checks the word
        return await lanes.call(lanes.client.checkpoints.list(status=wanted))

    @server.tool(annotations=CHANGES)
    async def checkpoint_resolve(
        ctx: Context,
        checkpoint_id: Annotated[str, about("The checkpoint's id (from checkpoints_list).")],
        status: Annotated[
            Literal["passed", "failed"], about("passed unblocks its tasks; failed keeps them held.")
        ],
        note: Note = None,
    ) -> dict[str, Any]:
        """Pass a checkpoint (its tasks may proceed) or fail it (they stay held)."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.checkpoints.resolve(checkpoint_id, status, note=note))

    @server.tool(annotations=CHANGES)
    async def message_send(
        ctx: Context,
        to: Annotated[
            str,
            about("A live agent's name or display name (claude-1), or 'broadcast' for all."),
        ],
        body: Annotated[str, about("The message (up to 50,000 characters).")],
        type: Annotated[str | None, about("A kind of message, e.g. 'question', 'handoff'.")] = None,
        thread_id: Annotated[
            str | None, about("Groups replies: reuse the thread of the message you answer.")
        ] = None,
    ) -> dict[str, Any]:
        """Send a message to another agent (delivered live); needs your session."""
        lanes = await resolve(ctx)
        return await lanes.call(
            lanes.client.messages.send(to, body, type=type, thread_id=thread_id)
        )

    @server.tool(annotations=CHANGES)
    async def news(
        ctx: Context,
        after: Annotated[
            str | None,
            about(
                "A cursor from an earlier answer; omitted: from where your last news call "
                "ended (the first call sums up the current state)."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """What concerns you since you last asked: messages to you, other agents starting
        or stopping to edit files you claim (certain overlaps named), your tasks, leases
        now free, votes. Each item has a one-line `text`. Messages shown count as
        delivered."""
        lanes = await resolve(ctx)
        answer = await lanes.call(lanes.client.news(after=after or lanes.news_cursor, deliver=True))
        lanes.news_cursor = answer.get("cursor")
        return answer

    @server.tool(annotations=READ_ONLY)
    async def inbox(
        ctx: Context,
        unread: Annotated[bool | None, about("true: only messages you have not read yet.")] = None,
        limit: Limit = None,
    ) -> dict[str, Any]:
        """Your messages, direct and broadcast, with their read state."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.messages.inbox(unread=unread, limit=limit))

    @server.tool(annotations=CHANGES)
    async def message_read(
        ctx: Context, message_id: Annotated[int, about("The message's id (from inbox).")]
    ) -> dict[str, Any]:
        """Mark a message as read: it no longer counts as unread in your inbox."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.messages.read(message_id))

    @server.tool(annotations=CHANGES)
    async def message_ack(
        ctx: Context, message_id: Annotated[int, about("The message's id (from inbox).")]
    ) -> dict[str, Any]:
        """Acknowledge a message: tell its sender you will act on it."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.messages.ack(message_id))

    @server.tool(annotations=CHANGES)
    async def lease_acquire(
        ctx: Context,
        resource: Annotated[str, about("Any key naming what you need alone, e.g. 'deploy:prod'.")],
        ttl_seconds: Ttl = None,
    ) -> dict[str, Any]:
        """Hold a resource exclusively; returns the lease and a fencing token. Fails with
        LEASE_CONFLICT naming the holder when someone else has it."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.leases.acquire(resource, ttl_seconds=ttl_seconds))

    @server.tool(annotations=READ_ONLY)
    async def leases_list(
        ctx: Context,
        resource: Annotated[str | None, about("Only the leases of this resource key.")] = None,
    ) -> dict[str, Any]:
        """The live leases: resource, holder, expiry."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.leases.list(resource=resource))

    @server.tool(annotations=CHANGES)
    async def lease_renew(
        ctx: Context, lease_id: LeaseId, ttl_seconds: Ttl = None
    ) -> dict[str, Any]:
        """Extend a lease you hold before it expires (the fencing token stays the same)."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.leases.renew(lease_id, ttl_seconds=ttl_seconds))

    @server.tool(annotations=CHANGES)
    async def lease_release(ctx: Context, lease_id: LeaseId) -> dict[str, Any]:
        """Give a lease back before it expires, so another agent can take the resource."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.leases.release(lease_id))

    @server.tool(annotations=READ_ONLY)
    async def lease_validate(
        ctx: Context,
        resource: Annotated[str, about("The resource key.")],
        fencing_token: Annotated[int, about("The fencing token your lease came with.")],
    ) -> dict[str, Any]:
        """Is this fencing token still the current one for the resource?"""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.leases.validate(resource, fencing_token))

    @server.tool(annotations=CHANGES)
    async def consensus_request(
        ctx: Context,
        action: Annotated[str, about("What you want to do, e.g. 'deploy'.")],
        reason: Annotated[str, about("Why, for the voters.")],
        subject: Annotated[str | None, about("What it applies to, e.g. 'v2 API'.")] = None,
        timeout_seconds: Annotated[int | None, about("Seconds before the vote expires.")] = None,
    ) -> dict[str, Any]:
        """Ask the other live agents to approve an action; a strict majority decides."""
        lanes = await resolve(ctx)
        return await lanes.call(
            lanes.client.consensus.request(
                action, reason, subject=subject, timeout_seconds=timeout_seconds
            )
        )

    @server.tool(annotations=READ_ONLY)
    async def consensus_get(
        ctx: Context, consensus_id: Annotated[str, about("The vote's id (from consensus_request).")]
    ) -> dict[str, Any]:
        """A vote's state: eligible voters, approvals, rejections, status."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.consensus.get(consensus_id))

    @server.tool(annotations=CHANGES)
    async def consensus_vote(
        ctx: Context,
        consensus_id: Annotated[str, about("The vote's id.")],
        vote: Annotated[Literal["approve", "reject"], about("Your vote (one per agent).")],
        comment: Annotated[str | None, about("Why, for the requester.")] = None,
    ) -> dict[str, Any]:
        """Vote on another agent's consensus request, once; a strict majority decides."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.consensus.vote(consensus_id, vote, comment=comment))

    @server.tool(annotations=CHANGES)
    async def agent_upsert(
        ctx: Context,
        name: Annotated[str, about("The agent's name.")],
        role: Annotated[str | None, about("Its role, e.g. 'reviewer'.")] = None,
        config: Annotated[
            dict[str, Any] | None, about("Settings the project allows; unknown keys are dropped.")
        ] = None,
    ) -> dict[str, Any]:
        """Register an agent, or update its role and config."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.agents.upsert(name, role=role, config=config))

    @server.tool(annotations=READ_ONLY)
    async def agents_list(
        ctx: Context, role: Annotated[str | None, about("Only agents with this role.")] = None
    ) -> dict[str, Any]:
        """The project's agent registry: names, roles and their config."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.agents.list(role=role))
