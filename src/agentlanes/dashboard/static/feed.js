// The live event feed: one line per event, newest first, each offset shown once.

import { gradeText } from "./conflicts.js";
import { $, clockTime, el, frameBatcher, shownName } from "./dom.js";
import { editsSummary } from "./presence.js";

const MAX_ITEMS = 200;

/** " (overlaps 3)" from an event's count (new shape) or list (older servers). */
function overlapCount(d) {
  const n = typeof d.conflicts_total === "number" ? d.conflicts_total : (d.conflicts || []).length;
  return n ? ` (overlaps ${n})` : "";
}

/** Whether an agent.conflict event holds a conflict whose edits meet. */
function meets(d) {
  return (d.conflicts || []).some((c) => c.grade === "lines");
}

/** " — lines: merge conflict ahead (src/app.py)" for edits that meet, " (file: git merges
 * it)" for edits apart, nothing for a claim overlap. */
function gradeNote(c, file) {
  const text = gradeText(c.grade, c.edits, file && file.example);
  if (!text) return "";
  return c.grade === "lines" ? ` — ${text}` : ` (${text})`;
}

/** Every partner named (up to a few), where each overlaps, and how many more there are. */
function conflictLine(d) {
  const list = d.conflicts || [];
  const total = typeof d.conflicts_total === "number" ? d.conflicts_total : list.length;
  const shown = list.slice(0, 4).map((c) => {
    const file = (c.overlapping_files || [])[0];
    const maybe = file && file.certain === false ? ` if ${file.if_directory || "a path"} is a directory` : "";
    const where = file ? ` at ${file.example}${maybe}` : c.overlapping_area ? " (same area)" : "";
    return `${c.agent_name}${where}${gradeNote(c, file)}`;
  });
  const more = total - shown.length;
  const verb = d.blocked ? "was blocked: overlaps" : "overlaps";
  return `${d.agent_name} ${verb} ${shown.join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
}

function who(data) {
  return data.agent_name || (data.session && data.session.agent_name) || "someone";
}

/** One line of text for a person, per event type. */
export function describe(frame) {
  const d = frame.data || {};
  const task = d.task || {};
  const lease = d.lease || {};
  const vote = d.consensus || {};
  switch (frame.type) {
    case "agent.checkin": {
      const s = d.session || {};
      const files = (s.declared_files || []).join(" ");
      const scope = [s.declared_area, files].filter(Boolean).join(" · ");
      return `${shownName(s)} checked in${scope ? ` — ${scope}` : ""}${overlapCount(d)}`;
    }
    case "agent.status": {
      const s = d.session || {};
      const edited = editsSummary(s.edits);
      return `${shownName(s)} updated status${s.status_text ? `: ${s.status_text}` : ""}${edited ? ` (${edited.text})` : ""}${overlapCount(d)}`;
    }
    case "agent.conflict":
      return conflictLine(d);
    case "agent.checkout":
      return d.status === "superseded"
        ? `${shownName(d)} was superseded by a new check-in`
        : `${shownName(d)} checked out (${d.outcome_status || "completed"})`;
    case "agent.timeout":
      return `${shownName(d)} timed out (no heartbeat)`;
    case "task.created":
      return `task “${task.title}” created${d.agent_name ? ` by ${d.agent_name}` : ""}`;
    case "task.claimed":
      return `${who(d)} claimed “${task.title}”`;
    case "task.status":
      return `“${task.title}” ${d.from || "?"} → ${d.to || task.status}`;
    case "task.stale":
      return `“${task.title}” is stale (its agent left)`;
    case "task.released":
      return `“${task.title}” released${d.reason ? ` (${d.reason})` : ""}`;
    case "task.note":
      return `${who(d)} noted on a task`;
    case "lease.acquired":
      return `${lease.agent_name} took lease ${lease.resource}`;
    case "lease.renewed":
      return `${lease.agent_name} renewed ${lease.resource}`;
    case "lease.released":
      return `lease ${lease.resource} released`;
    case "lease.expired":
      return `lease ${lease.resource} expired`;
    case "consensus.created":
      return `${vote.requester} asks: ${vote.action}${vote.subject ? ` ${vote.subject}` : ""}`;
    case "consensus.vote": {
      const tally = d.consensus || d;
      const subject = vote.action ? ` on “${vote.action}”` : "";
      return `${d.agent_name || "an agent"} voted ${d.vote || ""}${subject} (${tally.approvals ?? 0} for, ${tally.rejections ?? 0} against)`;
    }
    case "checkpoint.created":
      return `checkpoint “${(d.checkpoint || {}).name || "?"}” created`;
    case "checkpoint.resolved":
      return `checkpoint “${(d.checkpoint || {}).name || "?"}” ${(d.checkpoint || {}).status || "resolved"}`;
    case "consensus.approved":
    case "consensus.rejected":
    case "consensus.expired":
      return `“${vote.action}” ${frame.type.split(".")[1]}`;
    case "message.created": {
      const m = d.message || {};
      const body = m.body ? `: ${m.body.length > 120 ? `${m.body.slice(0, 119)}…` : m.body}` : "";
      const person = m.from_kind === "human" ? " (a person)" : "";
      return `${m.sender || m.from || "?"}${person} → ${m.recipient || m.to || "?"} (${m.type || "message"})${body}`;
    }
    case "message.read":
      return `${d.agent_name} read message ${d.message_id}`;
    case "message.acked":
      return `${d.agent_name} acknowledged message ${d.message_id}`;
    case "message.delivered":
      return `${(d.message_ids || []).length} message(s) reached ${d.agent_name}'s context`;
    default:
      return frame.type;
  }
}

