"""The agent's news (SPEC "The agent's news"): what concerns one live session, as items an
LLM can read, from the events the live projection applied.

Nothing here reads a table per call: the projection keeps its newest events in memory
(``LiveProject.recent``, each with the session it changed as it was before), so an item is
decided from the event, the caller's own claims and, for an overlap, the two sessions'
patterns. A call costs what the events after its cursor cost, whatever the swarm's size.
Only the summary (a first call, or a cursor the memory no longer covers) asks the database
for the unread messages.

A cursor is ``<offset>-<epoch>``: the event log's offset the news has been read up to, and
the history it belongs to.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, Literal

from agentlanes import tokens
from agentlanes.clock import iso, utcnow
from agentlanes.domain.conflicts import SearchTooLong
from agentlanes.domain.edits import LINES, grade_file
from agentlanes.domain.globs import overlap
from agentlanes.domain.words import clean
from agentlanes.errors import InvalidInput, SessionEnded, SessionNotFound
from agentlanes.services import line_claims
from agentlanes.services.context import ServiceContext
from agentlanes.services.projection import LiveProject, LiveSession, Recent
from agentlanes.services.session_auth import check_token
from agentlanes.services.sessions import current_projection
from agentlanes.services.views import shown_name
from agentlanes.store import queries
from agentlanes.store.models import Project

CURSOR_PATTERN = "^[0-9]{1,19}-[0-9a-f]{1,32}$"
# \Z, not $: a cursor with a trailing newline (``%0A``) is not a cursor.
CURSOR_RE = re.compile(r"^([0-9]{1,19})-([0-9a-f]{1,32})\Z")
# The largest ?limit= taken (answers carry at most news_max_items whatever it says).
LIMIT_MAX = 1000
# Message ids one POST /news/delivered may name.
DELIVERED_MAX = 1000
WILDCARDS = frozenset("*?[{")
# Overlapping pairs named in one item's text; the rest are counted.
NAMED_PAIRS = 2
# Overlapping pairs one item counts at most (past them: "or more").
PAIRS_MAX = 64
# Time one item's pattern comparisons may take (on the event loop, which is given back
# between items); past it the item is shortened and names no files. A whole answer stops
# after conflict_search_seconds (``more``: read on from its cursor). SPEC "One agent
# cannot hurt another".
ITEM_SECONDS = 0.05
YIELD_SECONDS = 0.02
SUMMARY_SESSIONS = 10
# What an item is about (an answer's ``kind``).
Kind = Literal[
    "summary",
    "message",
    "overlap.began",
    "overlap.ended",
    "edits.meet",
    "area.shared",
    "task.assigned",
    "task.ready",
    "task.dependency_done",
    "task.note",
    "lease.free",
    "consensus.vote_requested",
    "consensus.outcome",
    "project.mode",
    "claim.granted",
    "queue.timed_out",
    "queue.waiting",
    "release.requested",
    "release.answered",
]
# Free text of another agent (a release request's reason) shown in an item, at most.
REASON_CHARS = 300


def cursor_of(offset: int, epoch: str) -> str:
    return f"{offset}-{epoch}"


def parse_cursor(raw: str | None) -> tuple[int, str] | None:
    """``(offset, epoch)``; 400 naming ``after`` when it is not a cursor."""
    if raw is None:
        return None
    match = CURSOR_RE.match(raw)
    if match is None:
        raise InvalidInput("after", "must be a cursor from an earlier answer (<offset>-<epoch>)")
    return int(match.group(1)), match.group(2)


def _at(ts: Any) -> str | None:
    return iso(ts) if isinstance(ts, datetime) else ts


def _literal(pattern: str) -> bool:
    return not pattern.endswith("/") and not (WILDCARDS & set(pattern))


# -- who is asking ---------------------------------------------------------------------------


async def session_of(
    ctx: ServiceContext, project: Project, token: str | None
) -> tuple[LiveProject, LiveSession]:
    """The caller's live session (404 unknown token, 410 ended), and the project's
    projection brought up to the last committed event."""
    assert project.id is not None
    token_hash = tokens.hash_secret(check_token(token))
    session_id = ctx.known_token(project.id, token_hash)
    status = "active"
    if session_id is None:
        async with ctx.db.read_conn() as conn:
            row = await queries.session_state(conn, project.id, token_hash)
        if row is None:
            raise SessionNotFound("no session with this token in this project")
        session_id, status = row[0], row[1]
        if status == "active":
            ctx.remember_token(project.id, token_hash, session_id)
    current = await current_projection(ctx, project.id)
    mine = current.sessions.get(session_id)
    if mine is None:
        raise SessionEnded(session_id, status if status != "active" else "checked_out")
    now = utcnow()
    if mine.expires_at <= now:
        beat = (await ctx.liveness.beats([mine.id])).get(mine.id)
        if beat is None or beat.expires_at <= now:
            raise SessionEnded(mine.id, "timed_out")
    return current, mine


# -- the answer ------------------------------------------------------------------------------


async def news(
    ctx: ServiceContext,
    project: Project,
    token: str | None,
    *,
    after: str | None,
    limit: int | None,
    deliver: bool = False,
) -> dict[str, Any]:
    """The items that concern the caller's session after ``after``, oldest first.

    ``deliver``: the caller puts them in the agent's context, so the messages among them
    count as delivered to it (``delivered_at``)."""
    cursor = parse_cursor(after)
    cap = ctx.settings.news_max_items
    if limit is not None and not 1 <= limit <= LIMIT_MAX:
        raise InvalidInput("limit", f"must be 1-{LIMIT_MAX} (at most news_max_items are sent)")
    current, mine = await session_of(ctx, project, token)
    result = await answer(ctx, project, current, mine, cursor, min(limit or cap, cap))
    if deliver:
        await deliver_messages(ctx, project, mine.agent_name, result["items"])
    return result


async def deliver_messages(
    ctx: ServiceContext, project: Project, agent: str, items: list[dict[str, Any]]
) -> list[int]:
    """Mark the messages among ``items`` delivered to ``agent``."""
    from agentlanes.services.coordination.messages import mark_delivered

    ids = [int(i["message_id"]) for i in items if i.get("kind") == "message"]
    return await mark_delivered(ctx, project, agent, ids) if ids else []


async def delivered(
    ctx: ServiceContext, project: Project, token: str | None, message_ids: list[int]
) -> dict[str, Any]:
    """``POST /news/delivered``: a hook put these messages in the agent's context (read
    from the keepalive's local news, with no news call of its own)."""
    from agentlanes.services.coordination.messages import mark_delivered

    if len(message_ids) > DELIVERED_MAX:
        raise InvalidInput("message_ids", f"at most {DELIVERED_MAX}")
    _, mine = await session_of(ctx, project, token)
    done = await mark_delivered(ctx, project, mine.agent_name, message_ids)
    return {"agent_name": mine.agent_name, "delivered": done}


