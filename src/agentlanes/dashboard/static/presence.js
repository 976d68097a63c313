// Live agents as cards, kept current from events.
//
// Events only mark what changed; the cards are redrawn once per animation frame, and only
// the changed ones. Past VIRTUAL_FROM cards the list is virtualised: cards get a fixed
// height and only the rows in (or near) the visible part of the list exist in the page.

import { $, ago, el, frameBatcher, shownName } from "./dom.js";
import { liveness, parseTimes } from "./liveness.js";

const LEAVE_MS = 900; // how long a departing card stays, fading out
const ENDED = { "agent.checkout": "checked out", "agent.timeout": "timed out" };
export const VIRTUAL_FROM = 100;
const CARD_MIN_WIDTH = 250;
const ROW_HEIGHT = 150; // a virtual card is 140 px high, plus the gap
const GAP = 10;
const OVERSCAN_ROWS = 2;
const PARTNERS_NAMED = 3;

function byStart(a, b) {
  return (a.started_at || "").localeCompare(b.started_at || "") || a.agent_name.localeCompare(b.agent_name);
}

function editsKey(edits) {
  return JSON.stringify(edits || []);
}

/** "edited 2 files" and the paths (one a line, for a tooltip), or null without edits. */
export function editsSummary(edits) {
  const files = (edits || []).map((e) => e.path);
  if (!files.length) return null;
  return { text: `edited ${files.length} file${files.length > 1 ? "s" : ""}`, title: files.join("\n") };
}

/** Range claims as read: "src/auth.py#Login.check (lines 40-58)" (SPEC Line-level claims). */
export function claimLabels(claims) {
  return (claims || []).map((c) => {
    const lines = (c.ranges || []).map(([a, b]) => (b < a ? `after ${a - 1}` : a === b ? `${a}` : `${a}-${b}`));
    return `${c.symbol ? `${c.path}#${c.symbol}` : c.path} (lines ${lines.join(", ")})`;
  });
}

function samePartners(a, b) {
  if (!a || !b) return a === b;
  return (
    a.total === b.total &&
    a.certainTotal === b.certainTotal &&
    a.certain.join("\n") === b.certain.join("\n") &&
    (a.meeting || []).join("\n") === (b.meeting || []).join("\n") &&
    a.uncertain.join("\n") === b.uncertain.join("\n")
  );
}

