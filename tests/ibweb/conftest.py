"""Every web test starts from empty caches: what an engine published in one test never answers in the next.

(A rolled-back test frees its fabric's primary key for the next test's fabric.)
"""

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _roles(request):
    """The role groups for every database test, also after a transactional test flushed them."""
    if request.node.get_closest_marker("django_db") or {"db", "transactional_db"} & set(request.fixturenames):
        from tests.support.roles import ensure_roles

        request.getfixturevalue("_django_db_helper")  # the test's database first, as its marker asks
        ensure_roles()


@pytest.fixture(autouse=True)
def _fresh_caches():
    from ibweb.live.feed import frame_store as groups
    from ibweb.live.history import ring
    from ibweb.runtime import record
    from ibweb.runtime.cache import shared_cache

    def clear() -> None:
        cache.clear()
        shared_cache().clear()
        ring.store().clear()
        groups.forget_all()
        record.forget_memo()

    clear()
    yield
    clear()
