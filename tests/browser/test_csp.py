"""The dashboard and the OpenAPI viewer under the server's Content-Security-Policy, in real
headless Chromium: they work, the browser reports no violation, and nothing is loaded
from another origin (SPEC "One agent cannot hurt another", Browsers)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.browser.conftest import DESKTOP, create_project
from tests.support.server import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails) with the reason
    expect = None

# Runs before any script of the page (Playwright's init scripts are not subject to the CSP).
WATCH_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}`);
});
"""


class Watched:
    """A page whose CSP violations, console errors and requested URLs are recorded."""

    def __init__(self, browser: Any, server: ServerProcess) -> None:
        self.server = server
        self.context = browser.new_context(viewport=DESKTOP)
        self.context.add_init_script(WATCH_VIOLATIONS)
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.errors: list[str] = []
        self.urls: list[str] = []
        self.page.on(
            "console",
            lambda m: self.console.append(m.text) if m.type in ("error", "warning") else None,
        )
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("request", lambda r: self.urls.append(r.url))

    def violations(self) -> list[str]:
        found = list(self.page.evaluate("window.__violations"))
        found += [m for m in self.console if "Content Security Policy" in m]
        return found

    def foreign(self) -> list[str]:
        own = (self.server.url, self.server.url.replace("http://", "ws://"))
        return [u for u in self.urls if not u.startswith(own) and not u.startswith("data:")]

    def close(self) -> None:
        self.context.close()


def test_dashboard_works_under_its_csp(browser: Any, shared_server: ServerProcess) -> None:
    key = create_project(shared_server.url)
    watched = Watched(browser, shared_server)
    page = watched.page
    response = page.goto(shared_server.url)
    assert response is not None
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    page.locator("#api-key").fill(key)
    page.keyboard.press("Enter")
    page.locator('#conn[data-state="live"]').wait_for(timeout=10_000)

    headers = {"X-API-Key": key}
    for name, files in (("alice", ["src/api/models.py"]), ("bob", ["src/api/*.py"])):
        r = httpx.post(
            f"{shared_server.url}/api/v1/checkin",
            json={"agent_name": name, "declared_files": files},
            headers=headers,
            timeout=10,
        )
        assert r.status_code == 201, r.text
    card = page.locator('#agents li[data-agent="alice"]')
    expect(card).to_be_visible(timeout=5000)
    expect(page.locator("#conflicts li.pair")).to_have_count(1, timeout=5000)

    # Selecting an agent highlights its rows (a constructed style sheet, not inline style).
    card.locator("button[data-select]").click()
    pair = page.locator("#conflicts li.pair")
    expect(pair).to_have_css("outline-style", "solid", timeout=3000)
    # The tree indents by depth (a custom property set through CSSOM, not an attribute).
    page.locator('button[data-toggle="src"]').click()
    nested = page.locator('#tree li[data-path="src/api"]')
    expect(nested).to_be_visible(timeout=3000)
    indent = nested.evaluate("n => parseFloat(getComputedStyle(n).paddingLeft)")
    assert indent > 0, indent

    assert watched.violations() == [], watched.violations()
    assert watched.errors == [], watched.errors
    assert watched.foreign() == [], watched.foreign()
    watched.close()


def test_openapi_viewer_loads_from_this_server_only(
    browser: Any, shared_server: ServerProcess
) -> None:
    watched = Watched(browser, shared_server)
    page = watched.page
    response = page.goto(f"{shared_server.url}/schema/swagger")
    assert response is not None and response.status == 200
    assert "default-src 'self'" in response.headers["content-security-policy"]
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("agentlanes", timeout=15_000)
    expect(page.locator(".opblock-summary-path", has_text="/api/v1/checkin").first).to_be_visible()
    page.locator(".opblock-summary-path", has_text="/api/v1/checkin").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible(timeout=5000)
    assert watched.violations() == [], watched.violations()
    assert watched.errors == [], watched.errors
    assert watched.foreign() == [], watched.foreign()
    assert any(u.endswith("/static/vendor/swagger-ui/swagger-ui-bundle.js") for u in watched.urls)
    watched.close()


def test_dashboard_cannot_be_framed(browser: Any, shared_server: ServerProcess) -> None:
    """Another origin's page that frames the dashboard gets an empty frame."""
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_content(f'<iframe id="f" src="{shared_server.url}/"></iframe>')
    page.wait_for_timeout(1500)
    frame = page.frame_locator("#f")
    assert frame.locator("#api-key").count() == 0
    context.close()


def test_socket_handshake_with_a_foreign_host_gets_421(shared_server: ServerProcess) -> None:
    """A real server answers the event socket's handshake for a foreign Host with 421."""
    import socket

    port = int(shared_server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(
            b"GET /api/v1/events HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"Sec-WebSocket-Version: 13\r\n\r\n"
        )
        answer = conn.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 421"), answer[:200]
    assert "HOST_NOT_ALLOWED" in answer or "content-length" in answer.lower()
