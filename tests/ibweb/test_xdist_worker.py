"""Each pytest-xdist worker of ``make test`` owns its Redis namespace and database (tests/support/xdist_worker.py)."""

import os
import re
from pathlib import Path

import pytest
from django.conf import settings

from tests.support.xdist_worker import FIRST_TAKEN_DB, worker_redis_url


def test_a_worker_moves_the_redis_database_on_by_its_index_and_refuses_the_redis_tests_databases():
    assert worker_redis_url("redis://127.0.0.1:6379/0", 0) == "redis://127.0.0.1:6379/0"
    assert worker_redis_url("redis://127.0.0.1:6379/1", 2) == "redis://127.0.0.1:6379/3"
    assert worker_redis_url("redis://:pw@cache:6380", 1) == "redis://:pw@cache:6380/1"
    with pytest.raises(ValueError, match="worker 4 would use Redis database 4"):
        worker_redis_url("redis://127.0.0.1:6379/0", 4)


@pytest.mark.skipif(not os.environ.get("PYTEST_XDIST_WORKER"), reason="runs under pytest -n (make test)")
def test_this_workers_settings_have_its_own_namespace_and_redis_database():
    worker = os.environ["PYTEST_XDIST_WORKER"]
    assert settings.REDIS_NAMESPACE.endswith(f"-{worker}")
    assert settings.CACHES["default"].get("KEY_PREFIX", settings.REDIS_NAMESPACE) == settings.REDIS_NAMESPACE
    if settings.REDIS_URL:
        assert settings.REDIS_URL.rsplit("/", 1)[1] == worker.removeprefix("gw")


def test_every_module_flushes_its_own_redis_database():
    """``require_redis`` flushes its database: no two modules share one (they run on one worker under ``make test``,
    but not with plain ``pytest -n``), nor take the databases of the ``make test-services`` workers."""
    root = Path(__file__).resolve().parents[1]
    owners: dict[int, set[str]] = {}
    for path in root.rglob("test_*.py"):
        for db in re.findall(r"require_redis\(db=(\d+)\)", path.read_text()):
            owners.setdefault(int(db), set()).add(str(path.relative_to(root)))
    assert len(owners) >= 10  # the modules were found
    assert {db: paths for db, paths in owners.items() if len(paths) > 1 or db < FIRST_TAKEN_DB} == {}
