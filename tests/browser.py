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


@contextmanager
def chromium_page(viewport: dict | None = None, bypass_csp: bool = True):
    """A fresh page in headless Chromium; closes everything afterwards.

    Playwright's ``wait_for_function`` evaluates strings, which the dashboard's
    content security policy forbids; tests bypass the policy by default and
    ``tests/e2e/test_csp.py`` checks the dashboard under it.
    """
    from playwright.sync_api import sync_playwright

    require_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=viewport or {"width": 1400, "height": 900}, bypass_csp=bypass_csp)
            page = context.new_page()
            errors: list[str] = []
            console_errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: console_errors.append(msg.text) if msg.type == "error" else None)
            page.errors = errors
            page.console_errors = console_errors
            yield page
        finally:
            browser.close()


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
