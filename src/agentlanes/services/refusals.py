"""The words of a refusal (SPEC "Waiting for a lane", "Context budget"): who holds which
path, and the three ways on — wait your turn (``lanes wait``), ask the holder
(``lanes ask``), or other work — in at most 600 characters, ending with the next step.
An agent reads this text in its context; a person reads it in a shell."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentlanes.domain.words import shell_word

# SPEC "Context budget": a refusal reason is at most this long and ends with the next step.
MAX_CHARS = 600
# Holders and paths named (the rest are counted); a name or path longer than this is cut.
NAMED = 2
SHOWN_CHARS = 60


def _cut(text: str, width: int = SHOWN_CHARS) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def refusal_text(
    what: str,
    refusing: Sequence[dict[str, Any]],
    shown: Callable[[str, str], str],
    *,
    queued: dict[str, Any] | None = None,
    has_session: bool = True,
    total: int | None = None,
) -> str:
    """The message of a 409: ``what`` was refused (``check-in``, ``scope change``),
    because of the ``refusing`` conflicts (views, certain first); ``shown(session_id,
    agent_name)`` is the name to show for a holder; ``queued``: the wait auto_queue
    made for it (``queue_id``, ``position``); ``total``: how many live sessions refuse it
    (``refusing`` may be a bounded answer's first ones)."""
    holders: list[str] = []
    mine: list[str] = []
    held: list[str] = []
    for c in refusing:
        who = shown(c["session_id"], c["agent_name"])
        if who not in holders:
            holders.append(who)
        for f in c.get("overlapping_files") or []:
            if f.get("certain", True):
                if f["pattern"] not in mine:
                    mine.append(f["pattern"])
                if f["example"] not in held:
                    held.append(f["example"])
        if c.get("overlapping_area") and not c.get("overlapping_files"):
            held.append(f"area {c.get('declared_area')!r}")
    paths = " ".join(shell_word(_cut(p)) for p in mine[:NAMED]) or "PATH"
    whom = holders[0] if holders else "AGENT"
    named = ", ".join(_cut(h) for h in held[:NAMED]) + (
        f" and {len(held) - NAMED} more" if len(held) > NAMED else ""
    )
    count = max(total or 0, len(holders))
    by = ", ".join(_cut(h) for h in holders[:NAMED]) + (
        f" and {count - NAMED} more" if count > NAMED else ""
    )
    head = (
        f"{what} refused (block mode; {count} live session(s) overlap for certain): "
        f"{named or 'your claims'} held by {by or 'another agent'}"
    )
    ask = f'ask the holder (lanes ask {_cut(whom)} {paths} --reason "...")'
    if queued is not None:
        body = (
            f". Queued for you ({queued['queue_id']}, position {queued['position']}): the "
            f"grant arrives as news (claim.granted). Meanwhile: {ask}, or work on other files."
        )
        step = " Next step: other work until the grant."
    elif has_session:
        body = f". Ways on: wait your turn (lanes wait {paths}), {ask}, or work on other files."
        step = f" Next step: lanes wait {paths}"
    else:
        body = (
            f". Ways on: check in without them, then wait your turn (lanes wait {paths}) or "
            f"{ask}; or work on other files."
        )
        step = " Next step: check in without those files"
    text = head + body + step
    if len(text) > MAX_CHARS:
        room = MAX_CHARS - len(step) - 1
        text = (head + body)[:room] + "…" + step
    return text[:MAX_CHARS] if len(step) >= MAX_CHARS else text
