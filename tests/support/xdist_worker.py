"""Services of one pytest-xdist worker, chosen before Django reads its settings.

Loaded with ``python -m pytest -p tests.support.xdist_worker -n 2`` (the Makefile's ``XDIST``; ``tests/conftest.py``
refuses a worker without it): a plugin named on the command line is imported before pytest-django sets Django
up, a conftest after.

``make test`` runs the suite on several workers (``PYTEST_XDIST_WORKER`` = ``gw0``, ``gw1``, ...). Each worker
is one Django process, so what the settings take from the environment must differ between workers where they
share a service: the Redis namespace (``IBWEB_REDIS_NAMESPACE``, suffixed with the worker) and, when
``REDIS_URL`` is set (``make test-services``), the Redis database, as the Redis cache's ``clear()`` that tests
call empties the whole database, not one namespace: worker N uses database ``base + N``. The PostgreSQL and
SQLite test databases are suffixed per worker by pytest-django. Nothing changes outside xdist.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

#: Redis databases 4 and up belong to the tests that flush one (``tests.support.services.require_redis``).
FIRST_TAKEN_DB = 4


def worker_redis_url(url: str, index: int) -> str:
    """``url`` with its database number (0 when absent) moved on by ``index``; a ``ValueError`` at the
    databases of ``require_redis``."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    if base + index >= FIRST_TAKEN_DB:
        raise ValueError(f"REDIS_URL {url}: worker {index} would use Redis database {base + index}; databases "
                         f"{FIRST_TAKEN_DB} and up are the Redis tests' (run fewer workers or a lower database)")
    return urlunsplit(parts._replace(path=f"/{base + index}"))


def _configure(worker: str) -> None:
    index = int(worker.removeprefix("gw"))
    os.environ["IBWEB_REDIS_NAMESPACE"] = f"{os.environ.get('IBWEB_REDIS_NAMESPACE') or 'ibweb'}-{worker}"
    if os.environ.get("REDIS_URL"):
        os.environ["REDIS_URL"] = worker_redis_url(os.environ["REDIS_URL"], index)


if os.environ.get("PYTEST_XDIST_WORKER"):
    _configure(os.environ["PYTEST_XDIST_WORKER"])
