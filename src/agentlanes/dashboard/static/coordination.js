// Tasks, leases and votes: read from their list endpoints, refreshed when their events
// arrive. A server without those endpoints (404) shows "not available" instead.

import { NotFound, Unauthorized } from "./api.js";
import { $, ago, el } from "./dom.js";

const DEBOUNCE_MS = 150;

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
  }

  refreshSoon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), DEBOUNCE_MS);
  }

  async refresh() {
    try {
      const data = await this.load();
      this.setAvailable(true);
      this.render(data);
    } catch (error) {
      if (error instanceof NotFound) this.setAvailable(false);
      else if (!(error instanceof Unauthorized)) {
        /* the server is away: keep what is shown, the next event or snapshot refreshes */
      }
    }
  }

  setAvailable(yes) {
    this.available = yes;
    this.root.dataset.available = yes ? "yes" : "no";
    $(".unavailable", this.root).hidden = yes;
  }
}

class TasksPanel extends Panel {
  constructor(api) {
    super(api, "panel-tasks");
  }

  async load() {
    // Claimed and stale are both in_progress; the filters keep done tasks from crowding
    // them off the page. The lists are filtered here too, for servers without filters.
    const [ready, claimed, stale] = await Promise.all([
      this.api.get("/api/v1/tasks/ready"),
      this.api.get("/api/v1/tasks?status=in_progress&stale=false"),
      this.api.get("/api/v1/tasks?status=in_progress&stale=true"),
    ]);
    return { ready: rows(ready, "tasks"), claimed: rows(claimed, "tasks"), stale: rows(stale, "tasks") };
  }

  render({ ready, claimed, stale }) {
    const open = (t) => t.status !== "done" && t.status !== "cancelled";
    this.fill("ready", ready, (t) => `priority ${t.priority ?? "–"}${t.paths && t.paths.length ? ` · ${t.paths.join(" ")}` : ""}`);
    this.fill("claimed", claimed.filter((t) => t.claimed_by && !t.stale_since && open(t)), (t) => `by ${holder(t)}`);
    this.fill("stale", stale.filter((t) => t.stale_since && open(t)), (t) => `was ${holder(t) || "?"}, who left`);
  }

  fill(name, tasks, detail) {
    $(`[data-count="${name}"]`, this.root).textContent = String(tasks.length);
    $(`[data-list="${name}"]`, this.root).replaceChildren(
      ...tasks.map((t) =>
        el(
          "li",
          { class: "task", "data-task": t.task_id },
          el("span", { class: "title", text: t.title }),
          el("span", { class: "detail", text: detail(t) }),
        ),
      ),
    );
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
    $("#leases-count").textContent = String(active.length);
    const now = this.api.serverNow();
    $("#leases").replaceChildren(
      ...active.map((l) =>
        el(
          "li",
          { class: "lease", "data-resource": l.resource },
          el("code", { class: "title", text: l.resource }),
          el("span", {
            class: "detail",
            text: `${l.agent_name} · token ${l.fencing_token} · ${ago(Date.parse(l.expires_at) - now)} left`,
          }),
        ),
      ),
    );
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
          { class: `vote status-${r.status}`, "data-consensus": r.consensus_id },
          el("span", { class: "title", text: `${r.action}${r.subject ? ` ${r.subject}` : ""}` }),
          el("span", {
            class: "detail",
            text: `${r.requester} · ${r.approvals}/${r.required_approvals} for, ${r.rejections} against · ${r.status}`,
          }),
        ),
      ),
    );
  }
}

export class Coordination {
  constructor(api) {
    this.tasks = new TasksPanel(api);
    this.leases = new LeasesPanel(api);
    this.votes = new VotesPanel(api);
  }

  refreshAll() {
    for (const panel of [this.tasks, this.leases, this.votes]) panel.refreshSoon();
  }

  /** Which panels an event changes. Agents ending release leases and claims. */
  apply(frame) {
    const kind = frame.type.split(".")[0];
    if (kind === "task" || kind === "checkpoint") this.tasks.refreshSoon();
    else if (kind === "lease") this.leases.refreshSoon();
    else if (kind === "consensus") this.votes.refreshSoon();
    else if (kind === "agent") {
      // Ready tasks depend on live sessions' claims; endings release leases and tasks.
      if (this.tasks.available !== false) this.tasks.refreshSoon();
      if (frame.type !== "agent.checkin" && frame.type !== "agent.status" && this.leases.available !== false) {
        this.leases.refreshSoon();
      }
    }
  }
}
