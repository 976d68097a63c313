// Tasks, leases, votes, messages and hotspots: read from their list endpoints, refreshed (debounced)
// when their events arrive. A server without an endpoint (404) shows "not available".
// Leases and votes count down every second from their expiry times.

import { NotFound, Unauthorized } from "./api.js";
import { $, clockTime, countdown, el } from "./dom.js";

const DEBOUNCE_MS = 150;
// Agent events change tasks only indirectly (claims free or take paths): a swarm sends many,
// so the task board waits for a quieter moment (at most this long) before asking again.
const AGENT_DEBOUNCE_MS = 600;

function rows(answer, key) {
  if (Array.isArray(answer)) return answer;
  if (answer && Array.isArray(answer[key])) return answer[key];
  const first = answer && Object.values(answer).find(Array.isArray);
  return first || [];
}

function holder(x) {
  return (x.claimed_by && x.claimed_by.agent_name) || x.agent_name || "";
}

class Panel {
  constructor(api, id) {
    this.api = api;
    this.root = $(`#${id}`);
    this.timer = null;
    this.available = null; // unknown until the first answer
    this.data = null;
  }

  refreshSoon(wait = DEBOUNCE_MS) {
    if (this.timer && wait > DEBOUNCE_MS) return; // a refresh is already on its way
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.refresh();
    }, wait);
  }

  async refresh() {
    try {
      const data = await this.load();
      this.setAvailable(true);
      // Redraw only what changed: most refreshes after agent events find the same list.
      const signature = JSON.stringify(data);
      if (signature === this.signature) return;
      this.signature = signature;
      this.data = data;
      this.render(data);
      if (this.changed) this.changed();
    } catch (error) {
      if (error instanceof NotFound) this.setAvailable(false);
      else if (!(error instanceof Unauthorized)) {
        /* the server is away: keep what is shown, the next event or snapshot refreshes */
      }
    }
  }

  setAvailable(yes) {
    if (this.available === yes) return;
    this.available = yes;
    this.root.dataset.available = yes ? "yes" : "no";
    $(".unavailable", this.root).hidden = yes;
  }
}

/** Why a pending task is not ready, in words. */
export function waitingText(w) {
  const parts = [];
  for (const d of w.dependencies || []) parts.push(`needs “${d.title || d.task_id}” (${d.status})`);
  for (const c of w.checkpoints || []) parts.push(`gate “${c.name}” ${c.status}`);
  const claims = w.claimed_paths || [];
  if (claims.length) {
    const who = claims.map((c) => `${c.agent_name} (${c.example})`).join(", ");
    const more = (w.claimed_paths_total || claims.length) - claims.length;
    parts.push(`paths claimed by ${who}${more > 0 ? ` +${more}` : ""}`);
  }
  if (w.claimed_by) parts.push(`held by ${w.claimed_by}`);
  return parts.join(" · ");
}

class TasksPanel extends Panel {
  constructor(api) {
    super(api, "panel-tasks");
  }

  async load() {
    return rows(await this.api.get("/api/v1/board/tasks"), "tasks");
  }

  render(tasks) {
    const lists = { ready: [], waiting: [], claimed: [], stale: [], blocked: [], done: [] };
    for (const t of tasks) {
      const state = t.state === "cancelled" ? "done" : t.state;
      (lists[state] || lists.waiting).push(t);
    }
    $("#tasks-count").textContent = String(tasks.filter((t) => t.state !== "done" && t.state !== "cancelled").length);
    const prio = (t) => `priority ${t.priority ?? "–"}`;
    const paths = (t) => (t.paths && t.paths.length ? ` · ${t.paths.join(" ")}` : "");
    this.fill("ready", lists.ready, (t) => `${prio(t)}${paths(t)}`);
    this.fill("waiting", lists.waiting, (t) => waitingText(t.waiting_on || {}) || "waiting");
    this.fill("claimed", lists.claimed, (t) => `by ${holder(t)}${paths(t)}`);
    this.fill("stale", lists.stale, (t) => `was ${holder(t) || "?"}, who left`);
    this.fill("blocked", lists.blocked, (t) => `blocked by hand${t.claimed_by ? ` · was ${holder(t)}` : ""}`);
    this.fill("done", lists.done, (t) => `${t.status}${t.updated_at ? ` at ${clockTime(t.updated_at)}` : ""}`);
  }

  fill(name, tasks, detail) {
    $(`[data-count="${name}"]`, this.root).textContent = String(tasks.length);
    $(`[data-list="${name}"]`, this.root).replaceChildren(
      ...tasks.map((t) => {
        const agents = [holder(t), ...((t.waiting_on && t.waiting_on.claimed_paths) || []).map((c) => c.agent_name)];
        return el(
          "li",
          {
            class: `task state-${t.state}`,
            "data-task": t.task_id,
            "data-session": t.claimed_by ? t.claimed_by.session_id : null,
            "data-agents": agents.filter(Boolean).join(" ") || null,
          },
          el("span", { class: "title", text: t.title }),
          el("span", { class: "detail", text: detail(t) }),
        );
      }),
    );
  }

