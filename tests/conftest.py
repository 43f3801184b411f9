"""Helpers shared by every test directory.

``require_tool(*names)`` is the one way a test says it needs an external program
(``ibsim``, ``opensm``, ``ibnetdiscover``, ...) or file (the umad2sim library): the
test is skipped on a developer's machine without it, and fails in CI (``CI=true``),
where a missing tool is a broken environment, not a reason to pass quietly.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

__all__ = ["require_tool", "missing_tools"]


def _deferred_sqlite_transactions_in_process() -> None:
    """In-process tests begin SQLite transactions DEFERRED, as before ``transaction_mode`` IMMEDIATE.

    A non-transactional Django test holds one transaction for its whole length; under IMMEDIATE it
    holds the write lock from its first line, so a runner's background writer (events, rollups) in
    the same test would wait out the busy timeout and its retries instead of failing at once as it
    always has there (its rows could not be seen by the test anyway). The shipped mode is checked
    where it matters: every real server the tests start (``tests/server.py``) runs the settings as
    shipped, and ``tests/web/test_db_lock_contention.py`` sets IMMEDIATE for its writers.
    """
    try:
        from django.db import connections
    except ImportError:  # the engine alone, without Django
        return
    options = connections.settings["default"].get("OPTIONS")
    if options is not None and "transaction_mode" in options:
        options["transaction_mode"] = None


_deferred_sqlite_transactions_in_process()


def pytest_configure(config) -> None:
    """In-process tests keep the embedded history ring on disk in a temporary directory, never in ``var/``."""
    try:
        from django.conf import settings
    except ImportError:  # the engine alone, without Django
        return
    settings.IBWEB_HISTORY_DIR = tempfile.mkdtemp(prefix="ibweb-test-history-")


def missing_tools(*names: str) -> list[str]:
    """The names among ``names`` that are neither on ``PATH`` nor an existing absolute path."""
    missing = []
    for name in names:
        found = os.path.exists(name) if os.path.isabs(name) else shutil.which(name) is not None
        if not found:
            missing.append(name)
    return missing


def require_tool(*names: str) -> None:
    """Skip the calling test (``pytest.fail`` when ``CI=true``) unless every tool in ``names`` exists.

    Parameters
    ----------
    *names : str
        Program names looked up on ``PATH`` (``"opensm"``) or absolute file paths
        (``"/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"``).
    """
    missing = missing_tools(*names)
    if not missing:
        return
    message = f"needs {', '.join(missing)} (Debian packages: see SYSTEM_PACKAGES in the Makefile)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def pytest_sessionfinish(session, exitstatus) -> None:
    """Remove the SQLite test database's write-ahead log files (Django removes only the database file)."""
    from django.conf import settings

    if not settings.configured:
        return
    name = settings.DATABASES["default"].get("TEST", {}).get("NAME")
    if name and settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        for suffix in ("-wal", "-shm"):
            if os.path.exists(name + suffix):
                os.remove(name + suffix)