async def answer(
    ctx: ServiceContext,
    project: Project,
    current: LiveProject,
    mine: LiveSession,
    cursor: tuple[int, str] | None,
    limit: int,
) -> dict[str, Any]:
    epoch = project.epoch
    if cursor is None or not covered(current, cursor, epoch):
        first = await summary(ctx, project, current, mine)
        return {
            "items": [first],
            "cursor": first["cursor"],
            "more": False,
            "recovered": cursor is None,
            "epoch": epoch,
        }
    items: list[dict[str, Any]] = []
    last = cursor[0]
    more = False
    started = given_back = time.monotonic()
    deadline = started + ctx.settings.conflict_search_seconds
    # A copy: the loop is given back between items, and the kept events may change then.
    for n, recent in enumerate(list(events_after(current, cursor[0]))):
        now = time.monotonic()
        if n and now > deadline:
            more = True  # out of time: the rest from the cursor, on the next call
            break
        if now - given_back > YIELD_SECONDS:
            await asyncio.sleep(0)  # other requests go on meanwhile
            given_back = time.monotonic()
        item = item_for(ctx, project, current, mine, recent)
        if item is not None:
            if len(items) == limit:
                more = True
                break
            items.append(item)
        last = recent.offset
    return {
        "items": items,
        "cursor": cursor_of(last, epoch),
        "more": more,
        "recovered": True,
        "epoch": epoch,
    }


def covered(current: LiveProject, cursor: tuple[int, str], epoch: str) -> bool:
    """Whether the events after the cursor are all in memory (of this history)."""
    offset, of_epoch = cursor
    return of_epoch == epoch and current.recent_from <= offset <= current.offset


