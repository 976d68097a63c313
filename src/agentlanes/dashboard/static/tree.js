// Where the swarm works: the repository's claimed paths as a tree.
//
// Each pattern is filed under its literal leading directories (`src/api/**` under
// src/api, `**/*.py` at the root, `web/app.py` as web/app.py). A node counts the live agents
// that claim something at or below it, and is red where two or more live agents claim it:
// filed there, or filed above it with a pattern that reaches below (`src/**`, `**/*.py`).

import { $, el, shownName } from "./dom.js";

const WILD = /[*?[\]{}]/;
const OPEN_DEPTH = 1; // nodes this deep or shallower start open
const THROTTLE_MS = 1000;

/** [literal directories..., reachesBelow] of a normalised pattern. */
export function anchor(pattern) {
  const dir = pattern.endsWith("/");
  const segments = pattern.replace(/\/+$/, "").split("/");
  const literal = [];
  for (const s of segments) {
    if (WILD.test(s)) break;
    literal.push(s);
  }
  const rest = segments.slice(literal.length);
  // What follows the literal part reaches into subdirectories when it has `**` or more
  // than one segment; a whole literal may name a directory, so it may reach below too.
  const below = dir || rest.length === 0 || rest.length > 1 || rest.some((x) => x.includes("**"));
  return { path: literal, below, dir: dir || rest.length > 0 };
}

class Node {
  constructor(name, path, depth) {
    this.name = name;
    this.path = path;
    this.depth = depth;
    this.children = new Map();
    this.here = new Map(); // session id -> [patterns filed here]
    this.reach = new Set(); // session ids with a pattern filed here that reaches below
    this.dir = false; // some pattern goes on below it, so it is a directory
    this.below = new Set(); // session ids claiming at or below
    this.hot = false;
    this.claimants = new Set(); // here or reaching from above
  }
}

