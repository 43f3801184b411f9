"""The browser tests of one module share one headless Chromium, each page in a context of its own."""

import pytest

from tests.support.browser import module_browser


@pytest.fixture(scope="module", autouse=True)
def _module_browser():
    with module_browser() as browser:
        yield browser
