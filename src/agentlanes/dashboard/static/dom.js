// Small DOM helpers. Everything from the server is set as text, never as HTML.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    // Through CSSOM: the page's CSP refuses style attributes set as markup (setAttribute).
    else if (name === "style") node.style.cssText = String(value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

/** "4 s", "3 min", "2 h": a short, readable duration. */
export function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min`;
  return `${Math.round(m / 60)} h`;
}

// One formatter for every time shown: toLocaleTimeString builds a new one per call.
const CLOCK = new Intl.DateTimeFormat([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });

export function clockTime(iso) {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return "";
  return CLOCK.format(t);
}

/** "0:42", "12:05", "1:02:03": a countdown that changes every second. */
export function countdown(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/** Run `fn` once in the next animation frame, however often this is asked before then. */
export function frameBatcher(fn) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      fn();
    });
  };
}

/** Call `fn` once things settle: `wait` ms after the last ask, but at least every `maxWait` ms. */
export function debounce(fn, wait, maxWait) {
  let timer = null;
  let first = 0;
  return () => {
    const now = Date.now();
    if (timer === null) first = now;
    clearTimeout(timer);
    const delay = Math.max(0, Math.min(wait, first + maxWait - now));
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, delay);
  };
}

/** The name a person reads for a session (its display name, claude-1) and the full one. */
export function shownName(s) {
  return (s && (s.display_name || s.agent_name)) || "";
}
