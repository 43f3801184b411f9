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
def chromium_page(viewport: dict | None = None):
    """A fresh page in headless Chromium; closes everything afterwards."""
    from playwright.sync_api import sync_playwright

    require_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=viewport or {"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.errors = errors
            yield page
        finally:
            browser.close()
