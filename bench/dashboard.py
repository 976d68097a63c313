"""The dashboard under a swarm: 300 agents and ~20 events/s, in real headless Chromium.

    .venv/bin/python bench/dashboard.py [--agents 300] [--rate 20] [--seconds 30]

Starts a real server (a temp SQLite file), checks in the agents (tests/browser/swarm.py:
module globs, one ``**/*.py`` hotspot, tasks, leases, a vote, messages), opens the board in
Debian's Chromium (/usr/bin/chromium through Playwright's executable_path; no browser is
downloaded), and prints:

* first full render: from navigation start until every card is counted and the conflicts
  panel shows the server's pair count (cards alone too);
* frames while the load runs (requestAnimationFrame intervals): p50, p95, max;
* long tasks (> 50 ms, PerformanceObserver): their share of the run;
* event to screen: from just before the HTTP call that makes an event to the frame after its
  line is in the page, for the feed (every marked event) and for visible cards;
* the JS heap (Chrome DevTools Protocol) before and after.

The load: status texts (most events), scope changes, and check-outs replaced by check-ins,
paced so the server writes about ``--rate`` events a second; the rate reached is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.server import ServerProcess, bench_server  # noqa: E402
from tests.browser.swarm import agent, coordinate  # noqa: E402

CHROMIUM = os.environ.get("AGENTLANES_TEST_CHROMIUM", "/usr/bin/chromium")
ADMIN = {"Authorization": "Bearer admin-secret-for-the-test-suite-2026"}
VISIBLE = 12  # the first cards, in view at 1280 x 900

# Installed before the page's own scripts: the key (so the board opens at once) and the
# probes. Event marks ("mark=<epoch ms>") are read from added feed lines and card texts.
PROBES = """
sessionStorage.setItem('agentlanes.apiKey', %(key)r);
window.__bench = {frames: [], longtasks: [], feed: [], sent: [], cards: [], cardsFromEvent: [],
                  arrived: [], recording: false};
