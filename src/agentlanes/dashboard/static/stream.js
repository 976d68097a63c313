// The event socket: snapshot, live events, and recovery after a drop.
//
// The server numbers every event; this client remembers the last offset it applied,
// resumes with `since=` after a drop (so the server replays what was missed), and skips
// any offset it has already applied, so nothing is lost and nothing is shown twice.

import { Unauthorized } from "./api.js";

const PING_EVERY_MS = 10000;
const PONG_WITHIN_MS = 5000;
const RETRY_MIN_MS = 300;
const RETRY_MAX_MS = 3000;

export class LiveStream {
  /**
   * handlers: snapshot(frame, {gap}), event(frame), replayed(frame),
   * state(name, detail), unauthorized()
   */
  constructor(api, handlers) {
    this.api = api;
    this.on = handlers;
    this.offset = null; // last applied offset; null until the first snapshot
    this.socket = null;
    this.attempt = 0;
    this.retryTimer = null;
    this.pingTimer = null;
    this.pongTimer = null;
    this.stopped = false;
    this.onOnline = () => this.retryNow();
  }

  start() {
    this.stopped = false;
    window.addEventListener("online", this.onOnline);
    this.connect();
  }

  stop() {
    this.stopped = true;
    window.removeEventListener("online", this.onOnline);
    clearTimeout(this.retryTimer);
    this.drop();
  }

  async connect() {
    if (this.stopped) return;
    this.on.state(this.attempt ? "reconnecting" : "connecting", { attempt: this.attempt });
    let token;
    try {
      token = await this.api.socketToken();
    } catch (error) {
      if (error instanceof Unauthorized) {
        this.stop();
        this.on.unauthorized();
        return;
      }
      this.scheduleRetry(); // the server is down or restarting
      return;
    }
    if (this.stopped) return;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const query = new URLSearchParams({ token });
    if (this.offset !== null) query.set("since", String(this.offset));
    const socket = new WebSocket(`${scheme}//${location.host}/api/v1/events?${query}`);
    this.socket = socket;
    socket.onmessage = (message) => this.receive(socket, message.data);
    socket.onclose = (closed) => this.closed(socket, closed);
    socket.onerror = () => {}; // a close always follows
    this.startPinging(socket);
  }

  receive(socket, raw) {
    if (socket !== this.socket) return;
    clearTimeout(this.pongTimer); // any frame proves the socket is alive
    let frame;
    try {
      frame = JSON.parse(raw);
    } catch {
      return;
    }
    const type = frame.type;
    if (type === "pong") return;
    if (type === "presence.snapshot") {
      // A snapshot after a resume means the missed history was no longer kept.
      const gap = this.offset !== null;
      this.offset = frame.offset;
      this.attempt = 0;
      this.on.snapshot(frame, { gap });
      this.on.state("live", {});
      return;
    }
    if (type === "replay.complete") {
      this.attempt = 0;
      if (typeof frame.offset === "number" && frame.offset > (this.offset ?? -1)) {
        this.offset = frame.offset;
      }
      this.on.replayed(frame);
      this.on.state("live", {});
      return;
    }
    if (type === "error") {
      if (frame.error && frame.error.code === "UNAUTHORIZED") this.api.dropToken();
      return;
    }
    if (typeof frame.offset !== "number") return;
    if (this.offset !== null && frame.offset <= this.offset) return; // seen already
    this.offset = frame.offset;
    this.on.event(frame);
  }

  closed(socket, event) {
    if (socket !== this.socket) return;
    this.drop();
    if (this.stopped) return;
    if (event.code === 4401) this.api.dropToken(); // token expired: fetch a fresh one
    this.scheduleRetry();
  }

  drop() {
    clearInterval(this.pingTimer);
    clearTimeout(this.pongTimer);
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onmessage = socket.onclose = socket.onerror = null;
      try {
        socket.close();
      } catch {
        /* already closed */
      }
    }
  }

  startPinging(socket) {
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => {
      if (socket !== this.socket || socket.readyState !== WebSocket.OPEN) return;
      socket.send(JSON.stringify({ type: "ping" }));
      clearTimeout(this.pongTimer);
      this.pongTimer = setTimeout(() => {
        // No answer: the connection is dead even if the browser has not noticed.
        if (socket !== this.socket) return;
        this.drop();
        this.scheduleRetry();
      }, PONG_WITHIN_MS);
    }, PING_EVERY_MS);
  }

  scheduleRetry() {
    clearTimeout(this.retryTimer);
    const delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** this.attempt);
    this.attempt += 1;
    const wait = Math.round(delay * (0.8 + Math.random() * 0.4));
    this.on.state("reconnecting", { attempt: this.attempt, inMs: wait });
    this.retryTimer = setTimeout(() => this.connect(), wait);
  }

  retryNow() {
    if (this.socket || this.stopped) return;
    clearTimeout(this.retryTimer);
    this.connect();
  }
}
