// Focus and history: the filters, the selected agent (its pairs, task, leases, messages
// and a timeline read from the event log) and the sessions that recently left.

import { gradeText } from "./conflicts.js";
import { $, ago, clockTime, el } from "./dom.js";
import { describe } from "./feed.js";
import { liveness } from "./liveness.js";

const TIMELINE_SCAN = 2000; // events of the log read back for a timeline
const LOG_PAGE = 1000; // the log's largest page
const TIMELINE_MAX = 200;
const LEFT_MAX = 20;
const FILES_SHOWN = 12;

/** "lines 10–12, line 40, after line 7" or "new file": the HEAD lines an edit replaces
 * ([a+1, a] is git's pure insertion after line a). */
function rangesText(edit) {
  if (edit.base === null) return "new file";
  const inserted = (end) => (end === 0 ? "at the top" : `after line ${end}`);
  const parts = (edit.ranges || []).map(([start, end]) =>
    end < start ? inserted(end) : start === end ? `line ${start}` : `lines ${start}–${end}`,
  );
  return parts.join(", ") || "no change";
}

/** Whether an event concerns a session (or, for messages, its agent). */
function concerns(frame, sessionId, name) {
  const d = frame.data || {};
  switch (frame.type) {
    case "agent.checkin":
    case "agent.status":
      return Boolean(d.session && d.session.session_id === sessionId);
    case "agent.checkout":
    case "agent.timeout":
      return d.session_id === sessionId;
    case "agent.conflict":
      return d.session_id === sessionId || (d.conflicts || []).some((c) => c.session_id === sessionId);
    case "message.created": {
      const m = d.message || {};
      return m.from_session_id === sessionId || m.to === name;
    }
    case "message.read":
    case "message.acked":
    case "message.delivered":
      return d.agent_name === name;
    default:
      return JSON.stringify(d).includes(sessionId);
  }
}