def events_after(current: LiveProject, offset: int) -> Iterator[Recent]:
    recent = current.recent
    if not recent or offset >= recent[-1].offset:
        return iter(())
    start = max(0, offset + 1 - recent[0].offset)
    if start == 0:
        return iter(recent)
    # Offsets are consecutive: skip from whichever end is nearer.
    if start > len(recent) // 2:
        tail = [recent[i] for i in range(len(recent) - 1, start - 1, -1)]
        return reversed(tail)
    it = iter(recent)
    for _ in range(start):
        next(it)
    return it


# -- one event, one session ------------------------------------------------------------------


def item_for(
    ctx: ServiceContext,
    project: Project,
    current: LiveProject,
    mine: LiveSession,
    recent: Recent,
) -> dict[str, Any] | None:
    """The item the event makes for ``mine``, or None when it does not concern it; its
    pattern comparisons take at most ``ITEM_SECONDS``."""
    kind = recent.type
    data = _words_cut(recent.data, ctx.settings.news_text_max_chars)
    found: dict[str, Any] | None = None
    deadline = time.monotonic() + ITEM_SECONDS
    if kind in ("agent.checkin", "agent.status"):
        found = _overlap_began(current, mine, data["session"], recent.before, deadline)
        found = found or _edits_meet(mine, data["session"], recent.before, project.line_margin)
        found = found or _release_answered(
            current, mine, data["session"]["session_id"], recent.before, data["session"]
        )
    elif kind in ("agent.checkout", "agent.timeout"):
        found = _overlap_ended(current, mine, data, recent.before, deadline)
        found = found or _release_answered(current, mine, data["session_id"], recent.before, None)
    elif kind == "claim.granted":
        found = _granted(mine, data)
    elif kind == "queue.left":
        found = _wait_timed_out(mine, data)
    elif kind == "queue.joined":
        found = _waits_for_yours(mine, data["entry"], deadline)
    elif kind == "release.requested":
        found = _asked_to_release(mine, data)
    elif kind == "message.created":
        found = _message(current, mine, data["message"])
    elif kind.startswith("task.") or kind == "checkpoint.resolved":
        found = _task(current, mine, recent)
    elif kind in ("lease.released", "lease.expired"):
        found = _lease_free(ctx, project, mine, data["lease"], recent.offset)
    elif kind.startswith("consensus."):
        found = _consensus(mine, kind, data)
    elif kind == "project.updated":
        changes = data.get("changes") or {}
        mode = changes.get("conflict_mode")
        block_on = changes.get("block_on")
        if block_on and not mode:
            found = {
                "kind": "project.mode",
                "text": f"block mode now refuses on {block_on['to']} (was {block_on['from']})"
                + (
                    ": only edits that meet, or files only others edited"
                    if block_on["to"] == "lines"
                    else ""
                ),
                "block_on": block_on["to"],
            }
        if mode:
            found = {
                "kind": "project.mode",
                "text": f"the project's conflict mode is now {mode['to']} (was {mode['from']})"
                + (": certain overlaps are refused" if mode["to"] == "block" else ""),
                "conflict_mode": mode["to"],
            }
    if found is None:
        return None
    # Other agents' words: no escapes, nothing unseen, one line (SPEC "One agent cannot
    # hurt another").
    found["text"] = clean(found["text"])
    return {"cursor": cursor_of(recent.offset, project.epoch), "at": _at(recent.ts), **found}