  /** The task a session is working on, if any. */
  taskOf(sessionId) {
    return (this.data || []).find((t) => t.claimed_by && t.claimed_by.session_id === sessionId && t.state === "claimed");
  }
}

class LeasesPanel extends Panel {
  constructor(api) {
    super(api, "panel-leases");
  }

  async load() {
    return rows(await this.api.get("/api/v1/leases"), "leases");
  }

  render(leases) {
    const active = leases.filter((l) => !l.status || l.status === "active");
    this.active = active;
    $("#leases-count").textContent = String(active.length);
    $("#leases").replaceChildren(
      ...active.map((l) =>
        el(
          "li",
          { class: "lease", "data-resource": l.resource, "data-agents": l.agent_name, "data-session": l.session_id },
          el("code", { class: "title", text: l.resource }),
          el(
            "span",
            { class: "detail" },
            `${l.agent_name} · token ${l.fencing_token} · `,
            el("span", { class: "left", "data-until": String(Date.parse(l.expires_at)) }),
          ),
        ),
      ),
    );
    this.tick();
  }

  tick() {
    tickCountdowns($("#leases"), this.api.serverNow(), (ms) => (ms > 0 ? `${countdown(ms)} left` : "expiring"));
  }

  leasesOf(sessionId) {
    return (this.active || []).filter((l) => l.session_id === sessionId);
  }
}

/** Rewrite each [data-until] countdown in `root` from the current (server) time. */
function tickCountdowns(root, now, text) {
  for (const node of root.querySelectorAll("[data-until]")) {
    const value = text(Number(node.dataset.until) - now);
    if (node.textContent !== value) node.textContent = value;
  }
}

class VotesPanel extends Panel {
  constructor(api) {
    super(api, "panel-votes");
  }

  async load() {
    return rows(await this.api.get("/api/v1/consensus"), "requests");
  }

  render(requests) {
    const pending = requests.filter((r) => r.status === "pending");
    const done = requests
      .filter((r) => r.status !== "pending")
      .sort((a, b) => (b.resolved_at || b.created_at || "").localeCompare(a.resolved_at || a.created_at || ""))
      .slice(0, 5);
    $("#votes-count").textContent = String(pending.length);
    $("#votes").replaceChildren(
      ...[...pending, ...done].map((r) =>
        el(
          "li",
          {
            class: `vote status-${r.status}`,
            "data-consensus": r.consensus_id,
            "data-agents": [r.requester, ...(r.votes || []).map((v) => v.agent_name)].join(" "),
          },
          el("span", { class: "title", text: `${r.action}${r.subject ? ` ${r.subject}` : ""}` }),
          el(
            "span",
            { class: "detail" },
            `${r.requester} · ${r.approvals}/${r.required_approvals} for, ${r.rejections} against · ${r.status}`,
            r.status === "pending" && r.expires_at
              ? el("span", { class: "left", "data-until": String(Date.parse(r.expires_at)) })
              : null,
          ),
        ),
      ),
    );
    this.tick();
  }

  tick() {
    tickCountdowns($("#votes"), this.api.serverNow(), (ms) => (ms > 0 ? ` · closes in ${countdown(ms)}` : " · closing"));
  }
}

class MessagesPanel extends Panel {
  constructor(api) {
    super(api, "panel-messages");
  }

  async load() {
    return rows(await this.api.get("/api/v1/board/messages?limit=200"), "messages");
  }

  render(messages) {
    $("#messages-count").textContent = String(messages.length);
    $("#message-delivery").replaceChildren(
      ...deliveryCounts(messages).map(([agent, c]) =>
        el(
          "li",
          { "data-agent": agent },
          el("strong", { text: agent }),
          ` ${c.undelivered} undelivered · ${c.delivered} delivered · ${c.read} read`,
        ),
      ),
    );
    // Threads by their latest message, newest first; messages in a thread oldest first.
    const threads = new Map();
    for (const m of messages) {
      const key = m.thread_id ? `t:${m.thread_id}` : `m:${m.message_id}`;
      if (!threads.has(key)) threads.set(key, { id: m.thread_id, items: [] });
      threads.get(key).items.unshift(m);
    }
    $("#messages").replaceChildren(
      ...[...threads.values()].map((t) =>
        el(
          "li",
          { class: "thread", "data-thread": t.id || null },
          t.id ? el("h3", { class: "thread-title" }, "thread ", el("code", { text: t.id }), ` · ${t.items.length}`) : null,
          el("ol", { class: "thread-items" }, t.items.map((m) => this.message(m))),
        ),
      ),
    );
  }

  message(m) {
    return el(
      "li",
      { class: "message", "data-message": m.message_id, "data-agents": `${m.from} ${m.to}` },
      el(
        "p",
        { class: "message-head" },
        el("strong", { text: m.from }),
        m.from_kind === "human" ? el("span", { class: "detail", text: " (a person)" }) : null,
        " → ",
        el("strong", { text: m.to }),
        el("span", { class: "detail", text: ` · ${m.type} · ${clockTime(m.created_at)}` }),
      ),
      el("p", { class: "body", text: m.body }),
      el("p", { class: "receipt detail", text: receiptText(m) }),
    );
  }