// When each event reaches the page, before the board handles it: the server's and the
// socket's share of the time to screen.
const NativeSocket = window.WebSocket;
window.WebSocket = function (...args) {
  const socket = new NativeSocket(...args);
  socket.addEventListener('message', (m) => {
    if (!window.__bench.recording) return;
    const i = m.data.indexOf('"ts":"');
    if (i < 0) return;
    const ts = Date.parse(m.data.slice(i + 6, m.data.indexOf('"', i + 6)));
    if (!Number.isNaN(ts)) window.__bench.arrived.push(Date.now() - ts);
  });
  return socket;
};
window.WebSocket.prototype = NativeSocket.prototype;
Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
const counted = new Set();
const eventTs = new Map(); // mark -> the timestamp of the event that carried it
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__bench.longtasks.push([e.startTime, e.duration]);
}).observe({type: 'longtask', buffered: true});
(function frame(last) {
  requestAnimationFrame((now) => {
    if (window.__bench.recording && last) window.__bench.frames.push(now - last);
    frame(now);
  });
})(0);
const MARK = /mark=(\\d+)/;
function seen(kind, text) {
  const m = MARK.exec(text || '');
  if (!m || counted.has(kind + m[0])) return;  // a card redrawn later shows an old mark
  counted.add(kind + m[0]);
  const sent = Number(m[1]);
  // The frame after the change: the earliest it can be on screen. (The feed line of the
  // same event, which gives its timestamp, is in the page by then.)
  requestAnimationFrame(() => {
    window.__bench[kind].push(Date.now() - sent);
    const ts = eventTs.get(m[0]);
    if (kind === 'cards' && ts) window.__bench.cardsFromEvent.push(Date.now() - ts);
  });
}
function fromEvent(li) {
  // The event's own timestamp (written by the server with the change, in microseconds).
  const t = li.querySelector('time');
  if (!t || li.classList.contains('history') || !li.dataset.offset) return;
  const ts = Date.parse(t.getAttribute('datetime'));
  const m = MARK.exec(li.textContent || '');
  if (m) eventTs.set(m[0], ts);
  requestAnimationFrame(() => window.__bench.feed.push(Date.now() - ts));
}
new MutationObserver((records) => {
  for (const r of records) {
    for (const node of r.addedNodes) {
      if (node.nodeType !== 1) continue;
      if (node.matches('#feed li')) {
        fromEvent(node);
        seen('sent', node.textContent);
      }
      else if (node.matches('#agents li.card .status-text')) seen('cards', node.textContent);
      else if (node.matches('#agents li.card')) {
        const s = node.querySelector('.status-text');
        if (s) seen('cards', s.textContent);
      }
    }
  }
}).observe(document, {childList: true, subtree: true});
"""


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Load(threading.Thread):
    """Writes events at about `rate` a second for `seconds`."""

    def __init__(
        self, url: str, key: str, sessions: list[dict[str, Any]], rate: float, seconds: float
    ) -> None:
        super().__init__(daemon=True)
        self.http = httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=30)
        self.sessions = sessions
        self.rate = rate
        self.seconds = seconds
        self.errors = 0
        self.sent = 0
        self.next_name = len(sessions)
        self.rng = random.Random(7)

    def call(self, path: str, token: str, body: dict[str, Any]) -> httpx.Response:
        r = self.http.post(path, json=body, headers={"X-Session-Token": token})
        if r.status_code >= 300:
            self.errors += 1
        return r

    def one(self) -> int:
        """One change; returns how many events it writes (as the server does today)."""
        roll = self.rng.random()
        i = self.rng.randrange(len(self.sessions))
        if roll < 0.4:
            i = self.rng.randrange(VISIBLE)  # a card on screen
        s = self.sessions[i]
        mark = f"mark={int(time.time() * 1000)}"
        if roll < 0.85:
            self.call("/api/v1/status", s["session_token"], {"status_text": f"working {mark}"})
            return 1
        if roll < 0.93:
            files = (
                [f"src/{secrets.token_hex(2)}/**"]
                if self.rng.random() < 0.5
                else s["declared_files"]
            )
            self.call(
                "/api/v1/status",
                s["session_token"],
                {"status_text": f"rescoped {mark}", "declared_files": files},
            )
            return 2
        if i < VISIBLE:
            i = VISIBLE + self.rng.randrange(len(self.sessions) - VISIBLE)
            s = self.sessions[i]
        self.call("/api/v1/checkout", s["session_token"], {"outcome_status": "completed"})
        body = agent(self.next_name)
        body["agent_name"] = f"{body['agent_name']}-r{self.next_name}"
        self.next_name += 1
        r = self.http.post("/api/v1/checkin", json=body)
        if r.status_code == 201:
            self.sessions[i] = r.json()
        else:
            self.errors += 1
        return 3

    def run(self) -> None:
        start = time.monotonic()
        due = start
        while time.monotonic() - start < self.seconds:
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            due += self.one() / self.rate
            self.sent += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20.0, help="events per second")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument(
        "--profile", action="store_true", help="also print the page's top functions by self time"
    )
    parser.add_argument(
        "--trace", action="store_true", help="also print the renderer's main-thread work by kind"
    )
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        token = ADMIN["Authorization"].split()[1]
        server = bench_server(Path(tmp), token, rate_limit_per_minute=0).start()
        try:
            run(server, args, sync_playwright)
        finally:
            server.stop()


def run(server: ServerProcess, args: argparse.Namespace, sync_playwright: Any) -> None:
    r = httpx.post(
        f"{server.url}/api/v1/projects",
        json={"name": f"bench-{secrets.token_hex(4)}"},
        headers=ADMIN,
        timeout=30,
    )
    key = r.json()["api_key"]
    http = httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=60)

    def call(method: str, path: str, token: str | None = None, **kw: Any) -> httpx.Response:
        headers = {"X-Session-Token": token} if token else {}
        return http.request(method, path, headers=headers, **kw)

    sessions = []
    for i in range(args.agents):
        reply = call("POST", "/api/v1/checkin", json=agent(i))
        assert reply.status_code == 201, reply.text
        sessions.append(reply.json())
    coordinate(call, sessions)
    pairs = call("GET", "/api/v1/conflicts").json()["total"]
    print(f"{args.agents} agents, {pairs} conflicting pairs; Chromium {CHROMIUM}")
    for path in ("/api/v1/conflicts", "/api/v1/board/tasks", "/api/v1/presence"):
        took = []
        for _ in range(5):
            began = time.perf_counter()
            call("GET", path).raise_for_status()
            took.append((time.perf_counter() - began) * 1000)
        print(f"  GET {path}: {statistics.median(took):.1f} ms (median of 5, unchanged swarm)")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--enable-precise-memory-info"],
        )
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.add_init_script(PROBES % {"key": key})
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        page.goto(server.url)
        cards_ms = page.evaluate(
            """(n) => new Promise((done) => (function check() {
                if (document.querySelector('#agents-count')?.textContent === String(n)
                    && document.querySelector('#agents li.card')) done(performance.now());
                else requestAnimationFrame(check);
            })())""",
            args.agents,
        )
        full_ms = page.evaluate(
            """(pairs) => new Promise((done) => (function check() {
                if (document.querySelector('#conflicts-count')?.textContent === String(pairs)
                    && document.querySelector('#conflicts .groups')) done(performance.now());
                else requestAnimationFrame(check);
            })())""",
            pairs,
        )
        page.wait_for_timeout(1500)
        heap_before = heap(cdp)
        first_offset = call("GET", "/api/v1/events/log?since=0&limit=1").json()["last_offset"]
        t0 = page.evaluate("() => { window.__bench.recording = true; return performance.now(); }")
        if args.profile:
            cdp.send("Profiler.enable")
            cdp.send("Profiler.start")
        if args.trace:
            browser.start_tracing(page=page, categories=["devtools.timeline"])
        load = Load(server.url, key, sessions, args.rate, args.seconds)
        started = time.monotonic()
        load.start()
        load.join()
        elapsed = time.monotonic() - started
        page.wait_for_timeout(1000)  # the last events reach the screen
        t1 = page.evaluate("() => { window.__bench.recording = false; return performance.now(); }")
        last_offset = call("GET", "/api/v1/events/log?since=0&limit=1").json()["last_offset"]
        data = page.evaluate("() => window.__bench")
        heap_after = heap(cdp)
        profile = cdp.send("Profiler.stop")["profile"] if args.profile else None
        trace = browser.stop_tracing() if args.trace else None
        cards_now = page.locator("#agents li.card").count()
        browser.close()

    frames = data["frames"]
    long_ms = sum(
        min(start + dur, t1) - max(start, t0)
        for start, dur in data["longtasks"]
        if start + dur > t0 and start < t1
    )
    window = t1 - t0
    events = last_offset - first_offset
    print(
        f"load: {events} events in {elapsed:.1f} s = {events / elapsed:.1f}/s "
        f"({load.sent} changes, {load.errors} refused); "
        f"machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    rows = [
        ("first full render (cards + conflicts)", f"{full_ms:.0f} ms", "<= 1000 ms"),
        ("  cards alone", f"{cards_ms:.0f} ms", ""),
        (
            "frame interval p50 / p95 / max",
            f"{pct(frames, 0.5):.1f} / {pct(frames, 0.95):.1f} / {max(frames or [0]):.1f} ms",
            "p95 <= 50 ms",
        ),
        (
            "long tasks",
            f"{100 * long_ms / window:.1f} % ({long_ms:.0f} ms of {window / 1000:.1f} s)",
            "<= 10 %",
        ),
        (
            "event to screen p50 / p95 (feed, from the event)",
            spread(data["feed"]),
            "p95 <= 150 ms",
        ),
        (
            "  the same from the HTTP call's start",
            spread(data["sent"]),
            "",
        ),
        (
            "event to screen p50 / p95 (visible cards)",
            spread(data["cardsFromEvent"]),
            "p95 <= 150 ms",
        ),
        ("  the same from the HTTP call's start", spread(data["cards"]), ""),
        ("event to page (server, socket, main thread free)", spread(data["arrived"]), ""),
        ("JS heap after GC, before / after", f"{heap_before:.1f} / {heap_after:.1f} MB", ""),
        ("cards in the page (virtualised)", f"{cards_now} of {args.agents}", ""),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:<40} {target}")
    if frames:
        print(f"frames recorded: {len(frames)}; mean {statistics.mean(frames):.1f} ms")
    if profile:
        print_profile(profile)
    if trace:
        print_trace(trace)


def print_trace(raw: bytes) -> None:
    """Main-thread time by kind of work (style, layout, paint, script …), the top 12."""
    events = json.loads(raw)["traceEvents"]
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain"
    }
    total: dict[str, float] = {}
    for e in events:
        if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X" and "dur" in e:
            total[e["name"]] = total.get(e["name"], 0.0) + e["dur"] / 1000
    for name, ms in sorted(total.items(), key=lambda x: -x[1])[:12]:
        print(f"  {ms:8.0f} ms  {name}")


def print_profile(profile: dict[str, Any]) -> None:
    """Sampled time per page function, with the native calls it makes (DOM, layout
    forced by reads) counted in it; the top 15."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {child: n["id"] for n in profile["nodes"] for child in n.get("children", [])}

    def owner(node_id: int) -> str:
        seen = node_id
        while seen in nodes:
            frame = nodes[seen]["callFrame"]
            if frame.get("url"):
                url = frame["url"].rsplit("/", 1)[-1]
                name = frame.get("functionName") or "(anonymous)"
                return f"{name} {url}:{frame.get('lineNumber', 0) + 1}"
            if seen not in parent:
                break
            seen = parent[seen]
        return str(nodes[node_id]["callFrame"].get("functionName") or "(native)")

    total: dict[str, float] = {}
    samples = profile.get("samples", [])
    for sample, delta in zip(samples, profile.get("timeDeltas", []), strict=False):
        name = owner(sample)
        total[name] = total.get(name, 0.0) + delta / 1000
    for name, ms in sorted(total.items(), key=lambda x: -x[1])[:15]:
        print(f"  {ms:8.0f} ms  {name}")


def spread(values: list[float]) -> str:
    return f"{pct(values, 0.5):.0f} / {pct(values, 0.95):.0f} ms (n={len(values)})"


def heap(cdp: Any) -> float:
    """Live JS heap: garbage collected first, so growth means kept objects."""
    cdp.send("HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return float(metrics.get("JSHeapUsedSize", 0)) / 1e6


if __name__ == "__main__":
    main()
