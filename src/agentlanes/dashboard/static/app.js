// The dashboard: ask for the key once, then keep the board live from the event socket.

import { Api, Unauthorized, forgetKey, storeKey, storedKey } from "./api.js";
import { Coordination } from "./coordination.js";
import { $ } from "./dom.js";
import { Feed } from "./feed.js";
import { Presence } from "./presence.js";
import { LiveStream } from "./stream.js";

// Heartbeats write no event, so presence is polled for their times: every 3 s, or faster
// when a project's TTL is so short that 3 s would show healthy agents as stale.
const PRESENCE_POLL_MS = 3000;
const PRESENCE_POLL_MIN_MS = 500;
const HISTORY_LINES = 30;

class Dashboard {
  constructor(api) {
    this.api = api;
    this.presence = new Presence(api);
    this.feed = new Feed();
    this.coordination = new Coordination(api);
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

  start() {
    this.stream.start();
    this.ticker = setInterval(() => this.presence.tick(), 1000);
    this.schedulePoll();
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
    clearTimeout(this.poller);
    this.poller = null;
  }

  snapshot(frame, { gap }) {
    this.presence.replace(frame.data.sessions || []);
    if (gap) this.feed.note("Missed history was no longer kept: the board was reloaded from a fresh snapshot.");
    this.coordination.refreshAll();
    this.showOffset(frame.offset);
    if (!this.historyLoaded) this.loadHistory(frame.offset);
  }

  event(frame) {
    this.presence.apply(frame);
    this.coordination.apply(frame);
    this.feed.add(frame);
    this.showOffset(frame.offset);
  }

  replayed(frame) {
    if (frame.recovered) this.coordination.refreshAll();
    this.showOffset(this.stream.offset);
  }

  /** The last few events before the snapshot, for context (not applied to the board). */
  async loadHistory(offset) {
    this.historyLoaded = true;
    if (!offset) return;
    const since = Math.max(0, offset - HISTORY_LINES);
    try {
      const answer = await this.api.get(`/api/v1/events/log?since=${since}&limit=${HISTORY_LINES}`);
      for (const frame of answer.events || []) {
        if (frame.offset <= offset) this.feed.add(frame, { history: true });
      }
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

  showOffset(offset) {
    if (offset !== null && offset !== undefined) $("#offset").textContent = String(offset);
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
      this.feed.note("Connection lost; reconnecting and catching up from the last event seen.");
    }
    if (name === "live" && !this.wasLive) {
      if (this.everLive) this.feed.note("Reconnected and caught up.");
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
