// The project's conflicts, from one server snapshot (GET /api/v1/conflicts), grouped by
// hotspot: the agent (or path) most pairs share is one row that opens.
//
// Events only say that conflicts may have changed (agent.checkin/agent.status carry
// `conflicts_total`, agent.conflict a capped list; older servers sent full lists): the
// snapshot is then fetched again, debounced, so a burst of events costs one request.
//
// Each pair carries a grade (SPEC "Line-level claims"): "lines" when the two sessions'
// edits of a file meet (a merge conflict ahead: it stands out and comes first), "file" when
// both edited a file but apart (git merges it: muted), "claims" when no file of the overlap
// was edited by both (as before grades existed; servers without grades send none).

import { NotFound } from "./api.js";
import { $, debounce, el } from "./dom.js";

const LIMIT = 2000;
const DEBOUNCE_MS = 200;
const MAX_WAIT_MS = 800;
const ANNOUNCE_NAMES = 3;

function pairKey(a, b) {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

// Lines first, then the claim overlaps nobody edited yet, then edits git merges cleanly.
const GRADE_RANK = { lines: 0, claims: 1, file: 2 };

function gradeRank(p) {
  return GRADE_RANK[p.grade] ?? GRADE_RANK.claims;
}

function byGrade(x, y) {
  return gradeRank(x) - gradeRank(y);
}

/** A group ranks as its most pressing pair. */
function bestRank(group) {
  return Math.min(...group.pairs.map(gradeRank));
}

/** The text of a grade's badge naming the files of that grade (but `known`, a path the
 * text names already), or null for a claims-only overlap. */
export function gradeText(grade, edits, known = null) {
  if (grade !== "lines" && grade !== "file") return null;
  const paths = (edits || []).filter((e) => e.grade === grade && e.path !== known).map((e) => e.path);
  const where = paths.length ? ` (${paths.join(", ")})` : "";
  return grade === "lines" ? `lines: merge conflict ahead${where}` : `file: git merges it${where}`;
}

function isCertain(x) {
  return x.certain !== false; // servers without the field report certain overlaps only
}

/** A pair from the snapshot, or built from an old-shape event conflict. */
function normalise(p) {
  const files = (p.overlapping_files || []).map((f) => ({ ...f, certain: isCertain(f) }));
  const certain = p.certain !== undefined ? p.certain !== false : p.overlapping_area || files.some((f) => f.certain);
  return {
    key: pairKey(p.a.session_id, p.b.session_id),
    a: p.a,
    b: p.b,
    area: p.overlapping_area ? p.declared_area || p.a.declared_area : null,
    files,
    filesTotal: p.files_total ?? files.length,
    certain,
    grade: p.grade === "lines" || p.grade === "file" ? p.grade : "claims",
    edits: Array.isArray(p.edits) ? p.edits : [],
  };
}

function pairSignature(p) {
  return JSON.stringify([p.key, p.a.agent_name, p.b.agent_name, p.area, p.certain, p.filesTotal, p.files, p.grade, p.edits]);
}

function topDir(path) {
  const parts = path.split("/");
  if (parts.length <= 1) return "(top level)";
  return `${parts.slice(0, Math.min(2, parts.length - 1)).join("/")}/`;
}

export class Conflicts {
  /** hooks: partners(Map), announce(text), select(sessionId), sessionName(id) */
  constructor(api, hooks) {
    this.api = api;
    this.hooks = hooks;
    this.pairs = new Map(); // key -> pair
    this.total = 0;
    this.truncated = false;
    this.agents = []; // per-agent counts from the server (all pairs, even past the limit)
    this.loaded = false;
    this.available = true;
    this.inflight = false;
    this.again = false;
    this.filterIds = null; // Set of session ids shown by the filters, or null for all
    this.root = $("#conflicts");
    this.groupSelect = $("#conflicts-group");
    this.refreshSoon = debounce(() => this.refresh(), DEBOUNCE_MS, MAX_WAIT_MS);
    this.groupSelect.addEventListener("change", () => this.render());
    this.root.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-select]");
      if (button) this.hooks.select(button.dataset.select);
    });
    this.root.addEventListener(
      "toggle",
      (event) => {
        const group = event.target;
        if (group.open && group.dataset.lazy) this.fillGroup(group);
      },
      true,
    );
  }

  /** Whether an agent event may change the conflicts. `changed`: what the event changed
   * of its session ({scope, edits}, from the presence). */
  affectedBy(frame, changed = {}) {
    const d = frame.data || {};
    if (frame.type === "agent.conflict") return !d.blocked;
    if (frame.type === "agent.checkout" || frame.type === "agent.timeout") {
      this.dropSession(d.session_id);
      return false;
    }
    if (frame.type !== "agent.checkin" && frame.type !== "agent.status") return false;
    if (changed.scope) return true;
    const sid = d.session && d.session.session_id;
    const known = this.countFor(sid);
    // New edits change no pair's existence, but may change the grade of the session's pairs.
    if (changed.edits && known > 0) return true;
    const told = typeof d.conflicts_total === "number" ? d.conflicts_total : Array.isArray(d.conflicts) ? d.conflicts.length : null;
    return told !== null && told !== known;
  }

  countFor(sessionId) {
    const agent = this.agents.find((a) => a.session_id === sessionId);
    return agent ? agent.partners : 0;
  }

  dropSession(sessionId) {
    let removed = 0;
    for (const [key, p] of this.pairs) {
      if (p.a.session_id === sessionId || p.b.session_id === sessionId) {
        this.pairs.delete(key);
        removed += 1;
      }
    }
    const agent = this.agents.find((a) => a.session_id === sessionId);
    if (!removed && !agent) return;
    // Past the limit some of its pairs were not listed: the server's count says how many.
    this.total = Math.max(this.pairs.size, this.total - Math.max(removed, agent ? agent.partners : 0));
    this.agents = this.truncated ? this.agents.filter((a) => a !== agent) : this.countAgents();
    this.publish();
  }

  async refresh() {
    if (this.inflight) {
      this.again = true;
      return;
    }
    this.inflight = true;
    try {
      const answer = await this.api.get(`/api/v1/conflicts?limit=${LIMIT}`);
      this.accept(answer);
    } catch (error) {
      if (error instanceof NotFound) this.unavailable();
      /* otherwise the server is away: the next event or snapshot asks again */
    } finally {
      this.inflight = false;
      if (this.again) {
        this.again = false;
        this.refreshSoon();
      }
    }
  }

  accept(answer) {
    // Most refreshes find what is shown already: then nothing is redrawn.
    const signature = JSON.stringify([answer.total, answer.pairs, answer.agents]);
    if (signature === this.signature) return;
    this.signature = signature;
    const before = this.pairs;
    this.pairs = new Map();
    for (const raw of answer.pairs || []) {
      const p = normalise(raw);
      this.pairs.set(p.key, p);
    }
    this.total = answer.total ?? this.pairs.size;
    this.truncated = Boolean(answer.truncated);
    this.agents = answer.agents || this.countAgents();
    if (this.loaded) this.announceNew(before);
    this.loaded = true;
    this.publish();
  }

  unavailable() {
    this.available = false;
    $("#conflicts-note").hidden = false;
    $("#conflicts-note").textContent = "This server has no conflicts list (GET /api/v1/conflicts).";
  }

  countAgents() {
    const counts = new Map();
    for (const p of this.pairs.values()) {
      for (const side of [p.a, p.b]) {
        const c = counts.get(side.session_id) || { ...side, partners: 0, certain_partners: 0 };
        c.partners += 1;
        if (p.certain) c.certain_partners += 1;
        counts.set(side.session_id, c);
      }
    }
    return [...counts.values()].sort((x, y) => y.partners - x.partners);
  }

  announceNew(before) {
    const fresh = [...this.pairs.values()].filter((p) => p.certain && !before.has(p.key));
    // A pair whose edits start to meet is news too, even when the overlap is not.
    const meeting = [...this.pairs.values()].filter(
      (p) => p.grade === "lines" && before.has(p.key) && before.get(p.key).grade !== "lines",
    );
    const said = [];
    if (fresh.length) {
      const lines = fresh.slice(0, ANNOUNCE_NAMES).map((p) => {
        const where = p.files[0] ? ` at ${p.files[0].example}` : p.area ? ` in area ${p.area}` : "";
        const grade = p.grade === "lines" ? " (their edits meet)" : "";
        return `${p.b.agent_name} overlaps ${p.a.agent_name}${where}${grade}`;
      });
      const more = fresh.length > ANNOUNCE_NAMES ? `, and ${fresh.length - ANNOUNCE_NAMES} more` : "";
      said.push(`New conflict${fresh.length > 1 ? "s" : ""}: ${lines.join("; ")}${more}.`);
    }
    if (meeting.length) {
      const lines = meeting.slice(0, ANNOUNCE_NAMES).map((p) => {
        const path = p.edits.find((e) => e.grade === "lines") || p.edits[0];
        return `${p.b.agent_name} and ${p.a.agent_name}${path ? ` at ${path.path}` : ""}`;
      });
      const more = meeting.length > ANNOUNCE_NAMES ? `, and ${meeting.length - ANNOUNCE_NAMES} more` : "";
      said.push(`Edits meet, a merge conflict ahead: ${lines.join("; ")}${more}.`);
    }
    if (said.length) this.hooks.announce(said.join(" "));
  }

  /** Tell the cards who they overlap, then redraw the panel. */
  publish() {
    const partners = new Map();
    const counts = new Map(this.agents.map((a) => [a.session_id, a]));
    for (const p of this.pairs.values()) {
      for (const [me, other] of [
        [p.a, p.b],
        [p.b, p.a],
      ]) {
        let info = partners.get(me.session_id);
        if (!info) {
          const c = counts.get(me.session_id);
          info = { certain: [], uncertain: [], meeting: [], total: c ? c.partners : 0, certainTotal: c ? c.certain_partners : 0 };
          partners.set(me.session_id, info);
        }
        (p.certain ? info.certain : info.uncertain).push(other.agent_name);
        if (p.grade === "lines") info.meeting.push(other.agent_name);
      }
    }
    for (const info of partners.values()) {
      // The listed pairs are every pair unless the list was cut: then the counts say more.
      const listed = info.certain.length + info.uncertain.length;
      info.total = this.truncated ? Math.max(info.total, listed) : listed;
      info.certainTotal = this.truncated ? Math.max(info.certainTotal, info.certain.length) : info.certain.length;
    }
    this.hooks.partners(partners);
    this.render();
  }

  setFilter(ids) {
    this.filterIds = ids;
    this.render();
  }

  /** Pairs the focused agent is in. */
  pairsOf(sessionId) {
    return [...this.pairs.values()].filter((p) => p.a.session_id === sessionId || p.b.session_id === sessionId);
  }

  // -- view -------------------------------------------------------------------------
  render() {
    const keep = this.filterIds;
    const pairs = [...this.pairs.values()].filter(
      (p) => !keep || keep.has(p.a.session_id) || keep.has(p.b.session_id),
    );
    // Sorted by grade (stably: the server's order stays within a grade), so the groups
    // below list the pairs whose edits meet first.
    const certain = pairs.filter((p) => p.certain).sort(byGrade);
    const uncertain = pairs.filter((p) => !p.certain).sort(byGrade);
    const by = this.groupSelect.value;
    const open = new Set([...this.root.querySelectorAll("details[open]")].map((d) => d.dataset.group));
    this.rowCache = this.rowsUsed || new Map();
    this.rowsUsed = new Map();
    const sections = [];
    if (certain.length) sections.push(this.section("Certain overlaps", "certain", certain, by, open));
    if (uncertain.length) {
      sections.push(this.section("Only if a path is a directory", "uncertain", uncertain, by, open));
    }
    const shown = this.root.children;
    if (shown.length !== sections.length || sections.some((x, i) => shown[i] !== x)) this.root.replaceChildren(...sections);
    for (const group of this.root.querySelectorAll("details[open][data-lazy]")) this.fillGroup(group);
    $("#conflicts-count").textContent = String(this.total);
    $("#conflicts-empty").hidden = pairs.length > 0;
    $("#conflicts-empty").textContent = this.pairs.size
      ? "No overlaps among the agents the filters show."
      : "No overlaps between live agents.";
    const note = $("#conflicts-note");
    if (this.available) {
      note.hidden = !this.truncated;
      note.textContent = this.truncated ? `Showing ${this.pairs.size} of ${this.total} pairs.` : "";
    }
  }

  /** A section's element, made once per kind and updated in place. */
  section(title, kind, pairs, by, open) {
    this.sections = this.sections || {};
    let sec = this.sections[kind];
    if (!sec) {
      const count = el("span", { class: "count" });
      const list = el("ul", { class: "groups" });
      sec = { node: el("section", { class: `certainty ${kind}`, "aria-label": title }, el("h3", {}, title, " ", count), list), count, list };
      this.sections[kind] = sec;
    }
    sec.count.textContent = String(pairs.length);
    const groups = by === "path" ? this.byPath(pairs) : this.byAgent(pairs);
    this.groups = new Map([...(this.groups || new Map())].filter(([id]) => !id.startsWith(`${kind}:`)));
    const rows = groups.map((g) => {
      if (g.pairs.length === 1) return this.cachedRow(`p:${g.pairs[0].key}`, pairSignature(g.pairs[0]), () => this.pairRow(g.pairs[0]));
      const id = `${kind}:${by}:${g.key}`;
      this.groups.set(id, g.pairs);
      const sig = `${g.label}|${g.detail}|${g.agents}|${g.pairs.map(pairSignature).join(",")}`;
      return this.cachedRow(`g:${id}`, sig, () => {
        const meeting = g.pairs.filter((p) => p.grade === "lines").length;
        const details = el(
          "details",
          {
            class: `group${meeting ? " grade-lines" : ""}`,
            "data-group": id,
            "data-lazy": "1",
            "data-agents": g.agents,
            "data-lines": meeting || null,
          },
          el(
            "summary",
            {},
            el("span", { class: "hot", text: g.label }),
            meeting ? el("span", { class: "grade lines", text: `lines: ${meeting} merge conflict${meeting > 1 ? "s" : ""} ahead` }) : null,
            el("span", { class: "hot-detail", text: g.detail }),
          ),
          el("ul", { class: "pairs" }),
        );
        if (open.has(id)) details.open = true;
        return el("li", { class: "group-row" }, details);
      });
    });
    // Rows that did not change are the same nodes: the list is only touched when it differs.
    const current = sec.list.children;
    const same = current.length === rows.length && rows.every((row, i) => current[i] === row);
    if (!same) sec.list.replaceChildren(...rows);
    return sec.node;
  }

  /** The row drawn last time under `key` when it showed the same thing, else a new one. */
  cachedRow(key, sig, make) {
    const hit = this.rowCache.get(key);
    if (hit && hit.sig === sig) {
      this.rowsUsed.set(key, hit);
      return hit.node;
    }
    const fresh = { sig, node: make() };
    this.rowsUsed.set(key, fresh);
    return fresh.node;
  }

  fillGroup(details) {
    const pairs = (this.groups && this.groups.get(details.dataset.group)) || [];
    $(".pairs", details).replaceChildren(...pairs.map((p) => this.pairRow(p)));
    delete details.dataset.lazy;
  }

  /** Each pair under the agent in it that has the most partners: one hotspot, one row. */
  byAgent(pairs) {
    const degree = new Map();
    for (const p of pairs) {
      for (const side of [p.a, p.b]) degree.set(side.session_id, (degree.get(side.session_id) || 0) + 1);
    }
    const groups = new Map();
    for (const p of pairs) {
      const hub = degree.get(p.b.session_id) > degree.get(p.a.session_id) ? p.b : p.a;
      let g = groups.get(hub.session_id);
      if (!g) {
        g = { key: hub.session_id, hub, pairs: [] };
        groups.set(hub.session_id, g);
      }
      g.pairs.push(p);
    }
    return [...groups.values()]
      .sort(
        (x, y) =>
          bestRank(x) - bestRank(y) ||
          y.pairs.length - x.pairs.length ||
          x.hub.agent_name.localeCompare(y.hub.agent_name),
      )
      .map((g) => {
        const others = g.pairs.map((p) => (p.a.session_id === g.hub.session_id ? p.b : p.a).agent_name);
        return {
          ...g,
          label: `${g.hub.agent_name} overlaps ${g.pairs.length} agents`,
          detail: others.slice(0, 3).join(", ") + (others.length > 3 ? ` +${others.length - 3}` : ""),
          agents: [g.hub.agent_name, ...others].join(" "),
        };
      });
  }

  byPath(pairs) {
    const groups = new Map();
    for (const p of pairs) {
      const key = p.files[0] ? topDir(p.files[0].example) : `area ${p.area}`;
      let g = groups.get(key);
      if (!g) {
        g = { key, pairs: [], names: new Set() };
        groups.set(key, g);
      }
      g.pairs.push(p);
      g.names.add(p.a.agent_name).add(p.b.agent_name);
    }
    return [...groups.values()]
      .sort((x, y) => bestRank(x) - bestRank(y) || y.pairs.length - x.pairs.length || x.key.localeCompare(y.key))
      .map((g) => ({
        ...g,
        label: `${g.key} — ${g.pairs.length} pairs`,
        detail: `${g.names.size} agents`,
        agents: [...g.names].join(" "),
      }));
  }

  pairRow(p) {
    const file = p.files[0];
    const who = (side) =>
      el("button", { type: "button", class: "link", "data-select": side.session_id, text: side.agent_name });
    const grade = gradeText(p.grade, p.edits);
    return el(
      "li",
      {
        class: `pair grade-${p.grade}${p.certain ? "" : " uncertain"}`,
        "data-pair": `${p.a.agent_name}|${p.b.agent_name}`,
        "data-agents": `${p.a.agent_name} ${p.b.agent_name}`,
        "data-grade": p.grade,
      },
      el("p", { class: "who" }, who(p.a), " ⟷ ", who(p.b)),
      grade ? el("p", { class: `grade ${p.grade}`, text: grade }) : null,
      file
        ? el(
            "p",
            { class: "where" },
            "both claim ",
            el("code", { class: "example", text: file.example }),
            el("span", { class: "why", text: ` (${file.pattern} vs ${file.their_pattern})` }),
            p.filesTotal > 1 ? el("span", { class: "more", text: ` +${p.filesTotal - 1} more` }) : null,
          )
        : null,
      file && !file.certain && file.if_directory
        ? el("p", { class: "ifdir" }, "only if ", el("code", { text: file.if_directory }), " is a directory")
        : null,
      p.area ? el("p", { class: "where" }, "same work area ", el("code", { text: p.area })) : null,
    );
  }
}
