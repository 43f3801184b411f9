"""Headless Debian Chromium driven by Playwright; never a downloaded browser."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]


def require_chromium() -> None:
    if not (os.path.exists(CHROMIUM) and shutil.which("node") is not None):
        message = f"{CHROMIUM} is missing"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


#: The browser of the test module running (:func:`module_browser`), shared by its pages; None outside one.
_MODULE_BROWSER: list = []


@contextmanager
def module_browser():
    """One headless Chromium for the pages of a whole test module (``tests/e2e/conftest.py``): each
    :func:`chromium_page` opens its own context in it (its own cookies, storage and cache, as a browser of its
    own would have) instead of starting Playwright and Chromium again (seconds a page)."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        yield None  # chromium_page skips (or fails under CI) as before
        return
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        _MODULE_BROWSER.append(browser)
        try:
            yield browser
        finally:
            _MODULE_BROWSER.remove(browser)
            browser.close()


@contextmanager
def chromium_page(viewport: dict | None = None, bypass_csp: bool = True, signed_in=None):
    """A fresh page in headless Chromium, in a context of its own; closes everything afterwards.

    ``signed_in``: a :class:`tests.support.server.Server` whose operator session the page uses
    (anonymous visitors see the fabric-wide view only, without tenants, jobs or host names).

    Playwright's ``wait_for_function`` evaluates strings, which the dashboard's
    content security policy forbids; tests bypass the policy by default and
    ``tests/e2e/test_csp.py`` checks the dashboard under it. The browser is the module's
    (:func:`module_browser`) when one runs, else one started for this page.
    """
    require_chromium()
    if _MODULE_BROWSER:
        with _page(_MODULE_BROWSER[-1], viewport, bypass_csp, signed_in) as page:
            yield page
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            with _page(browser, viewport, bypass_csp, signed_in) as page:
                yield page
        finally:
            browser.close()


@contextmanager
def _page(browser, viewport: dict | None, bypass_csp: bool, signed_in):
    context = browser.new_context(viewport=viewport or {"width": 1400, "height": 900}, bypass_csp=bypass_csp)
    try:
        if signed_in is not None:
            context.add_cookies([{"name": "sessionid", "value": signed_in.session_key, "url": signed_in.url}])
        page = context.new_page()
        errors: list[str] = []
        console_errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: console_errors.append(msg.text) if msg.type == "error" else None)
        page.errors = errors
        page.console_errors = console_errors
        yield page
    finally:
        context.close()


def poll(page, expression: str, timeout_s: float = 30.0, interval_s: float = 0.1):
    """Evaluate ``expression`` until it is truthy (works under a strict CSP, unlike wait_for_function)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {expression}")
        page.wait_for_timeout(interval_s * 1000)


AXE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "frontend",
                   "node_modules", "axe-core", "axe.min.js")


def axe_violations(page, impacts: tuple[str, ...] = ("serious", "critical")) -> list[str]:
    """Accessibility violations of the page of the given impacts, from axe-core (pinned in frontend/package.json).

    The test injects axe into the page (the page is opened with ``bypass_csp``) and runs its WCAG 2.x A/AA
    rules; each violation reads ``"rule-id (impact): target, target, ..."``.
    """
    if not os.path.exists(AXE):
        message = f"{AXE} is missing: run make setup"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    page.add_script_tag(path=AXE)
    result = page.evaluate("""() => axe.run(document, {runOnly: {type: 'tag',
        values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})""")
    return [f"{v['id']} ({v['impact']}): {', '.join(str(n['target']) for n in v['nodes'][:5])}"
            for v in result["violations"] if v["impact"] in impacts]


def horizontal_overflow(page) -> int:
    """Pixels the page is wider than the window (0 when nothing overflows horizontally)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
