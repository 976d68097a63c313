// The dashboard: ask for the key once, then keep the board live from the event socket.

import { Api, Unauthorized, forgetKey, storeKey, storedKey } from "./api.js";
import { Conflicts } from "./conflicts.js";
import { Coordination } from "./coordination.js";
import { $, frameBatcher } from "./dom.js";
import { Feed } from "./feed.js";
import { Focus } from "./focus.js";
import { Presence } from "./presence.js";
import { LiveStream } from "./stream.js";
import { ClaimTree } from "./tree.js";

// Heartbeats write no event, so presence is polled for their times: every 3 s, or faster
// when a project's TTL is so short that 3 s would show healthy agents as stale.
const PRESENCE_POLL_MS = 3000;
const PRESENCE_POLL_MIN_MS = 500;
const HISTORY_LINES = 30;
const LEFT_HISTORY = 300; // events read back at start to fill "recently left"

class Dashboard {
  constructor(api) {
    this.api = api;
    const select = (id) => this.focus.select(id);
    this.presence = new Presence(api, {
      select,
      changed: () => {
        this.tree.update();
        this.focus.refreshAreas();
      },
    });
    this.conflicts = new Conflicts(api, {
      partners: (map) => {
        this.presence.setPartners(map);
        if (this.focus.selected) this.focus.renderSoon();
      },
      announce: (text) => announce(text),
      select,
    });
    this.tree = new ClaimTree({ select, sessions: () => this.presence.sessions });
    this.feed = new Feed();
    this.coordination = new Coordination(api, () => {
      if (this.focus && this.focus.selected) this.focus.renderSoon();
    });
    this.focus = new Focus(this);
    this.historyLoaded = false;
    this.wasLive = false;
    this.stream = new LiveStream(api, {
      snapshot: (frame, info) => this.snapshot(frame, info),
      event: (frame) => this.event(frame),
      replayed: (frame) => this.replayed(frame),
      state: (name, detail) => this.connection(name, detail),
      unauthorized: () => this.unauthorized(),
    });
  }

  lastOffset() {
    return this.stream.offset ?? 0;
  }

  start() {
    this.loadProject();
    this.stream.start();
    this.ticker = setInterval(() => this.presence.tick(), 1000);
    // Countdowns are recomputed from their expiry times four times a second, so the second
    // shown is never more than a quarter of a second late (a handful of nodes: cheap).
    this.countdowns = setInterval(() => this.coordination.tick(), 250);
    this.schedulePoll();
  }

  /** The heartbeat interval decides when a card is stale. */
  async loadProject() {
    try {
      const project = await this.api.get("/api/v1/project");
      if (project.heartbeat_interval_seconds) {
        this.presence.intervalMs = project.heartbeat_interval_seconds * 1000;
        this.presence.tick();
      }
    } catch {
      /* without it the interval is taken as a quarter of each session's TTL */
    }
  }

  schedulePoll() {
    const ttl = this.presence.shortestTtlMs();
    const every = Math.max(PRESENCE_POLL_MIN_MS, Math.min(PRESENCE_POLL_MS, ttl / 6));
    this.poller = setTimeout(async () => {
      await this.pollPresence();
      if (this.poller !== null) this.schedulePoll();
    }, every);
  }

  stop() {
    this.stream.stop();
    clearInterval(this.ticker);
    clearInterval(this.countdowns);
    clearTimeout(this.poller);
    this.poller = null;
  }

  snapshot(frame, { gap }) {
    this.presence.replace(frame.data.sessions || []);
    if (gap) this.feed.note("Missed history was no longer kept: the board was reloaded from a fresh snapshot.", frame.offset);
    this.conflicts.refresh();
    this.coordination.refreshAll();
    this.showOffset(frame.offset);
    if (!this.historyLoaded) this.loadHistory(frame.offset);
  }

  event(frame) {
    const changed = this.presence.apply(frame);
    if (frame.type.startsWith("agent.") && this.conflicts.affectedBy(frame, changed)) {
      this.conflicts.refreshSoon();
    }
    this.coordination.apply(frame, changed.scope);
    this.feed.add(frame);
    this.focus.event(frame);
    this.showOffset(frame.offset);
  }