  messagesOf(name) {
    return (this.data || []).filter((m) => m.from === name || m.to === name || m.to === "broadcast");
  }
}

/** Per agent, of the messages shown: how many wait to reach its context (undelivered),
 * reached it (delivered: its news put them there), and were read. A broadcast counts for
 * the agents with a receipt of it. Sorted by agent name. */
export function deliveryCounts(messages) {
  const counts = new Map();
  const bump = (agent, key) => {
    if (!counts.has(agent)) counts.set(agent, { undelivered: 0, delivered: 0, read: 0 });
    counts.get(agent)[key] += 1;
  };
  for (const m of messages) {
    const receipts = m.receipts || [];
    if (m.to !== "broadcast" && !receipts.some((r) => r.agent_name === m.to)) bump(m.to, "undelivered");
    for (const r of receipts) bump(r.agent_name, r.read_at ? "read" : r.delivered_at ? "delivered" : "undelivered");
  }
  return [...counts.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** "unread", "read by bob", "acknowledged by bob", or for a broadcast, who did what. */
export function receiptText(m) {
  const receipts = m.receipts || [];
  const acked = receipts.filter((r) => r.acked_at).map((r) => r.agent_name);
  const read = receipts.filter((r) => r.read_at && !r.acked_at).map((r) => r.agent_name);
  if (!acked.length && !read.length) return m.to === "broadcast" ? "read by nobody yet" : "unread";
  const parts = [];
  if (acked.length) parts.push(`acknowledged by ${acked.join(", ")}`);
  if (read.length) parts.push(`read by ${read.join(", ")}`);
  return parts.join(" · ");
}

/** A hotspot's counts in words: refusals, waits and how long they took. */
export function hotspotText(h) {
  const parts = [`${h.refused} refused`, `${h.waits} waited`];
  if (h.waiting_now) parts.push(`${h.waiting_now} waiting now`);
  if (h.wait_seconds_avg != null) {
    const s = (x) => `${x < 10 ? x.toFixed(1) : Math.round(x)} s`;
    parts.push(`wait ${s(h.wait_seconds_avg)} on average, ${s(h.wait_seconds_max)} at most`);
  }
  return parts.join(" · ");
}

class HotspotsPanel extends Panel {
  constructor(api) {
    super(api, "panel-hotspots");
  }

  async load() {
    return rows(await this.api.get("/api/v1/hotspots?days=7"), "hotspots");
  }

  render(spots) {
    $("#hotspots-count").textContent = String(spots.length);
    $("#hotspots").replaceChildren(
      ...spots.map((h) =>
        el(
          "li",
          { class: "hotspot", "data-path": h.path },
          el("code", { class: "title", text: h.path }),
          el("span", { class: "detail", text: hotspotText(h) }),
        ),
      ),
    );
  }
}

export class Coordination {
  /** changed(): a panel's list changed (the focused agent's view reads them). */
  constructor(api, changed = () => {}) {
    this.tasks = new TasksPanel(api);
    this.leases = new LeasesPanel(api);
    this.votes = new VotesPanel(api);
    this.messages = new MessagesPanel(api);
    this.hotspots = new HotspotsPanel(api);
    this.panels = [this.tasks, this.leases, this.votes, this.messages, this.hotspots];
    for (const panel of this.panels) panel.changed = changed;
  }

  refreshAll() {
    for (const panel of this.panels) panel.refreshSoon();
  }

  /** Live countdowns: corrected from the expiry time every second, never decremented. */
  tick() {
    this.leases.tick();
    this.votes.tick();
  }

  /** Which panels an event changes. Agents ending release leases and claims. */
  apply(frame, scopeChanged) {
    const kind = frame.type.split(".")[0];
    if (kind === "task" || kind === "checkpoint") this.tasks.refreshSoon();
    else if (kind === "lease") this.leases.refreshSoon();
    else if (kind === "consensus") this.votes.refreshSoon();
    else if (kind === "message") this.messages.refreshSoon();
    else if (kind === "queue" || kind === "claim") this.hotspots.refreshSoon();
    else if (kind === "agent") {
      const ending = frame.type === "agent.checkout" || frame.type === "agent.timeout";
      // Ready tasks depend on live sessions' claims; endings release leases and tasks.
      if ((ending || scopeChanged) && this.tasks.available !== false) this.tasks.refreshSoon(AGENT_DEBOUNCE_MS);
      if (ending && this.leases.available !== false) this.leases.refreshSoon(AGENT_DEBOUNCE_MS);
      // A refused check-in or scope change writes no event; the next agent event shows it.
      if (this.hotspots.available !== false) this.hotspots.refreshSoon(AGENT_DEBOUNCE_MS);
    }
  }
}
