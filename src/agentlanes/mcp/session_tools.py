"""The session's tools: check-in, liveness, scope, presence and conflict checks."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from agentlanes.mcp import toolsets
from agentlanes.mcp.arguments import CHANGES, ENDS, READ_ONLY, Area, Globs
from agentlanes.mcp.lanes import Resolve


def _symbol_claims(
    root: str | None, files: list[str] | None
) -> tuple[list[str] | None, list[dict[str, Any]] | None]:
    """``path#Symbol`` entries read into range claims on HEAD, as the CLI reads them (only
    where this server runs in the checkout); a refusal names the file's symbols."""
    if not files or not any("#" in f for f in files):
        return files, None
    from agentlanes.client.symbols import SymbolError, split_claims

    try:
        return split_claims(root, files)
    except SymbolError as exc:
        raise ToolError(
            f"VALIDATION_ERROR: declared_files: {exc} (path#Symbol is read on HEAD in your "
            "checkout: the MCP server that runs there, lanes mcp over stdio, reads it)"
        ) from None


RELEASE_MAX_PATHS = 1000


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
        you will touch. To claim only the lines you touch, name a symbol in
        declared_files as path#Symbol (e.g. 'src/auth.py#Login.check'): another agent
        can then work on another function of the same file.

        Returns your session and its conflicts: the other live agents whose area or
        files overlap yours, with an example path both claim and whether the overlap is
        certain. In a block-mode project an overlapping check-in is refused (an error
        naming who holds what). This server keeps the session alive while you stay
        connected."""
        lanes = await resolve(ctx)
        globs, claims = _symbol_claims(lanes.cfg.root if lanes.cfg else None, declared_files)
        files, marked = lanes.patterns(globs)
        lanes.refresh()  # the agent that started this server checks in under its own name
        default = lanes.agent or (lanes.cfg.agent_name if lanes.cfg else None)
        result = await lanes.call(
            lanes.client.checkin(agent_name or default, declared_area, files, claims=claims)
        )
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
        edited_files: Annotated[
            list[str] | None,
            Field(
                description="Files you changed: the lines you changed against HEAD are read "
                "with git in your checkout and reported, so each overlap is graded 'lines' "
                "(a merge conflict ahead) or 'file' (git merges it). Only where this server "
                "runs in your checkout (stdio)."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Change your work area, file globs or status line, or report your edits; returns
        fresh conflicts, each with its grade.

        In a block-mode project a change that overlaps another agent is refused and your
        old scope stays (an edit report is always kept)."""
        lanes = await resolve(ctx)
        files, marked = lanes.patterns(declared_files)
        edits = lanes.edits_of(edited_files)
        result = await lanes.call(
            lanes.client.status(
                declared_area=declared_area,
                declared_files=files,
                status_text=status_text,
                edits=edits,
            )
        )
        return {**result.raw(), "directories_marked": marked}

    @server.tool(annotations=CHANGES)
    async def release(
        ctx: Context,
        paths: Annotated[
            list[str],
            Field(
                min_length=1,
                # Matched against every claim: counted before that work (a session holds
                # at most max_patterns claims, 256 by default).
                max_length=RELEASE_MAX_PATHS,
                description="Claims to give back: each as you hold it (a file, a dir/, a "
                "glob), or a file one of your claims names.",
            ),
        ],
    ) -> dict[str, Any]:
        """Give back claims you no longer need, e.g. a file you finished: an agent waiting
        for it gets it at once. A file held only through one of your globs cannot be cut
        out of it: release the glob, or narrow it with the status tool."""
        lanes = await resolve(ctx)
        from agentlanes.client.release import released, remember_claims

        live = await lanes.call(lanes.client.presence())
        mine = [s for s in live.sessions if lanes.agent and s.agent_name == lanes.agent]
        declared = [p for p in (mine[0].declared_files or []) if isinstance(p, str)] if mine else []
        left, unknown = released(declared, paths, lanes.cfg.root if lanes.cfg else None)
        if unknown:
            raise ToolError(
                f"VALIDATION_ERROR: paths: {', '.join(unknown)} not among your claims "
                f"({' '.join(declared) or 'none'}); nothing released"
            )
        result = await lanes.call(lanes.client.status(declared_files=left))
        if lanes.cfg is not None and lanes.agent:
            from agentlanes.client.config import read_session

            session = read_session(lanes.cfg, agent=lanes.agent)
            if session:
                remember_claims(lanes.cfg, session, list(result.declared_files or []), declared)
        return {**result.raw(), "released": [p for p in declared if p not in left]}

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
            lanes.client.checkout(outcome_status, work_summary, files_touched=files_touched)
        )
        lanes.stop_heartbeat()
        lanes.forget()
        return result.raw()

    @server.tool(annotations=CHANGES)
    async def more_tools(
        ctx: Context,
        groups: Annotated[
            list[
                Literal[
                    "session", "tasks", "checkpoints", "inbox", "leases", "votes", "agents", "all"
                ]
            ],
            Field(description="Which to add."),
        ],
    ) -> dict[str, Any]:
        """More agentlanes tools when you need them: session (presence, check_conflicts,
        heartbeat, project), tasks, checkpoints, inbox, leases, votes (consensus), agents."""
        lanes = await resolve(ctx)
        try:
            lanes.tools = toolsets.parse([*lanes.tools, *groups])
        except ValueError as exc:
            raise ToolError(f"VALIDATION_ERROR: groups: {exc}") from None
        from mcp_types import ToolListChangedNotification

        # On this call's own stream (/mcp keeps no other); if it cannot be sent, the
        # answer names the tools anyway.
        with contextlib.suppress(Exception):
            await ctx.session.send_notification(
                ToolListChangedNotification(), related_request_id=ctx.request_id
            )
        added = [t for g in lanes.tools if g in groups or "all" in groups
                 for t in toolsets.GROUPS[g]]  # fmt: skip
        return {"groups": list(lanes.tools), "tools": added}

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
        return (
            await lanes.call(
                lanes.client.check_conflicts(paths, patterns=globs, declared_area=declared_area)
            )
        ).raw()

    @server.tool(annotations=CHANGES)
    async def wait(
        ctx: Context,
        paths: Annotated[
            list[str],
            Field(description="The files (or globs) another agent holds, e.g. ['src/app.py']."),
        ],
        urgency: Annotated[
            Literal["low", "normal", "high"] | None,
            Field(description="Your place in line: urgency first, then arrival."),
        ] = None,
    ) -> dict[str, Any]:
        """Wait your turn for files another agent holds (after a refusal). Answers at
        once: granted (they are yours now) or queued with your position and the holders;
        do other work meanwhile: the grant arrives as news (claim.granted) and the files
        join your claims."""
        lanes = await resolve(ctx)
        files, _ = lanes.patterns(paths)
        return (await lanes.call(lanes.client.queue_wait(files or paths, urgency=urgency))).raw()

    @server.tool(annotations=READ_ONLY)
    async def project(ctx: Context) -> dict[str, Any]:
        """The project: its conflict mode (warn: overlaps are reported; block: certain
        overlaps are refused) and heartbeat settings."""
        lanes = await resolve(ctx)
        return (await lanes.call(lanes.client.project())).raw()