  replayed(frame) {
    if (frame.recovered) {
      this.coordination.refreshAll();
      this.conflicts.refreshSoon();
    }
    this.showOffset(this.stream.offset);
  }

  /** The events before the snapshot: the last few in the feed for context, and the
   * sessions that ended among them in "recently left" (neither changes the board). */
  async loadHistory(offset) {
    this.historyLoaded = true;
    if (!offset) return;
    const since = Math.max(0, offset - LEFT_HISTORY);
    try {
      const answer = await this.api.get(`/api/v1/events/log?since=${since}&limit=${LEFT_HISTORY}`);
      const events = (answer.events || []).filter((frame) => frame.offset <= offset);
      for (const frame of events) {
        if (frame.type === "agent.checkout" || frame.type === "agent.timeout") this.focus.noteLeft(frame);
      }
      for (const frame of events.slice(-HISTORY_LINES)) this.feed.add(frame, { history: true });
    } catch {
      /* history is a nicety */
    }
  }

  async pollPresence() {
    if (document.hidden) return;
    try {
      const answer = await this.api.get("/api/v1/presence");
      this.presence.refreshHeartbeats(answer.sessions || []);
    } catch (error) {
      if (error instanceof Unauthorized) this.unauthorized();
    }
  }

  /** The header's offset, written once per frame (every event would relayout the header). */
  showOffset(offset) {
    if (offset === null || offset === undefined) return;
    this.shownOffset = offset;
    this.drawOffset = this.drawOffset || frameBatcher(() => ($("#offset").textContent = String(this.shownOffset)));
    this.drawOffset();
  }

  connection(name, detail) {
    const box = $("#conn");
    box.dataset.state = name;
    let text = "connecting…";
    if (name === "live") text = "live";
    else if (name === "reconnecting") {
      text = detail.inMs ? `connection lost — reconnecting in ${Math.ceil(detail.inMs / 1000)} s` : "reconnecting…";
    }
    $("#conn-text").textContent = text;
    if (name === "reconnecting" && this.wasLive) {
      this.wasLive = false;
      this.feed.note("Connection lost; reconnecting and catching up from the last event seen.", this.stream.offset);
    }
    if (name === "live" && !this.wasLive) {
      if (this.everLive) this.feed.note("Reconnected and caught up.", this.stream.offset);
      this.wasLive = true;
      this.everLive = true;
    }
  }

  unauthorized() {
    this.stop();
    forgetKey();
    showLogin("The server refused this API key. Paste a valid one.");
  }
}

/** Read a short text to screen readers (the live region is polite and atomic). */
function announce(text) {
  const region = $("#announcer");
  region.textContent = "";
  // A fresh text node after a tick, so the same words twice are still read.
  setTimeout(() => {
    region.textContent = text;
  }, 50);
}

let dashboard = null;

function showLogin(message = "") {
  $("#main").hidden = true;
  $("#forget").hidden = true;
  $("#login").hidden = false;
  $("#login-error").textContent = message;
  $("#conn").dataset.state = "idle";
  $("#conn-text").textContent = "not connected";
  $("#api-key").focus();
}

function showBoard(key) {
  $("#login").hidden = true;
  $("#main").hidden = false;
  $("#forget").hidden = false;
  dashboard = new Dashboard(new Api(key));
  dashboard.start();
}

async function login(event) {
  event.preventDefault();
  const input = $("#api-key");
  const key = input.value.trim();
  const button = $("#login-form button");
  if (!key) {
    $("#login-error").textContent = "Enter the project's API key.";
    return;
  }
  button.disabled = true;
  $("#login-error").textContent = "";
  try {
    await new Api(key).post("/api/v1/realtime/token"); // proves the key before keeping it
    storeKey(key);
    input.value = "";
    showBoard(key);
    $("#main").focus();
  } catch (error) {
    $("#login-error").textContent =
      error instanceof Unauthorized ? "The server refused this API key." : "The server cannot be reached; try again.";
  } finally {
    button.disabled = false;
  }
}

function forget() {
  if (dashboard) dashboard.stop();
  dashboard = null;
  forgetKey();
  location.reload();
}

$("#login-form").addEventListener("submit", login);
$("#forget").addEventListener("click", forget);
const key = storedKey();
if (key) showBoard(key);
else showLogin();
