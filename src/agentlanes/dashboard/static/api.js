// HTTP to this same server with the project's API key, and the short-lived socket token.

export class Unauthorized extends Error {}
export class NotFound extends Error {}

const KEY_STORAGE = "agentlanes.apiKey";

export function storedKey() {
  return sessionStorage.getItem(KEY_STORAGE) || "";
}

export function storeKey(key) {
  sessionStorage.setItem(KEY_STORAGE, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_STORAGE);
}

export class Api {
  constructor(key) {
    this.key = key;
    this.token = null; // {token, expiresAt (ms, local clock)}
    // Server clock minus ours, from the Date header; used for heartbeat ages.
    this.skewMs = 0;
  }

  async request(method, path, body) {
    const init = { method, headers: { "X-API-Key": this.key }, cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    this.noteServerClock(response);
    if (response.status === 401) throw new Unauthorized("the API key was refused");
    if (response.status === 404) throw new NotFound(path);
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}`);
    return response.json();
  }

  get(path) {
    return this.request("GET", path);
  }

  post(path, body) {
    return this.request("POST", path, body ?? {});
  }

  noteServerClock(response) {
    const date = Date.parse(response.headers.get("date") || "");
    if (Number.isNaN(date)) return;
    const skew = date - Date.now();
    // The header has one-second precision: only trust it for a real difference.
    this.skewMs = Math.abs(skew) > 2000 ? skew : 0;
  }

  serverNow() {
    return Date.now() + this.skewMs;
  }

  /** A socket token; reused until shortly before it expires (it is valid for 60 s). */
  async socketToken() {
    if (this.token && this.token.expiresAt - Date.now() > 5000) return this.token.token;
    const sent = Date.now();
    const answer = await this.post("/api/v1/realtime/token");
    const lifetime = Date.parse(answer.expires_at) - this.serverNow();
    this.token = { token: answer.token, expiresAt: sent + Math.max(lifetime, 0) };
    return answer.token;
  }

  dropToken() {
    this.token = null;
  }
}