def _words_cut(data: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """The event's data with each text field (a message body, a reason, a title, a
    status text: strings of the data and of its objects) cut at ``max_chars``
    (news_text_max_chars); lists (patterns, edits) as they are, for the comparisons."""

    def cut(value: Any) -> Any:
        if isinstance(value, str) and len(value) > max_chars:
            return value[: max_chars - 1] + "…"
        return value

    return {
        k: {kk: cut(vv) for kk, vv in v.items()} if isinstance(v, dict) else cut(v)
        for k, v in data.items()
    }


Pairs = list[tuple[str, str, Any]]


def _pairs(mine: Iterable[str], theirs: Iterable[str], deadline: float) -> tuple[Pairs, bool]:
    """(my pattern, their pattern, Overlap) for each overlapping pair, certain ones first,
    and whether every pair was compared: at most ``PAIRS_MAX`` are found, and the
    comparisons stop once ``deadline`` (``time.monotonic()``) has passed."""
    found = []
    complete = True
    ours = list(mine)
    for t in theirs:
        for m in ours:
            # Checked before each: two long near-duplicates take milliseconds.
            if time.monotonic() > deadline:
                complete = False
                break
            o = overlap(m, t)
            if o is not None:
                found.append((m, t, o))
                if len(found) == PAIRS_MAX:
                    complete = False
                    break
        if not complete:
            break
    found.sort(key=lambda pair: not pair[2].certain)
    return found, complete


def _pair_text(m: str, t: str, o: Any) -> str:
    sure = "for certain" if o.certain else f"only if {o.if_directory} is a directory"
    if _literal(t):
        return f"{t}, which you claim ({m}), {sure}"
    return f"{t}, which overlaps your {m} (e.g. {o.example}), {sure}"


def _pair_refs(pairs: Pairs, complete: bool) -> dict[str, Any]:
    m, t, o = pairs[0]
    return {
        "path": o.example,
        "their_pattern": t,
        "your_pattern": m,
        "certain": o.certain,
        "overlaps": len(pairs),
        **({} if complete else {"compared_all": False}),
    }


def _more(pairs: list[Any], complete: bool = True) -> str:
    extra = len(pairs) - NAMED_PAIRS
    if not complete:
        if extra > 0:
            return f"; and {extra} or more overlapping pattern(s)"
        return "; maybe more (not all compared: lanes conflicts)"
    return f"; and {extra} more overlapping pattern(s)" if extra > 0 else ""


def _unchecked(kind: str, text: str, refs: dict[str, Any]) -> dict[str, Any]:
    """The shorter item when the patterns were too many to compare in time."""
    return {
        "kind": kind,
        "text": f"{text} (too many patterns to compare with yours in time: lanes conflicts)",
        **refs,
        "compared_all": False,
    }


def _overlap_began(
    current: LiveProject,
    mine: LiveSession,
    session: dict[str, Any],
    before: LiveSession | None,
    deadline: float,
) -> dict[str, Any] | None:
    if session["session_id"] == mine.id or session["agent_name"] == mine.agent_name:
        return None
    who = session.get("display_name") or session["agent_name"]
    now = list(session.get("declared_files") or [])
    had = set(before.declared_files) if before is not None else set()
    refs: dict[str, Any] = {
        "session_id": session["session_id"],
        "agent_name": session["agent_name"],
    }
    began, complete = _pairs(mine.declared_files, [p for p in now if p not in had], deadline)
    area = session.get("declared_area")
    shares_area = bool(area) and area == mine.declared_area
    shared_before = before is not None and before.declared_area == area
    if began:
        verb = "now edits" if _literal(began[0][1]) else "now claims"
        named = "; ".join(_pair_text(*pair) for pair in began[:NAMED_PAIRS])
        return {
            "kind": "overlap.began",
            "text": f"{who} {verb} {named}{_more(began, complete)}",
            **refs,
            **_pair_refs(began, complete),
        }
    if not complete:
        return _unchecked("overlap.began", f"{who} changed claims that may overlap yours", refs)
    if shares_area and not shared_before:
        return {
            "kind": "area.shared",
            "text": f"{who} now works in your area {area!r}, for certain",
            **refs,
            "area": area,
            "certain": True,
        }
    ended, complete = _pairs(mine.declared_files, [p for p in had if p not in set(now)], deadline)
    if ended:
        lead = f"{who} no longer claims"
        return _freed(current, mine, lead, ended, complete, refs, session["session_id"], deadline)
    if not complete:
        return _unchecked("overlap.ended", f"{who} dropped claims that may overlap yours", refs)
    return None


def _edits_meet(
    mine: LiveSession, session: dict[str, Any], before: LiveSession | None, margin: int
) -> dict[str, Any] | None:
    """Their edits now meet mine on a file both edited (SPEC "Line-level claims": graded
    ``lines``, a merge conflict ahead), and did not before this change."""
    if session["session_id"] == mine.id or not mine.edits or not session.get("edits"):
        return None
    theirs = line_claims.of_wire(session.get("edits"))
    earlier = before.edits if before is not None else {}
    for path in sorted(theirs.keys() & mine.edits.keys()):
        grade, same = grade_file(mine.edits[path], theirs[path], margin)
        if grade != LINES:
            continue
        if path in earlier and grade_file(mine.edits[path], earlier[path], margin)[0] == LINES:
            continue  # they met already: said then
        who = session.get("display_name") or session["agent_name"]
        how = (
            f"lines {_ranges_text(theirs[path].ranges)} meet yours "
            f"({_ranges_text(mine.edits[path].ranges)})"
            if same
            else "another base than yours (line numbers not comparable)"
        )
        return {
            "kind": "edits.meet",
            "text": f"{who}'s edits to {path} on {how}: a merge conflict ahead "
            f"(coordinate: lanes message send {who} ...)",
            "session_id": session["session_id"],
            "agent_name": session["agent_name"],
            "path": path,
            "grade": LINES,
            "same_base": same,
        }
    return None


def _ranges_text(ranges: Iterable[tuple[int, int]]) -> str:
    return ", ".join(
        f"after {s - 1}" if e < s else (f"{s}" if s == e else f"{s}-{e}") for s, e in ranges
    )


def _overlap_ended(
    current: LiveProject,
    mine: LiveSession,
    data: dict[str, Any],
    before: LiveSession | None,
    deadline: float,
) -> dict[str, Any] | None:
    if before is None or data["session_id"] == mine.id or before.agent_name == mine.agent_name:
        return None
    how = {"timed_out": "timed out", "superseded": "checked in again"}.get(
        data.get("status", ""), "checked out"
    )
    ended, complete = _pairs(mine.declared_files, before.declared_files, deadline)
    refs = {"session_id": data["session_id"], "agent_name": before.agent_name}
    lead = f"{shown_name(before)} {how}"
    if not ended:
        if not complete:
            text = f"{lead}: its claims may have overlapped yours"
            return _unchecked("overlap.ended", text, refs)
        return None
    return _freed(current, mine, f"{lead}:", ended, complete, refs, data["session_id"], deadline)


def _freed(
    current: LiveProject,
    mine: LiveSession,
    lead: str,
    pairs: Pairs,
    complete: bool,
    refs: dict[str, Any],
    gone: str,
    deadline: float,
) -> dict[str, Any]:
    m, t, o = pairs[0]
    # Free unless a live third session still claims the example (the detector's answer,
    # by the deadline: past it, not known to be free). No third session: free, unasked.
    third = any(
        s.id not in (mine.id, gone) and s.agent_name != mine.agent_name
        for s in current.sessions.values()
    )
    try:
        still = (
            []
            if not third
            else [
                _shown(current, c.session_id, c.agent_name)
                for c in current.find(
                    list(current.sessions.values()),
                    paths=[o.example],
                    exclude_session_id=mine.id,
                    deadline=max(deadline, time.monotonic() + 0.01),
                    max_files=1,
                )
                if c.session_id != gone and c.agent_name != mine.agent_name
            ]
        )
        tail = f"{', '.join(still[:3])} still claims it" if still else "it is free"
    except SearchTooLong:
        still = ["?"]
        tail = "others may still claim it (lanes conflicts)"
    text = f"{lead} {t}, which you claim ({m}): {tail}{_more(pairs, complete)}"
    return {
        "kind": "overlap.ended",
        "text": text,
        **refs,
        **_pair_refs(pairs, complete),
        "free": not still,
    }


def _paths_text(paths: Iterable[str], named: int = 3) -> str:
    listed = list(paths)
    more = f" and {len(listed) - named} more" if len(listed) > named else ""
    return ", ".join(listed[:named]) + more


def _granted(mine: LiveSession, data: dict[str, Any]) -> dict[str, Any] | None:
    """Its wait for a lane was granted: the paths are in its claims now."""
    entry = data.get("entry") or {}
    if entry.get("session_id") != mine.id:
        return None
    paths = entry.get("paths") or []
    return {
        "kind": "claim.granted",
        "text": f"granted: {_paths_text(paths)} is yours now (you waited "
        f"{data.get('waited_seconds', 0):.0f} s; it joined your claims): go ahead and edit",
        "queue_id": entry.get("queue_id"),
        "paths": paths,
        "waited_seconds": data.get("waited_seconds"),
    }


def _wait_timed_out(mine: LiveSession, data: dict[str, Any]) -> dict[str, Any] | None:
    """Its wait timed out (a cancelled wait is its own doing; an ended one ended with it)."""
    entry = data.get("entry") or {}
    if entry.get("session_id") != mine.id or data.get("reason") != "timed_out":
        return None
    paths = entry.get("paths") or []
    return {
        "kind": "queue.timed_out",
        "text": f"your wait for {_paths_text(paths)} timed out after "
        f"{entry.get('timeout_seconds')} s without a grant: wait again (lanes wait "
        f"{' '.join(paths[:3])}), ask the holder (lanes ask), or work on other files",
        "queue_id": entry.get("queue_id"),
        "paths": paths,
    }


def _waits_for_yours(
    mine: LiveSession, entry: dict[str, Any], deadline: float
) -> dict[str, Any] | None:
    """Another agent now waits for paths this session claims."""
    if entry.get("session_id") == mine.id or entry.get("agent_name") == mine.agent_name:
        return None
    pairs, _ = _pairs(mine.declared_files, entry.get("paths") or [], deadline)
    pairs = [p for p in pairs if p[2].certain]
    if not pairs:
        return None
    who = entry.get("display_name") or entry.get("agent_name")
    waiting = sorted({t for _, t, _ in pairs})
    return {
        "kind": "queue.waiting",
        "text": f"{who} is waiting for {_paths_text(waiting)}, which you claim: release "
        f"what you are done with (lanes release {' '.join(waiting[:3])})",
        "queue_id": entry.get("queue_id"),
        "agent_name": entry.get("agent_name"),
        "paths": waiting,
    }


def _asked_to_release(mine: LiveSession, data: dict[str, Any]) -> dict[str, Any] | None:
    """Another agent asks this session to release paths."""
    if data.get("to_session_id") != mine.id:
        return None
    who = data.get("from_display_name") or data.get("from_agent_name")
    reason = " ".join(str(data.get("reason") or "").split())
    if len(reason) > REASON_CHARS:
        reason = reason[:REASON_CHARS] + "…"
    held = data.get("held") or data.get("paths") or []
    return {
        "kind": "release.requested",
        "text": f"{who} asks you to release {_paths_text(held)}: {reason} (answer: lanes "
        f"release {' '.join(held[:3])}, or lanes message send {who} ...)",
        "from": data.get("from_agent_name"),
        "from_display_name": who,
        "paths": held,
    }


def _release_answered(
    current: LiveProject,
    mine: LiveSession,
    holder_id: str,
    before: LiveSession | None,
    after: dict[str, Any] | None,
) -> dict[str, Any] | None:
    """The holder this session asked to release paths let go of some of them (narrowed
    its claims, or ended)."""
    asked = current.asked.get((mine.id, holder_id))
    if asked is None or before is None:
        return None
    now = set((after or {}).get("declared_files") or [])
    dropped = [p for p in before.declared_files if p not in now]
    freed = [h for h in asked.get("held") or [] if h in dropped]
    if not freed:
        return None
    who = shown_name(before)
    queued = any(w["session_id"] == mine.id for w in current.waiting.values())
    tail = (
        "you are queued: it is granted to you in turn"
        if queued
        else f"take it: lanes wait {' '.join(freed[:3])}"
    )
    how = "released" if after is not None else "ended its session and so released"
    return {
        "kind": "release.answered",
        "text": f"{who} {how} {_paths_text(freed)}, which you asked for: {tail}",
        "session_id": holder_id,
        "agent_name": before.agent_name,
        "paths": freed,
    }


def _shown(current: LiveProject, session_id: str, agent_name: str) -> str:
    """The display name of a session the projection knows, else ``agent_name``."""
    known = current.sessions.get(session_id)
    return shown_name(known) if known is not None else agent_name


def _message(
    current: LiveProject, mine: LiveSession, message: dict[str, Any]
) -> dict[str, Any] | None:
    to = message.get("to")
    sender = message.get("from")
    if not (to == mine.agent_name or (to == "broadcast" and sender != mine.agent_name)):
        return None
    body = " ".join(str(message.get("body") or "").split())
    if len(body) > 500:
        body = body[:500] + "…"
    whom = "everyone" if to == "broadcast" else "you"
    if message.get("from_kind") == "human":
        shown = f"{sender} (a person)"
    else:
        sending = current.sessions.get(str(message.get("from_session_id")))
        shown = shown_name(sending) if sending is not None else str(sender)
    kind = message.get("type") or "message"
    label = "" if kind == "message" else f" ({kind})"
    return {
        "kind": "message",
        "text": f"{shown} to {whom}{label}, message {message.get('message_id')}: {body}",
        "message_id": message.get("message_id"),
        "from": sender,
        "to": to,
        "thread_id": message.get("thread_id"),
    }


def _my_task(current: LiveProject, mine: LiveSession, before: int) -> dict[str, Any] | None:
    """The task the session was working on before offset ``before``, as the newest event
    about it then showed it."""
    for recent in reversed(current.recent):
        if recent.offset >= before:
            continue
        task = recent.data.get("task") if recent.type.startswith("task.") else None
        if isinstance(task, dict):
            claimed = task.get("claimed_by") or {}
            if claimed.get("session_id") == mine.id and task.get("status") == "in_progress":
                return task
    return None


def _waiting_on(
    current: LiveProject, mine: LiveSession, dependency: str, before: int
) -> dict[str, Any] | None:
    """A task of the session's agent (it created or claimed it) that depends on
    ``dependency``, as the newest event about it before offset ``before`` showed it."""
    seen: set[str] = set()
    for recent in reversed(current.recent):
        task = recent.data.get("task") if recent.type.startswith("task.") else None
        if recent.offset >= before or not isinstance(task, dict) or task["task_id"] in seen:
            continue
        seen.add(task["task_id"])
        claimed = task.get("claimed_by") or {}
        ours = task.get("created_by") == mine.agent_name or claimed.get("session_id") == mine.id
        if ours and dependency in (task.get("depends_on") or []) and task["status"] != "done":
            return task
    return None


def _task(current: LiveProject, mine: LiveSession, recent: Recent) -> dict[str, Any] | None:
    kind, data = recent.type, recent.data
    actor = data.get("agent_name")
    if actor == mine.agent_name:
        return None  # its own doing
    task = data.get("task") if isinstance(data.get("task"), dict) else None
    if kind == "task.claimed" and task:
        claimed = task.get("claimed_by") or {}
        if claimed.get("session_id") == mine.id:
            return {
                "kind": "task.assigned",
                "text": f"task {task['task_id']} ({task['title']}) is now yours",
                "task_id": task["task_id"],
            }
        return None
    if kind == "task.note":
        mine_task = _my_task(current, mine, recent.offset)
        if mine_task is None or mine_task["task_id"] != data.get("task_id"):
            return None
        note = " ".join(str((data.get("note") or {}).get("body") or "").split())[:300]
        return {
            "kind": "task.note",
            "text": f"{actor or 'someone'} noted on your task {data['task_id']}: {note}",
            "task_id": data["task_id"],
        }
    if kind == "task.status" and task and data.get("to") == "done":
        waiting = _waiting_on(current, mine, task["task_id"], recent.offset)
        if waiting is not None:
            return {
                "kind": "task.dependency_done",
                "text": f"task {task['task_id']} ({task['title']}), which your task "
                f"{waiting['task_id']} ({waiting['title']}) depends on, is done",
                "task_id": waiting["task_id"],
                "dependency_id": task["task_id"],
            }
        return None
    if kind in ("task.released", "checkpoint.resolved"):
        if _my_task(current, mine, recent.offset) is not None:
            return None  # busy: a task ready for it is one it could take
        if kind == "task.released" and task:
            return {
                "kind": "task.ready",
                "text": f"task {task['task_id']} ({task['title']}) is free to claim "
                "(see lanes tasks ready)",
                "task_id": task["task_id"],
            }
        unblocked = data.get("unblocked_task_ids") or []
        if unblocked:
            return {
                "kind": "task.ready",
                "text": f"checkpoint {data['checkpoint'].get('name')!r} passed: "
                f"{len(unblocked)} task(s) unblocked ({', '.join(unblocked[:5])})",
                "task_ids": unblocked,
            }
    return None


def _lease_free(
    ctx: ServiceContext, project: Project, mine: LiveSession, lease: dict[str, Any], offset: int
) -> dict[str, Any] | None:
    assert project.id is not None
    resource = lease.get("resource")
    if not resource or not ctx.lease_refusals.freed(project.id, resource, mine.id, offset):
        return None
    return {
        "kind": "lease.free",
        "text": f"the lease on {resource}, which you were refused, is free "
        f"({lease.get('agent_name')}'s ended)",
        "resource": resource,
    }


def _consensus(mine: LiveSession, kind: str, data: dict[str, Any]) -> dict[str, Any] | None:
    request = data.get("consensus")
    if not isinstance(request, dict):
        return None
    refs = {"consensus_id": request.get("consensus_id")}
    if kind == "consensus.created" and mine.agent_name in (request.get("eligible_voters") or []):
        return {
            "kind": "consensus.vote_requested",
            "text": f"{request.get('requester')} asks for your vote on {request.get('action')!r}"
            f" (consensus {request.get('consensus_id')}): {request.get('reason')}",
            **refs,
        }
    if kind in ("consensus.approved", "consensus.rejected", "consensus.expired") and (
        request.get("requester_session_id") == mine.id
    ):
        outcome = kind.split(".", 1)[1]
        return {
            "kind": "consensus.outcome",
            "text": f"your request {request.get('action')!r} was {outcome}",
            "outcome": outcome,
            **refs,
        }
    return None


# -- the summary -----------------------------------------------------------------------------


async def summary(
    ctx: ServiceContext, project: Project, current: LiveProject, mine: LiveSession
) -> dict[str, Any]:
    """One item for the current state: the overlaps with the caller's claims now, who
    else is live, and the unread messages (the one table read, on this path only)."""
    from agentlanes.services.coordination.messages import unread_count

    live = await current.live(ctx.liveness, utcnow())
    # As a check-in's search: in a worker thread, by conflict_search_seconds, a few
    # overlaps per session; past the deadline the summary says so and names none.
    try:
        found = await current.search(
            live,
            budget=ctx.settings.conflict_search_seconds,
            max_files=ctx.settings.answer_max_files,
            declared_area=mine.declared_area,
            patterns=mine.declared_files,
            exclude_session_id=mine.id,
            exclude_agent_name=mine.agent_name,
            edits=mine.edits,
            margin=project.line_margin,
        )
        compared = True
    except SearchTooLong:
        found, compared = [], False
    others = sum(1 for s in live if s.id != mine.id)
    me = shown_name(mine)
    me = me if me == mine.agent_name else f"{me} ({mine.agent_name})"
    parts = [f"you are {me}; {others} other live session(s)"]
    if not compared:
        parts.append("your claims are too many to compare with theirs in time: lanes conflicts")
    for c in found[:SUMMARY_SESSIONS]:
        if c.overlapping_files:
            f = sorted(c.overlapping_files, key=lambda f: not f.certain)[0]
            sure = "for certain" if f.certain else f"only if {f.if_directory} is a directory"
            graded = {
                LINES: "; your edits meet theirs: a merge conflict ahead",
                "file": "; both edited, apart: git merges them",
            }.get(c.grade or "", "")
            parts.append(
                f"{_shown(current, c.session_id, c.agent_name)} claims {f.their_pattern}, "
                f"which you claim ({f.pattern}), "
                f"{sure}{graded}"
            )
        else:
            who = _shown(current, c.session_id, c.agent_name)
            parts.append(f"{who} works in your area {c.declared_area!r}")
    if len(found) > SUMMARY_SESSIONS:
        parts.append(f"{len(found) - SUMMARY_SESSIONS} more overlap(s): lanes conflicts")
    unread = await unread_count(ctx, project, mine.agent_name)
    if unread:
        parts.append(f"{unread} unread message(s): lanes inbox")
    return {
        "cursor": cursor_of(current.offset, project.epoch),
        "kind": "summary",
        "at": iso(utcnow()),
        "text": clean("; ".join(parts)),
        "overlaps": len(found),
        "certain": any(c.certain for c in found),
        "unread_messages": unread,
        **({} if compared else {"compared_all": False}),
    }
