"""The downs OpenSM's log showed reach the engine's down tracker: the health publisher feeds a telemetry source's
log evidence (stored by its sweeps) to its tracker at each tick, once, each down keeping the jobs on its port."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fabric_engine.topology.generate import fat_tree
from ibweb.live.engine.health_publisher import HealthPublisher
from ibweb.live.engine.publishing import Tick
from ibweb.runtime import health_readings

F = fat_tree(hosts=8, radix=4)
FABRIC_ID = 987_654


class LogOnlySource:
    """A telemetry source's part the publisher asks: no readings, its OpenSM log's evidence."""

    def __init__(self) -> None:
        self.logs = health_readings.LogDowns()
        self.fed = 0

    def health(self):
        return None

    def feed_downs(self, tracker, tag_of=None) -> int:
        n = self.logs.feed(FABRIC_ID, tracker, tag_of)
        self.fed += n
        return n


@pytest.fixture
def clean_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def test_log_downs_reach_the_tracker_once_with_the_jobs_on_the_port(clean_cache):
    host = int(F.hosts[0])
    d = int(F.out_link(host, 1))
    leaf, leaf_port = int(F.dl_dst[d]), int(F.dl_dst_port[d])
    guid = np.asarray([F.guid[host], F.guid[leaf]], np.uint64)
    port = np.asarray([1, leaf_port])
    ev = SimpleNamespace(t=np.asarray([100.0, 100.0]), guid=guid, port=port, up=np.zeros(2, np.int8),
                         exact=np.ones(2, bool))  # a LogEvidence's port columns: both ends seen going down
    health_readings.put_log_downs(FABRIC_ID, ev)

    source = LogOnlySource()
    publisher = HealthPublisher(FABRIC_ID, lambda: source, interval_s=0)
    publisher.keeper.set_catalog(F, [{"id": "j1", "tenant": "acme", "hosts": [host], "links": [d]}])
    tick = Tick(state=SimpleNamespace(t=110.0, alerts=[]), fabric=F, totals={})
    for _ in range(2):  # the same evidence at the next tick: nothing again
        publisher._step(None, tick, None, None)
    assert source.fed == 2
    e = publisher.keeper.downs.episodes()
    assert sorted(zip(e["guid"].tolist(), e["port"].tolist(), strict=True)) == sorted(
        zip(guid.tolist(), port.tolist(), strict=True))
    assert e["open"].all() and (e["start_hi"] == 100.0).all()
    assert publisher.keeper.jobs.jobs(e["tag"]) == [[{"id": "j1", "tenant": "acme"}]] * 2
