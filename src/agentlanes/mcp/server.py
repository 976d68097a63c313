"""agentlanes' tools for coding agents over MCP, with the official ``mcp`` SDK (2.x).

Two ways to serve the same tools:

- ``agentlanes mcp``: one agent, over stdio. It reads the server URL and key like the CLI
  (``AGENTLANES_URL`` / ``AGENTLANES_API_KEY`` or ``.agentlanes.toml``) and shares the
  session with the CLI and the git hook: ``checkin`` keeps it in the agent's file under
  ``.git/agentlanes/sessions/``, and literals naming a directory of the working tree are
  sent with their trailing ``/``.
- ``/mcp`` inside ``agentlanes serve`` (streamable HTTP, ``agentlanes.mcp.http``): many
  agents, one MCP session each, authenticated by the project's ``X-API-Key``.

Either way a session this server checked in is heartbeated while the agent stays
connected. Every tool and argument carries a description for the model, the tools that
only read say so (``readOnlyHint``), and errors are phrased for the agent that gets them
(what went wrong and which tool to call next).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from agentlanes import __version__
from agentlanes.client.aio import AsyncClient
from agentlanes.client.config import LocalConfig, load_config, read_session
from agentlanes.client.errors import ApiError, ClientError, NoSession

T = TypeVar("T")

INSTRUCTIONS = """agentlanes tells coding agents who else is working on this repository.
Call `checkin` before you edit (your name, work area and the file globs you will touch);
read the conflicts it returns and coordinate before touching files others hold. Call
`check_conflicts` with concrete paths before editing a file outside your scope, `status` to
change your scope, and `checkout` with a summary when you are done."""

# Tools that only read: a client may run them without asking.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
CHANGES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
ENDS = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

Globs = Annotated[
    list[str] | None,
    Field(
        description="File globs relative to the repository root, e.g. ['src/api/**', "
        "'docs/api.md']. `*` stays within a directory, `**` spans directories; a name "
        "ending in '/' claims a whole directory."
    ),
]
Area = Annotated[
    str | None,
    Field(
        description="Your work area, a short label such as 'billing'; the same label as "
        "another live agent counts as a conflict."
    ),
]
TaskId = Annotated[
    str, Field(description="The task's id, e.g. 'task_…' (from task_create or tasks_list).")
]
Limit = Annotated[int | None, Field(description="At most this many results (1-500).")]
Ttl = Annotated[int | None, Field(description="Seconds the lease lasts (default 1,800).")]
LeaseId = Annotated[str, Field(description="The lease's id (from lease_acquire or leases_list).")]
Note = Annotated[str | None, Field(description="A short note kept with the change.")]


def agent_error(exc: ClientError) -> ToolError:
    """A failure as the agent should read it: what happened and what to call next."""
    if isinstance(exc, NoSession):
        return ToolError("You have no agentlanes session: call the `checkin` tool first.")
    if not isinstance(exc, ApiError):
        return ToolError(str(exc))
    if exc.code == "SESSION_ENDED":
        why = exc.extra.get("status")
        return ToolError(
            f"SESSION_ENDED: your session has ended{f' ({why})' if why else ''}; "
            "call `checkin` to start a new one."
        )
    if exc.code == "SESSION_NOT_FOUND":
        return ToolError(
            "SESSION_NOT_FOUND: the server does not know your session; call `checkin`."
        )
    if exc.code == "VALIDATION_ERROR" and exc.field:
        return ToolError(
            f"VALIDATION_ERROR: {exc.message} (argument `{exc.field}`); fix it and retry."
        )
    if exc.conflicts:
        held = []
        for c in exc.conflicts[:10]:
            if c.get("overlapping_area"):
                held.append(
                    f"{c.get('agent_name')} works in the same area {c.get('declared_area')!r}"
                )
            for f in (c.get("overlapping_files") or [])[:3]:
                sure = (
                    "certain"
                    if f.get("certain", True)
                    else f"only if {f.get('if_directory')} is a directory"
                )
                held.append(
                    f"{c.get('agent_name')} holds {f.get('their_pattern')} "
                    f"(example {f.get('example')}, {sure})"
                )
        return ToolError(
            f"{exc.code}: {exc.message}. " + "; ".join(held) + ". Pick other files, or "
            "coordinate with them (`message_send`)."
        )
    extra = {k: v for k, v in exc.extra.items() if k != "conflicts"}
    return ToolError(f"{exc.code}: {exc.message}{f' {extra}' if extra else ''}")


class Lanes:
    """One agent's side: a client, its session, and the heartbeat that keeps it alive.

    ``cfg`` is the local configuration when this server sees the working tree (stdio);
    None inside ``agentlanes serve``, where nothing is kept on disk.
    """

    def __init__(self, client: AsyncClient, cfg: LocalConfig | None = None) -> None:
        self.cfg = cfg
        self.client = client
        self.agent: str | None = None
        self.interval = 30.0
        self.last_used = time.monotonic()
        self._beat: asyncio.Task[None] | None = None

    @classmethod
    def local(cls, cfg: LocalConfig) -> Lanes:
        session = read_session(cfg)
        lanes = cls(
            AsyncClient(
                cfg.url,
                cfg.api_key,
                session_token=session["session_token"] if session else None,
                timeout=cfg.timeout,
            ),
            cfg,
        )
        if session:
            lanes.agent = session.get("agent_name")
            lanes.interval = float(session.get("heartbeat_interval_seconds") or 30)
        return lanes

    async def call(self, pending: Awaitable[T]) -> T:
        """Await a client call; its failure becomes a tool error phrased for the agent."""
        self.last_used = time.monotonic()
        try:
            return await pending
        except ClientError as exc:
            raise agent_error(exc) from None

    def patterns(self, values: list[str] | None) -> tuple[list[str] | None, list[str]]:
        """Literals naming a directory here get their trailing '/' (SPEC: File patterns)."""
        if values is None or self.cfg is None:
            return values, []
        from agentlanes.client.worktree import mark_directories

        return mark_directories(values, self.cfg.root)

    def keep(self, result: Any) -> None:
        from agentlanes.client.config import save_checkin

        self.agent = result.agent_name
        if self.cfg is not None:
            save_checkin(self.cfg, result)

    def forget(self) -> None:
        from agentlanes.client.config import forget_session

        if self.cfg is not None and self.agent:
            forget_session(self.cfg, self.agent)
        self.client.session_token = None

    def start_heartbeat(self) -> None:
        self.stop_heartbeat()
        self._beat = asyncio.create_task(self._heartbeat_loop())

    def stop_heartbeat(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None

    async def close(self) -> None:
        self.stop_heartbeat()
        await self.client.aclose()

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.client.heartbeat()
            except ApiError as exc:
                if exc.code in ("SESSION_ENDED", "SESSION_NOT_FOUND"):
                    return
            except ClientError:
                continue  # unreachable for a moment: the TTL leaves room for retries


# How a tool finds the agent it acts for (one per stdio process; one per MCP session
# over HTTP).
Resolve = Callable[[Context], Awaitable[Lanes]]


def build_server(cfg: LocalConfig | None = None) -> MCPServer[Any]:
    """The stdio server: one agent, the working tree around ``cfg``."""
    cfg = cfg or load_config()
    lanes = Lanes.local(cfg)

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        if lanes.client.session_token:
            lanes.start_heartbeat()
        try:
            yield
        finally:
            await lanes.close()

    async def resolve(_: Context) -> Lanes:
        return lanes

    return new_server(resolve, lifespan)


def new_server(resolve: Resolve, lifespan: Any = None) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        "agentlanes",
        title="agentlanes",
        version=__version__,
        instructions=INSTRUCTIONS,
        website_url="https://github.com/agentlanes/agentlanes",
        lifespan=lifespan,
        log_level="WARNING",
    )
    add_session_tools(server, resolve)
    add_coordination_tools(server, resolve)
    return server


def add_session_tools(server: MCPServer[Any], resolve: Resolve) -> None:
    """Check-in, liveness, scope, presence and conflict checks."""

    @server.tool(annotations=CHANGES)
    async def checkin(
        ctx: Context,
        agent_name: Annotated[
            str | None,
            Field(
                description="Your name, 1-64 of letters, digits, '.', '_' and '-'. A new "
                "check-in under a name that is live ends that earlier session. Omitted: "
                "the configured name, else the server makes one up."
            ),
        ] = None,
        declared_area: Area = None,
        declared_files: Globs = None,
    ) -> dict[str, Any]:
        """Start your session before you edit: your name, work area and the file globs
        you will touch.

        Returns your session and its conflicts: the other live agents whose area or
        files overlap yours, with an example path both claim and whether the overlap is
        certain. In a block-mode project an overlapping check-in is refused (an error
        naming who holds what). This server keeps the session alive while you stay
        connected."""
        lanes = await resolve(ctx)
        files, marked = lanes.patterns(declared_files)
        default = lanes.cfg.agent_name if lanes.cfg else None
        result = await lanes.call(lanes.client.checkin(agent_name or default, declared_area, files))
        lanes.keep(result)
        lanes.interval = float(result.heartbeat_interval_seconds)
        lanes.start_heartbeat()
        data = result.raw()
        data.pop("session_token")  # the model does not need it; this server keeps it
        data["directories_marked"] = marked
        return data

    @server.tool(annotations=CHANGES)
    async def heartbeat(ctx: Context) -> dict[str, Any]:
        """Tell the server your session is alive. This server already does it on its own
        while you are connected; call it only if you are told your session is expiring."""
        lanes = await resolve(ctx)
        return (await lanes.call(lanes.client.heartbeat())).raw()

    @server.tool(annotations=CHANGES)
    async def status(
        ctx: Context,
        declared_area: Area = None,
        declared_files: Annotated[
            list[str] | None,
            Field(
                description="Your new full list of file globs (it replaces the old list): "
                "add a file here before editing it outside your scope."
            ),
        ] = None,
        status_text: Annotated[
            str | None, Field(description="One line the others see, e.g. 'migrating invoices'.")
        ] = None,
    ) -> dict[str, Any]:
        """Change your work area, file globs or status line; returns fresh conflicts.

        In a block-mode project a change that overlaps another agent is refused and your
        old scope stays."""
        lanes = await resolve(ctx)
        files, marked = lanes.patterns(declared_files)
        result = await lanes.call(lanes.client.status(declared_area, files, status_text))
        return {**result.raw(), "directories_marked": marked}

    @server.tool(annotations=ENDS)
    async def checkout(
        ctx: Context,
        outcome_status: Annotated[
            Literal["completed", "partial", "failed"],
            Field(description="How your work ended."),
        ] = "completed",
        work_summary: Annotated[
            str | None, Field(description="What you did, for the others (up to 10,000 characters).")
        ] = None,
        files_touched: Annotated[
            list[str] | None,
            Field(description="The files you changed, relative to the repository root."),
        ] = None,
    ) -> dict[str, Any]:
        """End your session when you are done; releases your leases and task claims."""
        lanes = await resolve(ctx)
        result = await lanes.call(
            lanes.client.checkout(outcome_status, work_summary, files_touched)
        )
        lanes.stop_heartbeat()
        lanes.forget()
        return result.raw()

    @server.tool(annotations=READ_ONLY)
    async def presence(ctx: Context) -> dict[str, Any]:
        """Who is live in the project: each session's agent, area, file globs, status line
        and last heartbeat, oldest first."""
        lanes = await resolve(ctx)
        return (await lanes.call(lanes.client.presence())).raw()

    @server.tool(annotations=READ_ONLY)
    async def check_conflicts(
        ctx: Context,
        paths: Annotated[
            list[str] | None,
            Field(
                description="Concrete files relative to the repository root, e.g. ['src/app.py']."
            ),
        ] = None,
        patterns: Globs = None,
        declared_area: Area = None,
    ) -> dict[str, Any]:
        """Would these files, globs or area collide with another live agent? Your own
        session is left out. Call it before editing a file outside your scope. Changes
        nothing."""
        lanes = await resolve(ctx)
        globs, _ = lanes.patterns(patterns)
        return (await lanes.call(lanes.client.check_conflicts(paths, globs, declared_area))).raw()

    @server.tool(annotations=READ_ONLY)
    async def project(ctx: Context) -> dict[str, Any]:
        """The project: its conflict mode (warn: overlaps are reported; block: certain
        overlaps are refused) and heartbeat settings."""
        lanes = await resolve(ctx)
        return (await lanes.call(lanes.client.project())).raw()


def about(text: str) -> Any:
    """An argument's description for the model (inside `Annotated[...]`)."""
    return Field(description=text)


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
            lanes.client.tasks.create(title, description, priority, paths, depends_on, parent_id)
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
        return await lanes.call(
            lanes.client.tasks.list(status=status, claimed_by=claimed_by, limit=limit)
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
        return await lanes.call(lanes.client.tasks.set_status(task_id, status, note))

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
        return await lanes.call(lanes.client.checkpoints.create(name, task_ids, description))

    @server.tool(annotations=READ_ONLY)
    async def checkpoints_list(
        ctx: Context,
        status: Annotated[
            str | None, about("Only gates in this state: pending, passed, failed.")
        ] = None,
    ) -> dict[str, Any]:
        """List the project's checkpoints (gates over tasks) and their state."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.checkpoints.list(status=status))

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
        return await lanes.call(lanes.client.checkpoints.resolve(checkpoint_id, status, note))

    @server.tool(annotations=CHANGES)
    async def message_send(
        ctx: Context,
        to: Annotated[str, about("An agent's name, or 'broadcast' for every agent.")],
        body: Annotated[str, about("The message (up to 50,000 characters).")],
        type: Annotated[str | None, about("A kind of message, e.g. 'question', 'handoff'.")] = None,
        thread_id: Annotated[
            str | None, about("Groups replies: reuse the thread of the message you answer.")
        ] = None,
    ) -> dict[str, Any]:
        """Send a message to another agent (delivered live); needs your session."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.messages.send(to, body, type, thread_id))

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
        return await lanes.call(lanes.client.leases.acquire(resource, ttl_seconds))

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
        return await lanes.call(lanes.client.leases.renew(lease_id, ttl_seconds))

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
            lanes.client.consensus.request(action, reason, subject, timeout_seconds)
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
        return await lanes.call(lanes.client.consensus.vote(consensus_id, vote, comment))

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
        return await lanes.call(lanes.client.agents.upsert(name, role, config))

    @server.tool(annotations=READ_ONLY)
    async def agents_list(
        ctx: Context, role: Annotated[str | None, about("Only agents with this role.")] = None
    ) -> dict[str, Any]:
        """The project's agent registry: names, roles and their config."""
        lanes = await resolve(ctx)
        return await lanes.call(lanes.client.agents.list(role=role))


def main(start: Path | None = None) -> None:
    """Serve MCP over stdio until the client closes the connection."""
    build_server(load_config(start)).run("stdio")
