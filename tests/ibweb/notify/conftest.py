"""Notification tests: real receivers (tests/support/notify_servers.py), the embedded queue drained after each."""

import pytest

from ibweb.notify import queue
from tests.support.notify_servers import alertmanager, webhook_receiver  # noqa: F401 - fixtures


@pytest.fixture(autouse=True)
def _drained():
    yield
    assert queue.wait_idle(30), "the notify thread still runs after the test"