export class ClaimTree {
  /** hooks: select(sessionId), sessions() -> Map */
  constructor(hooks) {
    this.hooks = hooks;
    this.root = new Node("", "", 0);
    this.open = new Set([""]);
    this.picked = null;
    this.list = $("#tree");
    this.detail = $("#tree-detail");
    this.timer = null;
    this.last = 0;
    this.list.addEventListener("click", (event) => {
      const toggle = event.target.closest("button[data-toggle]");
      if (toggle) {
        const path = toggle.dataset.toggle;
        if (this.open.has(path)) this.open.delete(path);
        else this.open.add(path);
        this.render();
        $(`button[data-toggle="${CSS.escape(path)}"]`, this.list)?.focus();
        return;
      }
      const pick = event.target.closest("button[data-node]");
      if (pick) {
        this.picked = pick.dataset.node;
        this.render();
        $(`button[data-node="${CSS.escape(this.picked)}"]`, this.list)?.focus();
      }
    });
    this.detail.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-select]");
      if (button) this.hooks.select(button.dataset.select);
    });
  }

  /** Rebuild soon (at most every THROTTLE_MS: a swarm changes scope often). */
  update() {
    if (this.timer) return;
    const wait = Math.max(0, this.last + THROTTLE_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.last = Date.now();
      this.rebuild();
      this.render();
    }, wait);
  }

  rebuild() {
    const root = new Node("", "", 0);
    for (const s of this.hooks.sessions().values()) {
      for (const pattern of s.declared_files || []) {
        const { path, below, dir } = anchor(pattern);
        let node = root;
        node.below.add(s.session_id);
        for (const name of path) {
          let child = node.children.get(name);
          if (!child) {
            child = new Node(name, node.path ? `${node.path}/${name}` : name, node.depth + 1);
            node.children.set(name, child);
          }
          node = child;
          node.below.add(s.session_id);
        }
        const filed = node.here.get(s.session_id) || [];
        filed.push(pattern);
        node.here.set(s.session_id, filed);
        if (below) node.reach.add(s.session_id);
        if (dir) node.dir = true;
      }
    }
    const mark = (node, inherited) => {
      node.claimants = new Set([...inherited, ...node.here.keys()]);
      node.hot = node.claimants.size >= 2 && node.here.size > 0;
      const passed = new Set([...inherited, ...node.reach]);
      for (const child of node.children.values()) mark(child, passed);
    };
    mark(root, new Set());
    this.root = root;
    $("#tree-count").textContent = String(this.countNodes(root) - 1);
  }

  countNodes(node) {
    let n = 1;
    for (const child of node.children.values()) n += this.countNodes(child);
    return n;
  }

  find(path) {
    if (path === "") return this.root;
    let node = this.root;
    for (const name of path.split("/")) {
      node = node.children.get(name);
      if (!node) return null;
    }
    return node;
  }

  render() {
    const rows = [];
    const walk = (node) => {
      rows.push(this.row(node));
      const isOpen = this.open.has(node.path) || node.depth < OPEN_DEPTH;
      if (!isOpen) return;
      const children = [...node.children.values()].sort((a, b) => b.below.size - a.below.size || a.name.localeCompare(b.name));
      for (const child of children) walk(child);
    };
    if (this.root.below.size) walk(this.root);
    this.list.replaceChildren(...rows);
    $("#tree-empty").hidden = rows.length > 0;
    this.renderDetail();
  }

  row(node) {
    const hasChildren = node.children.size > 0;
    const isOpen = this.open.has(node.path) || node.depth < OPEN_DEPTH;
    const label = node.path ? `${node.name}${hasChildren || node.dir ? "/" : ""}` : "(repository root)";
    const agents = node.below.size;
    return el(
      "li",
      {
        class: `node${node.hot ? " hot" : ""}${this.picked === node.path ? " picked" : ""}`,
        style: `--depth: ${node.depth}`,
        "data-path": node.path,
      },
      hasChildren && node.depth >= OPEN_DEPTH
        ? el("button", {
            type: "button",
            class: "toggle",
            "data-toggle": node.path,
            "aria-expanded": isOpen ? "true" : "false",
            "aria-label": `${isOpen ? "collapse" : "expand"} ${node.path}`,
            text: isOpen ? "▾" : "▸",
          })
        : el("span", { class: "toggle-space", "aria-hidden": "true" }),
      el(
        "button",
        { type: "button", class: "node-name", "data-node": node.path, "aria-pressed": this.picked === node.path ? "true" : "false" },
        el("code", { text: label }),
      ),
      el("span", {
        class: "node-count",
        text: `${agents} agent${agents === 1 ? "" : "s"}${node.hot ? ` · ${node.claimants.size} claim it` : ""}`,
      }),
    );
  }

  renderDetail() {
    const node = this.picked === null ? null : this.find(this.picked);
    if (!node) {
      this.detail.replaceChildren();
      return;
    }
    const sessions = this.hooks.sessions();
    const items = [];
    for (const id of node.claimants) {
      const s = sessions.get(id);
      if (!s) continue;
      const filed = node.here.get(id);
      items.push(
        el(
          "li",
          { "data-agents": s.agent_name },
          el("button", { type: "button", class: "link", "data-select": id, title: s.agent_name, text: shownName(s) }),
          " ",
          el("code", { text: (filed || this.reaching(node, id)).join(" ") }),
          filed ? null : el("span", { class: "detail", text: " (from above)" }),
        ),
      );
    }
    this.detail.replaceChildren(
      el("h3", {}, "Claimants of ", el("code", { text: node.path || "(root)" })),
      items.length ? el("ul", { class: "claimants" }, items) : el("p", { class: "empty", text: "Only claims below it." }),
    );
  }

  /** The patterns filed above `node` by a session. */
  reaching(node, id) {
    const found = [];
    let cur = this.root;
    const names = node.path ? node.path.split("/") : [];
    for (const name of names) {
      if (cur.reach.has(id)) found.push(...cur.here.get(id));
      cur = cur.children.get(name);
      if (!cur) break;
    }
    return found;
  }
}
