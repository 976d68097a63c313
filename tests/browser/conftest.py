"""Real headless Chromium (Debian's /usr/bin/chromium, never a downloaded browser) driven
by Playwright against real `agentlanes serve` processes."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import services
from tests.support.server import ServerProcess

CHROMIUM = os.environ.get("AGENTLANES_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ADMIN = {"Authorization": "Bearer admin-secret-for-the-test-suite-2026"}
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per test module; each test gets its own context (own sessionStorage)."""
    if not Path(CHROMIUM).exists():
        services.unavailable("Chromium", f"{CHROMIUM} is missing (make test installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        services.unavailable("Playwright", str(exc))
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class Board:
    """A server, a project on it, and a browser page showing its dashboard."""

    server: ServerProcess
    key: str
    page: Any
    errors: list[str]

    @property
    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.key}

    def call(
        self, method: str, path: str, token: str | None = None, **kwargs: Any
    ) -> httpx.Response:
        """An API call with the project key (and a session token when given)."""
        headers = dict(self.headers)
        if token:
            headers["X-Session-Token"] = token
        return httpx.request(
            method, f"{self.server.url}{path}", headers=headers, timeout=10, **kwargs
        )

    def checkin(self, name: str, files: list[str], area: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"agent_name": name, "declared_files": files}
        if area:
            body["declared_area"] = area
        r = self.call("POST", "/api/v1/checkin", json=body)
        assert r.status_code == 201, r.text
        return r.json()  # type: ignore[no-any-return]

    def checkout(self, session: dict[str, Any]) -> None:
        r = self.call(
            "POST",
            "/api/v1/checkout",
            token=session["session_token"],
            json={"outcome_status": "completed"},
        )
        assert r.status_code == 200, r.text

    def log_in(self) -> None:
        """Type the key as a person would and press Enter."""
        self.page.goto(self.server.url)
        self.page.locator("#api-key").fill(self.key)
        self.page.keyboard.press("Enter")
        self.page.locator('#conn[data-state="live"]').wait_for(timeout=10_000)

    def card(self, agent: str) -> Any:
        return self.page.locator(f'#agents li[data-agent="{agent}"]')

    def feed_offsets(self) -> list[int]:
        items = self.page.locator("#feed li[data-offset]")
        return [int(x) for x in items.evaluate_all("items => items.map(i => i.dataset.offset)")]


def create_project(base_url: str, **body: Any) -> str:
    body.setdefault("name", f"board-{secrets.token_hex(4)}")
    r = httpx.post(f"{base_url}/api/v1/projects", json=body, headers=ADMIN, timeout=10)
    assert r.status_code == 201, r.text
    return str(r.json()["api_key"])


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the tests that do not stop it (each uses its own project): a server
    start is the slowest step of these tests on a busy two-core machine."""
    workdir = tmp_path_factory.mktemp("board")
    env = {
        "AGENTLANES_ADMIN_TOKEN": "admin-secret-for-the-test-suite-2026",
        "AGENTLANES_LOG_LEVEL": "warning",
        "AGENTLANES_DATABASE_URL": f"sqlite:///{workdir / 'agentlanes.db'}",
    }
    server = ServerProcess(env, workdir).start()
    yield server
    server.stop()


@pytest.fixture
def open_board(
    browser: Any,
    shared_server: ServerProcess,
    server_factory: Callable[..., ServerProcess],
) -> Iterator[Callable[..., Board]]:
    """Create a project and open its dashboard page: on the shared server, or on a server
    of the test's own (``own_server=True``) when the test stops or restarts it. An own
    server shares the shared server's database: two processes, one service."""
    boards: list[Board] = []

    def open_(
        viewport: dict[str, int] = DESKTOP, own_server: bool = False, **project: Any
    ) -> Board:
        server = (
            server_factory(
                {"AGENTLANES_DATABASE_URL": shared_server.env["AGENTLANES_DATABASE_URL"]}
            )
            if own_server
            else shared_server
        )
        key = create_project(server.url, **project)
        page = browser.new_context(viewport=viewport).new_page()
        board = Board(server=server, key=key, page=page, errors=[])
        page.on("pageerror", lambda exc: board.errors.append(str(exc)))
        boards.append(board)
        return board

    yield open_
    errors = [e for board in boards for e in board.errors]
    for board in boards:
        board.page.context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
