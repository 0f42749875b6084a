"""Browser tests: Playwright (sync API) driving Debian's chromium against the live stack
(daphne + a Celery worker + the scripted LLM), logged in through the real login form.

Every page a test opens is watched: a JavaScript error, any other console error, a
Content-Security-Policy violation, a response with an HTTP error status (a missing favicon is one)
or a request to any host but the test server fails the test. A test that provokes an error status
on purpose says so first: `page.watch.expect_status(404, "/deep_research/task/")`."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.support.factories import PASSWORD
from tests.support.system_fonts import cjk_font_problem

CHROMIUM = "/usr/bin/chromium"
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
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
LAPTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}

expect.set_options(timeout=30_000)


@pytest.fixture(autouse=True)
def _orm_beside_playwright(monkeypatch):
    """Playwright's sync API keeps its event loop "running" in this thread, so Django would take
    the ORM calls a test makes between browser steps for calls from async code. They are plain
    synchronous calls; allow them for browser tests only (servers started from here never see
    this: tests.support.stack leaves it out of their environment)."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


# Package scope: the browser (and Playwright's event loop) is gone before other test packages run.
@pytest.fixture(scope="package")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (.ci/run does)")
    # Checked before any page opens: a missing CJK font fails the print test much later, as \x00.
    font_problem = cjk_font_problem()
    if font_problem:
        pytest.fail(font_problem)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


class Watch:
    """What a page did that it should not: script and console errors, CSP violations, error
    responses the test did not announce, requests elsewhere."""

    def __init__(self, origin: str):
        self.origin = origin
        self.errors: list[str] = []
        self.foreign_requests: list[str] = []
        self.error_responses: list[tuple[int, str]] = []
        self.expected: list[tuple[int, str]] = []

    def attach(self, page: Page) -> None:
        page.on("pageerror", lambda error: self.errors.append(f"pageerror: {error}"))
        page.on("console", self._console)
        page.on("request", self._request)
        page.on("response", self._response)

    def expect_status(self, status: int, path: str) -> None:
        """The test provokes `status` from a URL whose path contains `path`: not a failure."""
        self.expected.append((status, path))

    def _response(self, response) -> None:
        if response.status >= 400:
            self.error_responses.append((response.status, response.url))

    def unexpected_responses(self) -> list[str]:
        return [
            f"{status} {url}"
            for status, url in self.error_responses
            if not any(status == s and path in urlsplit(url).path for s, path in self.expected)
        ]

    def _console(self, message) -> None:
        if message.type == "error" or "Content Security Policy" in message.text:
            self.errors.append(f"console {message.type}: {message.text}")

    def _request(self, request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https", "ws", "wss") and f"{parts.hostname}:{parts.port}" != self.origin:
            self.foreign_requests.append(request.url)


@pytest.fixture
def open_as(browser, live):
    """open_as(user, viewport=…, locale=…) → a logged-in page on the live server."""
    base = live.extra["url"]
    origin = urlsplit(base).netloc
    contexts, watches = [], []

    def login(user, *, viewport=LAPTOP, locale="zh-TW") -> Page:
        context = browser.new_context(base_url=base, viewport=viewport, locale=locale)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
        contexts.append(context)
        watch = Watch(origin)
        watches.append(watch)
        page = context.new_page()
        watch.attach(page)
        page.goto("/accounts/login/")
        page.fill("#id_username", user.username)
        page.fill("#id_password", PASSWORD)
        page.locator("form[action='/accounts/login/'] button[type=submit]").click()
        page.wait_for_url(re.compile(r".*/$"))
        page.watch = watch
        return page

    yield login
    for context in contexts:
        context.close()
    for watch in watches:
        # The browser logs every error response as a console error too: the responses are
        # checked themselves, against what the test announced.
        unexpected = [
            e
            for e in watch.errors
            if "Failed to load resource: the server responded with a status of" not in e
        ]
        assert not unexpected, unexpected
        assert not watch.unexpected_responses(), watch.unexpected_responses()
        assert not watch.foreign_requests, watch.foreign_requests


def shot(page: Page, name: str, *, full_page: bool = False) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
