"""Both backends behind one fixture: the embedded SQLite store in a temp dir, and a real VictoriaMetrics."""

from __future__ import annotations

import time

import pytest

from ibweb.tsdb.embedded import EmbeddedStore
from ibweb.tsdb.victoria import VictoriaStore
from tests.support.victoria import Victoria


@pytest.fixture(scope="module")
def victoria(tmp_path_factory):
    server = Victoria(tmp_path_factory.mktemp("victoria"))
    yield server
    server.stop()


class Backend:
    """A store and how a test makes its writes readable (VictoriaMetrics: flush)."""

    def __init__(self, store, settle) -> None:
        self.store, self.settle = store, settle


@pytest.fixture(params=["embedded", "victoria"])
def backend(request, tmp_path):
    if request.param == "embedded":
        store = EmbeddedStore(tmp_path / "tsdb.sqlite3")
        yield Backend(store, lambda: None)
    else:
        server = request.getfixturevalue("victoria")
        store = VictoriaStore(server.url)
        yield Backend(store, server.flush)
    store.close()


@pytest.fixture
def t0() -> float:
    """A start two hours ago on a 10-minute boundary (VictoriaMetrics keeps only samples within its retention)."""
    return float(int(time.time() - 7200) // 600 * 600)
