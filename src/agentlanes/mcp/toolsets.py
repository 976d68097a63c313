"""Which tools an agent sees (SPEC "Context budget"): every tool's definition costs the
agent's context window on every session, so ``tools/list`` shows a small default set
(``core``: at most 8 KB of JSON) and the rest one call away (the ``more_tools`` tool, or
``lanes mcp --tools GROUP...`` / ``/mcp?tools=GROUP,...`` for a client that wants them up
front). A hidden tool is still served when called by name."""

from __future__ import annotations

from collections.abc import Iterable

GROUPS: dict[str, tuple[str, ...]] = {
    # What an agent needs every session.
    "core": (
        "checkin",
        "status",
        "news",
        "message_send",
        "wait",
        "release",
        "checkout",
        "more_tools",
    ),
    "session": ("heartbeat", "presence", "check_conflicts", "project"),
    "tasks": (
        "task_create",
        "tasks_list",
        "tasks_ready",
        "task_get",
        "task_claim",
        "task_status",
        "task_note",
    ),
    "checkpoints": ("checkpoint_create", "checkpoints_list", "checkpoint_resolve"),
    "inbox": ("inbox", "message_read", "message_ack"),
    "leases": (
        "lease_acquire",
        "leases_list",
        "lease_renew",
        "lease_release",
        "lease_validate",
    ),
    "votes": ("consensus_request", "consensus_get", "consensus_vote"),
    "agents": ("agent_upsert", "agents_list"),
}
DEFAULT: tuple[str, ...] = ("core",)
GROUP_OF = {tool: group for group, tools in GROUPS.items() for tool in tools}


def parse(names: Iterable[str]) -> tuple[str, ...]:
    """Group names (``all``: every group; ``core`` always) in the table's order; a
    ValueError naming the groups there are for a name that is not one."""
    wanted = {n.strip() for n in names if n.strip()}
    unknown = sorted(wanted - set(GROUPS) - {"all"})
    if unknown:
        raise ValueError(
            f"unknown tool group(s) {', '.join(unknown)}: one of {', '.join(GROUPS)} or all"
        )
    if "all" in wanted:
        return tuple(GROUPS)
    return tuple(g for g in GROUPS if g in wanted or g == "core")


def shown(tool: str, groups: Iterable[str]) -> bool:
    """Whether ``tool`` is listed for an agent with these groups (a tool of no group is)."""
    return GROUP_OF.get(tool, "core") in set(groups)
