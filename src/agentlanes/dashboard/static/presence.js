// Live agents and the conflicts between them, kept current from events.

import { $, ago, el } from "./dom.js";

const LEAVE_MS = 900; // how long a departing card stays, fading out
const ENDED = { "agent.checkout": "checked out", "agent.timeout": "timed out" };

function pairKey(a, b) {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

function byStart(a, b) {
  return (a.started_at || "").localeCompare(b.started_at || "") || a.agent_name.localeCompare(b.agent_name);
}

export class Presence {
  constructor(api) {
    this.api = api;
    this.sessions = new Map(); // session_id -> session view
    this.conflicts = new Map(); // pair key -> {a, b, area, files}
    this.cards = new Map(); // session_id -> <li>
    this.leaving = new Map(); // session_id -> timer
    this.generation = 0;
    this.list = $("#agents");
  }

  // -- state ------------------------------------------------------------------------
  replace(sessions) {
    this.sessions = new Map(sessions.map((s) => [s.session_id, s]));
    this.conflicts.clear();
    this.render();
    this.recomputeConflicts();
  }

  apply(frame) {
    const d = frame.data || {};
    switch (frame.type) {
      case "agent.checkin":
        this.upsert(d.session);
        this.addConflicts(d.session, d.conflicts);
        break;
      case "agent.status":
        this.upsert(d.session);
        this.dropConflicts(d.session.session_id);
        this.addConflicts(d.session, d.conflicts);
        break;
      case "agent.conflict":
        if (!d.blocked && this.sessions.has(d.session_id)) {
          this.addConflicts({ session_id: d.session_id, agent_name: d.agent_name }, d.conflicts);
        }
        break;
      case "agent.checkout":
      case "agent.timeout":
        this.remove(d.session_id, d.status === "superseded" ? "superseded" : ENDED[frame.type]);
        break;
      default:
        return;
    }
    this.render();
  }

  upsert(session) {
    const known = this.sessions.get(session.session_id);
    this.sessions.set(session.session_id, { ...known, ...session });
  }

  remove(sessionId, reason) {
    this.sessions.delete(sessionId);
    this.dropConflicts(sessionId);
    const card = this.cards.get(sessionId);
    if (!card || this.leaving.has(sessionId)) return;
    card.dataset.state = "leaving";
    $(".beat", card).textContent = reason;
    this.leaving.set(
      sessionId,
      setTimeout(() => {
        card.remove();
        this.cards.delete(sessionId);
        this.leaving.delete(sessionId);
      }, LEAVE_MS),
    );
  }

  addConflicts(session, conflicts) {
    for (const c of conflicts || []) {
      if (!this.sessions.has(c.session_id) || c.session_id === session.session_id) continue;
      const key = pairKey(session.session_id, c.session_id);
      this.conflicts.set(key, {
        a: { id: session.session_id, name: session.agent_name },
        b: { id: c.session_id, name: c.agent_name },
        area: c.overlapping_area ? c.declared_area : null,
        files: c.overlapping_files || [],
      });
    }
  }

  dropConflicts(sessionId) {
    for (const [key, pair] of this.conflicts) {
      if (pair.a.id === sessionId || pair.b.id === sessionId) this.conflicts.delete(key);
    }
  }

  /** After a snapshot: ask the server what each live session overlaps (changes nothing). */
  async recomputeConflicts() {
    const generation = ++this.generation;
    const sessions = [...this.sessions.values()];
    const found = [];
    const queue = [...sessions];
    const worker = async () => {
      while (queue.length && generation === this.generation) {
        const s = queue.shift();
        try {
          const answer = await this.api.post("/api/v1/conflicts/check", {
            patterns: s.declared_files,
            declared_area: s.declared_area,
          });
          found.push([s, answer.conflicts || []]);
        } catch {
          /* a failed check leaves that session's pairs to the next events */
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    if (generation !== this.generation) return;
    for (const [s, conflicts] of found) {
      if (!this.sessions.has(s.session_id)) continue;
      for (const c of conflicts) {
        const key = pairKey(s.session_id, c.session_id);
        if (!this.conflicts.has(key)) this.addConflicts(s, [c]);
      }
    }
    this.render();
  }

  /** Heartbeats write no event: the presence poll brings their times. */
  refreshHeartbeats(sessions) {
    for (const fresh of sessions) {
      const known = this.sessions.get(fresh.session_id);
      if (!known) continue;
      known.last_heartbeat_at = fresh.last_heartbeat_at;
      known.expires_at = fresh.expires_at;
    }
    this.tick();
  }

  shortestTtlMs() {
    let shortest = Infinity;
    for (const s of this.sessions.values()) {
      shortest = Math.min(shortest, Date.parse(s.expires_at) - Date.parse(s.last_heartbeat_at));
    }
    return Number.isFinite(shortest) ? shortest : Infinity;
  }

  // -- view -------------------------------------------------------------------------
  render() {
    const inConflict = new Set();
    for (const pair of this.conflicts.values()) {
      inConflict.add(pair.a.id);
      inConflict.add(pair.b.id);
    }
    const live = [...this.sessions.values()].sort(byStart);
    let previous = null;
    for (const s of live) {
      let card = this.cards.get(s.session_id);
      if (!card) {
        card = el("li", { class: "card" });
        this.cards.set(s.session_id, card);
      }
      this.fillCard(card, s, inConflict.has(s.session_id));
      // Keep order without moving nodes that are already in place.
      const want = previous ? previous.nextElementSibling : this.list.firstElementChild;
      if (want !== card) this.list.insertBefore(card, want);
      previous = card;
    }
    for (const [id, card] of this.cards) {
      if (!this.sessions.has(id) && !this.leaving.has(id)) {
        card.remove();
        this.cards.delete(id);
      }
    }
    $("#agents-count").textContent = String(live.length);
    $("#agents-empty").hidden = live.length > 0 || this.leaving.size > 0;
    this.renderConflicts();
    this.tick();
  }

  fillCard(card, s, conflicted) {
    card.dataset.session = s.session_id;
    card.dataset.agent = s.agent_name;
    card.classList.toggle("conflicted", conflicted);
    const files = s.declared_files || [];
    const parts = [
      el(
        "div",
        { class: "card-head" },
        el("h3", { class: "name", text: s.agent_name }),
        s.declared_area ? el("span", { class: "area", title: "work area", text: s.declared_area }) : null,
        conflicted ? el("span", { class: "flag", text: "conflict" }) : null,
      ),
      files.length
        ? el("ul", { class: "patterns", "aria-label": "file patterns" }, files.map((f) => el("li", {}, el("code", { text: f }))))
        : el("p", { class: "patterns none", text: "no file patterns" }),
      s.status_text ? el("p", { class: "status-text", text: s.status_text }) : null,
      el("p", { class: "beat" }),
    ];
    card.replaceChildren(...parts.filter(Boolean));
  }

  /** Heartbeat ages: fresh, then fading as the TTL runs out. Runs every second. */
  tick() {
    const now = this.api.serverNow();
    for (const [id, card] of this.cards) {
      if (this.leaving.has(id)) continue;
      const s = this.sessions.get(id);
      if (!s) continue;
      const last = Date.parse(s.last_heartbeat_at);
      const ttl = Math.max(1000, Date.parse(s.expires_at) - last);
      const age = Math.max(0, now - last);
      const used = Math.min(1, age / ttl);
      let state = "fresh";
      if (used >= 1) state = "expiring";
      else if (used >= 0.4) state = "stale";
      card.dataset.state = state;
      // Fade from full strength at 25% of the TTL down to 65% at its end: at that floor
      // every text on the card still has a 4.5:1 contrast.
      const fade = used <= 0.25 ? 1 : 1 - 0.35 * ((used - 0.25) / 0.75);
      card.style.setProperty("--fade", fade.toFixed(2));
      const label = state === "expiring" ? " · timing out" : state === "stale" ? " · stale" : "";
      $(".beat", card).textContent = `heartbeat ${ago(age)} ago${label}`;
    }
  }

  renderConflicts() {
    const list = $("#conflicts");
    const pairs = [...this.conflicts.values()].sort((x, y) =>
      `${x.a.name}${x.b.name}`.localeCompare(`${y.a.name}${y.b.name}`),
    );
    list.replaceChildren(
      ...pairs.map((p) => {
        const file = p.files[0];
        return el(
          "li",
          { class: "pair", "data-pair": `${p.a.name}|${p.b.name}` },
          el("p", { class: "who" }, el("strong", { text: p.a.name }), " ⟷ ", el("strong", { text: p.b.name })),
          file
            ? el(
                "p",
                { class: "where" },
                "both claim ",
                el("code", { class: "example", text: file.example }),
                el("span", { class: "why", text: ` (${file.pattern} vs ${file.their_pattern})` }),
                p.files.length > 1 ? el("span", { class: "more", text: ` +${p.files.length - 1} more` }) : null,
              )
            : null,
          p.area ? el("p", { class: "where" }, "same work area ", el("code", { text: p.area })) : null,
        );
      }),
    );
    $("#conflicts-count").textContent = String(pairs.length);
    $("#conflicts-empty").hidden = pairs.length > 0;
  }
}