export class Focus {
  /** board: {presence, conflicts, coordination, api, lastOffset()} */
  constructor(board) {
    this.board = board;
    this.selected = null; // {session_id, agent_name, ended?}
    this.timeline = [];
    this.left = []; // recently ended sessions, newest first
    this.root = $("#focus");
    // A constructed sheet (CSSOM), not a <style> element: the page's CSP allows no inline style.
    this.style = new CSSStyleSheet();
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, this.style];
    this.generation = 0;
    const form = $("#filters");
    form.addEventListener("input", () => this.applyFilters());
    form.addEventListener("change", () => this.applyFilters());
    form.addEventListener("reset", () => setTimeout(() => this.applyFilters(), 0));
    form.addEventListener("submit", (event) => event.preventDefault());
    $("#focus-close").addEventListener("click", () => this.select(null));
    this.root.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-select]");
      if (button) this.select(button.dataset.select);
    });
    $("#left").addEventListener("click", (event) => {
      const button = event.target.closest("button[data-left]");
      if (button) this.selectEnded(button.dataset.left);
    });
  }

  // -- filters ------------------------------------------------------------------------
  applyFilters() {
    const text = $("#f-agent").value.trim().toLowerCase();
    const area = $("#f-area").value;
    const conflicted = $("#f-conflicted").checked;
    const stale = $("#f-stale").checked;
    const { presence, conflicts } = this.board;
    const active = Boolean(text || area || conflicted || stale);
    const now = () => presence.api.serverNow();
    const keep = (s, info) =>
      (!text || s.agent_name.toLowerCase().includes(text)) &&
      (!area || s.declared_area === area) &&
      (!conflicted || Boolean(info && info.total)) &&
      (!stale || liveness(s, now(), presence.intervalMs).state !== "fresh");
    presence.setFilter(keep, stale);
    if (!active) conflicts.setFilter(null);
    else {
      const ids = new Set();
      for (const [id, s] of presence.sessions) if (keep(s, presence.partners.get(id))) ids.add(id);
      conflicts.setFilter(ids);
    }
  }

  /** The work areas in the area filter follow the live sessions. */
  refreshAreas() {
    const select = $("#f-area");
    const areas = [...new Set([...this.board.presence.sessions.values()].map((s) => s.declared_area).filter(Boolean))].sort();
    const have = [...select.options].slice(1).map((o) => o.value);
    if (have.join("\n") === areas.join("\n")) return;
    const current = select.value;
    select.replaceChildren(el("option", { value: "", text: "any" }), ...areas.map((a) => el("option", { value: a, text: a })));
    if (areas.includes(current)) select.value = current;
  }

  // -- selection ----------------------------------------------------------------------
  select(sessionId) {
    if (!sessionId) return this.clear();
    const s = this.board.presence.sessions.get(sessionId);
    const ended = this.left.find((x) => x.session_id === sessionId);
    if (!s && !ended) return this.clear();
    this.selected = s ? { session_id: s.session_id, agent_name: s.agent_name } : { ...ended, ended: true };
    this.board.presence.setSelected(sessionId);
    this.highlight(this.selected.agent_name);
    $("#focus-close").hidden = false;
    this.timeline = [];
    this.timelineLoaded = false;
    this.render();
    this.loadTimeline();
    $("#focus-title").scrollIntoView({ block: "nearest" });
  }

  selectEnded(sessionId) {
    this.select(sessionId);
  }

  clear() {
    this.selected = null;
    this.board.presence.setSelected(null);
    this.highlight(null);
    $("#focus-close").hidden = true;
    this.root.replaceChildren(
      el("p", {
        class: "empty",
        text: "Select an agent (its name on a card, in a pair or in the tree) to see its overlaps, task, leases, messages and timeline.",
      }),
    );
  }

  /** Rows about the selected agent stand out in every panel: one rule, no re-render. */
  highlight(name) {
    this.style.replaceSync(
      name ? `[data-agents~="${CSS.escape(name)}"] { outline: 2px solid var(--accent); outline-offset: 1px; }` : "",
    );
  }

  async loadTimeline() {
    const generation = ++this.generation;
    const { session_id: sid, agent_name: name } = this.selected;
    const last = this.board.lastOffset();
    let since = Math.max(0, last - TIMELINE_SCAN);
    const found = [];
    this.timelineComplete = since === 0;
    try {
      while (since < last) {
        const answer = await this.board.api.get(`/api/v1/events/log?since=${since}&limit=${LOG_PAGE}`);
        if (generation !== this.generation) return;
        const events = answer.events || [];
        for (const frame of events) if (concerns(frame, sid, name)) found.push(frame);
        if (!events.length) break;
        since = events[events.length - 1].offset;
      }
    } catch {
      /* the timeline is a nicety: show what was found */
    }
    if (generation !== this.generation) return;
    // Keep live events that arrived meanwhile.
    const seen = new Set(found.map((f) => f.offset));
    for (const f of this.timeline) if (!seen.has(f.offset)) found.push(f);
    found.sort((a, b) => a.offset - b.offset);
    this.timeline = found.slice(-TIMELINE_MAX);
    this.timelineLoaded = true;
    this.render();
  }

  /** Every live event: the timeline grows, and sessions that end join "recently left". */
  event(frame) {
    if (frame.type === "agent.checkout" || frame.type === "agent.timeout") this.noteLeft(frame);
    if (this.selected && concerns(frame, this.selected.session_id, this.selected.agent_name)) {
      this.timeline.push(frame);
      if (this.timeline.length > TIMELINE_MAX) this.timeline.shift();
      this.renderSoon();
    } else if (this.selected && frame.type.startsWith("agent.")) {
      this.renderSoon(); // its pairs may have changed
    }
  }

  noteLeft(frame) {
    const d = frame.data || {};
    if (!d.session_id || this.left.some((x) => x.session_id === d.session_id)) return;
    const reason =
      frame.type === "agent.timeout" ? "timed out" : d.status === "superseded" ? "superseded" : `checked out (${d.outcome_status || "completed"})`;
    this.left.unshift({
      session_id: d.session_id,
      agent_name: d.agent_name,
      reason,
      ended_at: d.ended_at || frame.ts,
      work_summary: d.work_summary || null,
      files_touched: d.files_touched || [],
    });
    if (this.left.length > LEFT_MAX) this.left.pop();
    this.renderLeft();
  }

  renderLeft() {
    $("#left-count").textContent = String(this.left.length);
    const now = this.board.api.serverNow();
    $("#left").replaceChildren(
      ...this.left.map((x) =>
        el(
          "li",
          { class: "gone", "data-agents": x.agent_name },
          el("button", { type: "button", class: "link", "data-left": x.session_id, text: x.agent_name }),
          el("span", {
            class: "detail",
            text: `${x.reason} · ${ago(now - Date.parse(x.ended_at))} ago${x.files_touched.length ? ` · ${x.files_touched.length} files touched` : ""}`,
          }),
          x.work_summary ? el("span", { class: "summary", text: x.work_summary }) : null,
        ),
      ),
    );
  }

  renderSoon() {
    if (this.renderQueued) return;
    this.renderQueued = true;
    setTimeout(() => {
      this.renderQueued = false;
      if (this.selected) this.render();
    }, 250);
  }

  render() {
    const sel = this.selected;
    if (!sel) return;
    const { conflicts, coordination, presence } = this.board;
    const live = presence.sessions.get(sel.session_id);
    const pairs = conflicts.pairsOf(sel.session_id);
    const task = coordination.tasks.taskOf(sel.session_id);
    const leases = coordination.leases.leasesOf(sel.session_id);
    const messages = coordination.messages.messagesOf(sel.agent_name).slice(0, 10);
    const section = (title, body) => el("section", { class: "focus-part" }, el("h3", { text: title }), body);
    const none = (text) => el("p", { class: "empty", text });
    this.root.replaceChildren(
      el(
        "p",
        { class: "focus-who" },
        el("strong", { class: "mono", text: sel.agent_name }),
        live
          ? ` · ${live.declared_area ? `area ${live.declared_area} · ` : ""}${(live.declared_files || []).join(" ") || "no file patterns"}`
          : ` · ${sel.reason || "left"}`,
      ),
      section(
        `Overlaps (${pairs.length})`,
        pairs.length
          ? el(
              "ul",
              { class: "rows" },
              pairs.map((p) => {
                const other = p.a.session_id === sel.session_id ? p.b : p.a;
                const file = p.files[0];
                const grade = gradeText(p.grade, p.edits);
                return el(
                  "li",
                  { class: `row${p.certain ? "" : " uncertain"}`, "data-grade": p.grade },
                  el("button", { type: "button", class: "link", "data-select": other.session_id, text: other.agent_name }),
                  el("span", {
                    class: "detail",
                    text: file
                      ? ` ${file.example}${file.certain ? "" : ` (if ${file.if_directory || "a path"} is a directory)`}`
                      : ` same area ${p.area}`,
                  }),
                  grade ? el("span", { class: `grade ${p.grade}`, text: grade }) : null,
                );
              }),
            )
          : none("None."),
      ),
      ...(live && (live.edits || []).length ? [section(`Edited files (${live.edits.length})`, this.editsView(live.edits))] : []),
      section("Task", task ? el("p", { text: `${task.title} (${task.state})` }) : none("No claimed task.")),
      section(
        `Leases (${leases.length})`,
        leases.length ? el("ul", { class: "rows" }, leases.map((l) => el("li", { text: `${l.resource} · token ${l.fencing_token}` }))) : none("None."),
      ),
      section(
        `Messages (${messages.length})`,
        messages.length
          ? el(
              "ul",
              { class: "rows" },
              messages.map((m) => el("li", {}, el("strong", { text: `${m.from} → ${m.to}: ` }), m.body)),
            )
          : none("None."),
      ),
      section("Timeline", this.timelineView()),
    );
  }

  /** The files the session changed against HEAD, with the lines each change replaces. */
  editsView(edits) {
    return el(
      "ul",
      { class: "rows edited" },
      edits.map((e) => el("li", { "data-path": e.path }, el("code", { text: e.path }), el("span", { class: "detail", text: ` ${rangesText(e)}` }))),
    );
  }

  timelineView() {
    if (!this.timelineLoaded && !this.timeline.length) return el("p", { class: "empty", text: "Reading the event log…" });
    if (!this.timeline.length) return el("p", { class: "empty", text: "No events of this session in the recent log." });
    const items = this.timeline.map((frame) => {
      const d = frame.data || {};
      const extra = [];
      if (frame.type === "agent.status" && d.session) {
        const scope = [d.session.declared_area, ...(d.session.declared_files || [])].filter(Boolean).join(" ");
        extra.push(el("span", { class: "detail" }, "scope: ", el("code", { text: scope || "none" })));
      }
      if (frame.type === "agent.checkout") {
        if (d.work_summary) extra.push(el("span", { class: "summary", text: d.work_summary }));
        const files = d.files_touched || [];
        if (files.length) {
          extra.push(
            el(
              "span",
              { class: "detail" },
              `files touched (${files.length}): `,
              el("code", { text: files.slice(0, FILES_SHOWN).join(" ") + (files.length > FILES_SHOWN ? " …" : "") }),
            ),
          );
        }
      }
      return el(
        "li",
        { class: "tl", "data-type": frame.type, "data-offset": frame.offset },
        el("time", { datetime: frame.ts, text: clockTime(frame.ts) }),
        el("span", { class: "text", text: describe(frame) }),
        ...extra,
      );
    });
    return el("ol", { class: "timeline" }, items);
  }
}
