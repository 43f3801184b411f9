"""Helpers shared by every test directory.

``require_tool(*names)`` is the one way a test says it needs an external program
(``ibsim``, ``opensm``, ``ibnetdiscover``, ...) or file (the umad2sim library): the
test is skipped on a developer's machine without it, and fails in CI (``CI=true``),
where a missing tool is a broken environment, not a reason to pass quietly.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

__all__ = ["require_tool", "missing_tools"]

ROOT = Path(__file__).resolve().parent.parent


def _deferred_sqlite_transactions_in_process() -> None:
    """In-process tests begin SQLite transactions DEFERRED, as before ``transaction_mode`` IMMEDIATE.

    A non-transactional Django test holds one transaction for its whole length; under IMMEDIATE it
    holds the write lock from its first line, so a runner's background writer (events, rollups) in
    the same test would wait out the busy timeout and its retries instead of failing at once as it
    always has there (its rows could not be seen by the test anyway). The shipped mode is checked
    where it matters: every real server the tests start (``tests/support/server.py``) runs the settings as
    shipped, and ``tests/ibweb/db/test_db_lock_contention.py`` sets IMMEDIATE for its writers.
    """
    try:
        from django.db import connections
    except ImportError:  # the engine alone, without Django
        return
    options = connections.settings["default"].get("OPTIONS")
    if options is not None and "transaction_mode" in options:
        options["transaction_mode"] = None


_deferred_sqlite_transactions_in_process()

if os.environ.get("PYTEST_XDIST_WORKER") and "tests.support.xdist_worker" not in sys.modules:
    raise pytest.UsageError("pytest -n needs -p tests.support.xdist_worker (each worker's Redis namespace and "
                            "database, set before Django's settings load), as make test passes it")


def pytest_configure(config) -> None:
    """In-process tests keep the embedded history ring on disk in a temporary directory, never in ``var/``, and
    hash passwords with one PBKDF2 iteration (``tests/support/hashers.py``: a third of a second of CPU less each
    time a test sets or checks one)."""
    try:
        from django.conf import settings
    except ImportError:  # the engine alone, without Django
        return
    settings.IBWEB_HISTORY_DIR = tempfile.mkdtemp(prefix="ibweb-test-history-")
    settings.IBWEB_TSDB_PATH = Path(tempfile.mkdtemp(prefix="ibweb-test-tsdb-")) / "tsdb.sqlite3"  # issue 40
    from tests.support.hashers import in_process

    settings.PASSWORD_HASHERS = in_process(settings.PASSWORD_HASHERS)


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


@functools.cache
def _unit_of(path: str) -> str | None:
    """The scheduling unit of the test module at ``path`` (repository-relative), None for one test a unit:
    ``redis-flush`` for the modules that flush a Redis database, the module itself for one whose tests share a
    module-scoped server or simulator (``running_server`` or ``IbSim`` in a ``scope="module"`` fixture: started
    once, and OpenSM run once per fabric and engine, on one worker instead of on each)."""
    source = ROOT / path
    if source.suffix != ".py" or not source.is_file():
        return None
    text = source.read_text()
    if "require_redis(" in text:
        return "redis-flush"
    if ("running_server" in text or "IbSim(" in text) and 'scope="module"' in text:
        return path
    return None


@functools.cache
def _starts_servers(path: str) -> bool:
    """Whether the test module at ``path`` starts ibweb servers (:func:`tests.support.server.running_server`)."""
    source = ROOT / path
    return source.suffix == ".py" and source.is_file() and "running_server(" in source.read_text()


def pytest_collection_modifyitems(config, items) -> None:
    """Mark ``server`` the tests of modules that start their own ibweb servers: those run the settings as shipped
    on their own SQLite database whatever ``DATABASE_URL`` the pass has, so ``make test-services`` (the in-process
    tests again on PostgreSQL and Redis) leaves them to the main pass; ``services`` tests choose their own."""
    for item in items:
        if _starts_servers(item.nodeid.split("::", 1)[0]) and item.get_closest_marker("services") is None:
            item.add_marker(pytest.mark.server)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (``make test``) with the modules that flush a Redis database (``require_redis``) as
    one group: their tests run on one worker, one after another; and each module whose tests share a
    module-scoped server or ibsim as its own group (one start, not one per worker). The group is chosen here, by
    the module's path, as xdist 3.8's ``xdist_group`` marks do not reach pytest 9's node ids. Every other test is
    its own unit, sent in collection order (pytest-django's: transactional tests, which empty their worker's
    tables, last). (Sending the long tests first was tried: run together at the start, the tests that wait on
    servers, ibsim and browsers slowed each other down, the isolation crawl from 204 s to 352 s, and a socket
    test timed by the server's close grace failed.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class RedisModulesOnOneWorker(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit_of(nodeid.split("::", 1)[0]) or super()._split_scope(nodeid)

    return RedisModulesOnOneWorker(config, log)