export class Feed {
  constructor() {
    this.list = $("#feed");
    this.filter = $("#feed-filter");
    this.seen = new Set();
    this.pending = []; // lines waiting for the next frame: a burst is one layout, not many
    this.flushSoon = frameBatcher(() => this.flush());
    this.filter.addEventListener("change", () => this.applyFilter());
  }

  flush() {
    const lines = this.pending.sort((a, b) => b.offset - a.offset);
    this.pending = [];
    const top = this.list.firstElementChild;
    const topOffset = top ? Number(top.dataset.offset ?? top.dataset.after) : -1;
    if (lines.length && (Number.isNaN(topOffset) || lines[lines.length - 1].offset > topOffset)) {
      // The usual case: every new line is newer than everything shown.
      const fragment = document.createDocumentFragment();
      for (const line of lines) fragment.append(line.item);
      this.list.prepend(fragment);
    } else {
      for (const line of lines) this.insert(line.item, line.offset);
    }
    this.trim();
  }

  /** Add an event in offset order (history may arrive after live ones). */
  add(frame, { history = false } = {}) {
    if (this.seen.has(frame.offset)) return;
    this.seen.add(frame.offset);
    const kind = frame.type.split(".")[0];
    const item = el(
      "li",
      {
        class: `ev ev-${kind}${history ? " history" : ""}${frame.type === "agent.conflict" && meets(frame.data || {}) ? " grade-lines" : ""}`,
        "data-offset": frame.offset,
        "data-type": frame.type,
      },
      el("time", { datetime: frame.ts, text: clockTime(frame.ts) }),
      el("span", { class: "type", text: frame.type }),
      el("span", { class: "text", text: describe(frame) }),
    );
    item.hidden = !this.matches(frame.type);
    if (!history) {
      this.pending.push({ offset: frame.offset, item });
      this.flushSoon();
      return;
    }
    this.insert(item, frame.offset);
    this.trim();
  }

  insert(item, offset) {
    // Newest first by offset; a note counts as just after the offset it was written at,
    // so events replayed after a reconnect go above the "connection lost" note.
    let before = null;
    for (const other of this.list.children) {
      const theirs = Number(other.dataset.offset ?? other.dataset.after);
      if (!Number.isNaN(theirs) && theirs < offset) {
        before = other;
        break;
      }
    }
    this.list.insertBefore(item, before);
  }

  /** A line that is not an event: lost connection, history gap. `after`: the last offset
   * applied when it was written. */
  note(text, after = null) {
    const now = new Date().toISOString();
    const item = el(
      "li",
      { class: "ev note", "data-note": "", "data-after": after === null ? null : after + 0.5 },
      el("time", { datetime: now, text: clockTime(now) }),
      el("span", { class: "text", text }),
    );
    this.list.prepend(item);
    this.trim();
  }

  trim() {
    while (this.list.children.length > MAX_ITEMS) {
      const last = this.list.lastElementChild;
      if (last.dataset.offset) this.seen.delete(Number(last.dataset.offset));
      last.remove();
    }
  }

  matches(type) {
    const prefix = this.filter.value;
    return !prefix || type.startsWith(prefix);
  }

  applyFilter() {
    for (const item of this.list.children) {
      if (item.dataset.type) item.hidden = !this.matches(item.dataset.type);
    }
  }
}