export class Presence {
  /** hooks: select(sessionId), changed(kind) with kind "scope" | "list" */
  constructor(api, hooks) {
    this.api = api;
    this.hooks = hooks;
    this.sessions = new Map(); // session_id -> session view
    this.order = []; // live session ids, oldest first
    this.shown = []; // the ids that pass the filter, in order
    this.cards = new Map(); // session_id -> <li> in the page
    this.leaving = new Map(); // session_id -> timer
    this.dirty = new Set();
    this.listDirty = true;
    this.partners = new Map(); // session_id -> {certain: [names], uncertain: [names], total}
    this.filter = () => true;
    this.filterUsesTime = false;
    this.selected = null;
    this.intervalMs = 0; // the project's heartbeat interval, when known
    this.list = $("#agents");
    this.scroller = $("#agents-scroll");
    this.virtual = false;
    this.schedule = frameBatcher(() => this.render());
    // The window's geometry is read when it changes (scroll, resize), never while drawing:
    // reading it after the page changed would force a layout in every frame.
    this.view = { top: 0, width: 0, height: 0 };
    this.scroller.addEventListener(
      "scroll",
      () => {
        this.view.top = this.scroller.scrollTop;
        if (this.virtual) this.schedule();
      },
      { passive: true },
    );
    new ResizeObserver(() => {
      this.view.width = this.list.clientWidth;
      this.view.height = this.scroller.clientHeight;
      if (this.virtual) this.schedule();
    }).observe(this.scroller);
    this.list.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-select]");
      if (button) this.hooks.select(button.dataset.select);
    });
  }

  // -- state ------------------------------------------------------------------------
  replace(sessions) {
    this.sessions = new Map();
    for (const s of sessions) {
      parseTimes(s);
      this.sessions.set(s.session_id, s);
    }
    this.order = [...this.sessions.values()].sort(byStart).map((s) => s.session_id);
    for (const card of this.cards.values()) card.remove();
    this.cards.clear();
    this.listDirty = true;
    this.hooks.changed("scope");
    this.schedule();
  }

  /** Apply an agent event; says whether a session's claim (area or files) changed, and
   * whether its reported edits did (they decide the grade of its overlaps). */
  apply(frame) {
    const d = frame.data || {};
    switch (frame.type) {
      case "agent.checkin":
      case "agent.status":
        if (d.session) return this.upsert(d.session);
        return { scope: false, edits: false };
      case "agent.checkout":
      case "agent.timeout":
        this.remove(d.session_id, d.status === "superseded" ? "superseded" : ENDED[frame.type]);
        return { scope: true, edits: false };
      default:
        return { scope: false, edits: false };
    }
  }

  upsert(session) {
    const known = this.sessions.get(session.session_id);
    const merged = { ...known, ...session };
    parseTimes(merged);
    this.sessions.set(session.session_id, merged);
    if (!known) {
      this.insertInOrder(merged);
      this.listDirty = true;
    }
    this.dirty.add(session.session_id);
    this.schedule();
    const scopeChanged =
      !known ||
      known.declared_area !== merged.declared_area ||
      (known.declared_files || []).join("\n") !== (merged.declared_files || []).join("\n") ||
      claimLabels(known.claims).join("\n") !== claimLabels(merged.claims).join("\n");
    if (scopeChanged) this.hooks.changed("scope");
    // A view without the field (an older server) leaves the edits as they were.
    const editsChanged = known ? editsKey(known.edits) !== editsKey(merged.edits) : Boolean((merged.edits || []).length);
    return { scope: scopeChanged, edits: editsChanged };
  }

  insertInOrder(session) {
    // Nearly always the newest: search from the end.
    let i = this.order.length;
    while (i > 0 && byStart(this.sessions.get(this.order[i - 1]), session) > 0) i -= 1;
    this.order.splice(i, 0, session.session_id);
  }

  remove(sessionId, reason) {
    if (!this.sessions.has(sessionId)) return;
    this.sessions.delete(sessionId);
    this.partners.delete(sessionId);
    const i = this.order.indexOf(sessionId);
    if (i >= 0) this.order.splice(i, 1);
    this.listDirty = true;
    this.hooks.changed("scope");
    const card = this.cards.get(sessionId);
    if (card && !this.virtual && !this.leaving.has(sessionId)) {
      card.dataset.state = "leaving";
      $(".beat", card).textContent = reason;
      this.leaving.set(
        sessionId,
        setTimeout(() => {
          card.remove();
          if (this.cards.get(sessionId) === card) this.cards.delete(sessionId);
          this.leaving.delete(sessionId);
          this.schedule();
        }, LEAVE_MS),
      );
    }
    this.schedule();
  }

  /** Heartbeats write no event: the presence poll brings their times. */
  refreshHeartbeats(sessions) {
    for (const fresh of sessions) {
      const known = this.sessions.get(fresh.session_id);
      if (!known || known.last_heartbeat_at === fresh.last_heartbeat_at) continue;
      known.last_heartbeat_at = fresh.last_heartbeat_at;
      known.expires_at = fresh.expires_at;
      parseTimes(known);
    }
    this.updateBeats();
  }

  /** Who each session overlaps, from the conflicts snapshot. */
  setPartners(partners) {
    const before = this.partners;
    this.partners = partners;
    for (const id of new Set([...before.keys(), ...partners.keys()])) {
      const a = before.get(id);
      const b = partners.get(id);
      if (!samePartners(a, b)) this.dirty.add(id);
    }
    this.listDirty = true; // the "in conflict" filter may change
    this.schedule();
  }

  setFilter(filter, usesTime = false) {
    this.filter = filter;
    this.filterUsesTime = usesTime;
    this.listDirty = true;
    this.schedule();
  }

  setSelected(sessionId) {
    const before = this.selected;
    this.selected = sessionId;
    if (before) this.dirty.add(before);
    if (sessionId) this.dirty.add(sessionId);
    this.schedule();
  }

  stateOf(session) {
    return liveness(session, this.api.serverNow(), this.intervalMs).state;
  }

  shortestTtlMs() {
    let shortest = Infinity;
    for (const s of this.sessions.values()) shortest = Math.min(shortest, s._expires - s._last);
    return Number.isFinite(shortest) ? shortest : Infinity;
  }

  // -- view -------------------------------------------------------------------------
  render() {
    if (this.listDirty) {
      this.shown = this.order.filter((id) => this.filter(this.sessions.get(id), this.partners.get(id)));
      this.listDirty = false;
      this.layoutDirty = true;
    }
    const virtual = this.shown.length > VIRTUAL_FROM;
    if (virtual !== this.virtual) {
      this.virtual = virtual;
      this.list.classList.toggle("virtual", virtual);
      for (const card of this.cards.values()) card.remove();
      this.cards.clear();
      for (const timer of this.leaving.values()) clearTimeout(timer);
      this.leaving.clear();
      this.list.style.height = "";
    }
    if (virtual) this.renderWindow();
    else this.renderAll();
    this.dirty.clear();
    $("#agents-count").textContent = String(this.order.length);
    $("#agents-empty").hidden = this.shown.length > 0 || this.leaving.size > 0;
    $("#agents-empty").textContent = this.order.length ? "No agent matches the filters." : "No live agents.";
    $("#f-shown").textContent =
      this.shown.length === this.order.length ? "" : `${this.shown.length} of ${this.order.length} shown`;
    this.updateBeats();
  }

  renderAll() {
    let previous = null;
    const wanted = new Set(this.shown);
    for (const [id, card] of this.cards) {
      if (!wanted.has(id) && !this.leaving.has(id)) {
        card.remove();
        this.cards.delete(id);
      }
    }
    for (const id of this.shown) {
      let card = this.cards.get(id);
      const fresh = !card;
      if (fresh) {
        card = el("li", { class: "card" });
        this.cards.set(id, card);
      }
      if (fresh || this.dirty.has(id)) this.fillCard(card, this.sessions.get(id));
      if (card.style.top) card.style.top = card.style.left = card.style.width = "";
      // Keep order without moving nodes that are already in place (leaving cards stay put).
      let want = previous ? previous.nextElementSibling : this.list.firstElementChild;
      while (want && want.dataset.state === "leaving" && want !== card) want = want.nextElementSibling;
      if (want !== card) this.list.insertBefore(card, want);
      previous = card;
    }
  }

  renderWindow() {
    if (!this.view.width) {
      this.view.width = this.list.clientWidth;
      this.view.height = this.scroller.clientHeight;
    }
    const width = this.view.width || 800;
    const cols = Math.max(1, Math.floor((width + GAP) / (CARD_MIN_WIDTH + GAP)));
    const rows = Math.ceil(this.shown.length / cols);
    this.list.style.height = `${rows * ROW_HEIGHT}px`;
    const top = this.view.top;
    const height = this.view.height || 600;
    const firstRow = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN_ROWS);
    const lastRow = Math.min(rows - 1, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN_ROWS);
    const from = firstRow * cols;
    const to = Math.min(this.shown.length, (lastRow + 1) * cols);
    const wanted = new Map();
    for (let i = from; i < to; i++) wanted.set(this.shown[i], i);
    for (const [id, card] of this.cards) {
      if (!wanted.has(id)) {
        card.remove();
        this.cards.delete(id);
      }
    }
    const colWidth = (width - GAP * (cols - 1)) / cols;
    for (const [id, i] of wanted) {
      let card = this.cards.get(id);
      if (!card) {
        card = el("li", { class: "card" });
        this.cards.set(id, card);
        this.fillCard(card, this.sessions.get(id));
        this.list.append(card);
      } else if (this.dirty.has(id)) {
        this.fillCard(card, this.sessions.get(id));
      }
      const top = `${Math.floor(i / cols) * ROW_HEIGHT}px`;
      const left = `${(i % cols) * (colWidth + GAP)}px`;
      const w = `${colWidth}px`;
      if (card.style.top !== top) card.style.top = top;
      if (card.style.left !== left) card.style.left = left;
      if (card.style.width !== w) card.style.width = w;
    }
  }

  fillCard(card, s) {
    const info = this.partners.get(s.session_id);
    const certain = info ? info.certain.length > 0 || info.certainTotal > 0 : false;
    const uncertain = info ? !certain && (info.uncertain.length > 0 || info.total > 0) : false;
    card.dataset.session = s.session_id;
    card.dataset.agent = s.agent_name;
    card.classList.toggle("conflicted", certain);
    card.classList.toggle("maybe", uncertain);
    card.classList.toggle("selected", this.selected === s.session_id);
    // Range claims beside the patterns: the lines held of a file.
    const files = [...(s.declared_files || []), ...claimLabels(s.claims)];
    const edited = editsSummary(s.edits);
    const meeting = info ? info.meeting || [] : [];
    let partnerLine = null;
    if (info && info.total) {
      const names = [...info.certain, ...info.uncertain];
      const named = names.slice(0, PARTNERS_NAMED).join(", ");
      const more = info.total - Math.min(names.length, PARTNERS_NAMED);
      partnerLine = el(
        "p",
        { class: `partners${certain ? "" : " muted"}` },
        certain ? "overlaps " : "overlaps (if a directory) ",
        el("span", { class: "names", text: named }),
        more > 0 ? ` +${more}` : "",
      );
    }
    const parts = [
      el(
        "div",
        { class: "card-head" },
        el(
          "h3",
          { class: "name" },
          el("button", {
            type: "button",
            class: "link",
            "data-select": s.session_id,
            "aria-pressed": this.selected === s.session_id ? "true" : "false",
            title: s.agent_name,
            text: shownName(s),
          }),
        ),
        s.declared_area ? el("span", { class: "area", title: "work area", text: s.declared_area }) : null,
        // In the head, not a line of its own: a virtual card's height is fixed.
        edited ? el("span", { class: "edits", title: edited.title, text: edited.text }) : null,
        certain && meeting.length
          ? el("span", { class: "flag lines", title: `its edits meet those of ${meeting.join(", ")}: a merge conflict ahead`, text: "edits meet" })
          : null,
        certain && !meeting.length ? el("span", { class: "flag", text: "conflict" }) : null,
        uncertain ? el("span", { class: "flag maybe", text: "if dir" }) : null,
      ),
      files.length
        ? el("ul", { class: "patterns", "aria-label": "file patterns" }, files.map((f) => el("li", {}, el("code", { text: f }))))
        : el("p", { class: "patterns none", text: "no file patterns" }),
      partnerLine,
      s.status_text ? el("p", { class: "status-text", text: s.status_text }) : null,
      el("p", { class: "beat" }),
    ];
    card.replaceChildren(...parts.filter(Boolean));
    card.dataset.state = "";
  }

  /** Runs every second: ages move on, and a "stale" filter may now match others. */
  tick() {
    if (this.filterUsesTime) {
      this.listDirty = true;
      this.schedule();
    } else {
      this.updateBeats();
    }
  }

  /** Heartbeat ages and liveness of the cards in the page. */
  updateBeats() {
    const now = this.api.serverNow();
    for (const [id, card] of this.cards) {
      if (this.leaving.has(id)) continue;
      const s = this.sessions.get(id);
      if (!s) continue;
      const { state, age } = liveness(s, now, this.intervalMs);
      if (card.dataset.state !== state) card.dataset.state = state;
      const label = state === "expiring" ? " · timing out" : state === "stale" ? " · stale" : "";
      const text = `heartbeat ${ago(age)} ago${label}`;
      const beat = card.lastElementChild;
      if (beat && beat.textContent !== text) beat.textContent = text;
    }
  }
}
