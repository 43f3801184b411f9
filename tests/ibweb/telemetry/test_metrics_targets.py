"""``/metrics`` in parts and ``/metrics/targets`` (issue 40): a large fabric scraped as bounded targets that add
up to the whole, listed for Prometheus' ``http_sd_configs``, each as the caller's view may see it."""

from __future__ import annotations

import numpy as np
import pytest
from rest_framework.test import APIClient

from fabric_engine.topology.generate import fat_tree
from tests.support.tenancy_fixtures import operator_api

from ..runtime.test_metrics_exposition import families, publish

pytestmark = pytest.mark.django_db

PORT_FAMILY = "infiniband_port_transmit_data_bytes"  # the parser drops a counter's _total


def _series(text: str) -> set[tuple]:
    """Every sample of ``text`` but the counters' age (a clock), as (name, labels, value)."""
    return {(s.name, tuple(sorted(s.labels.items())), s.value) for fam in families(text).values()
            for s in fam.samples if fam.name != "infiniband_counters_age_seconds"}


def test_the_parts_add_up_to_the_whole_fabric_each_within_its_bound(settings):
    settings.IBWEB_METRICS_TARGET_PORTS = 64
    f = fat_tree(hosts=128, radix=16)  # 512 ports
    publish("big", f)
    publish("small", fat_tree(hosts=8, radix=4))
    api = operator_api()
    groups = api.get("/metrics/targets").json()
    by_fabric: dict[str, list[dict]] = {}
    for g in groups:
        by_fabric.setdefault(g["labels"].get("__param_fabric", ""), []).append(g["labels"])
    host = groups[0]["targets"][0]
    assert all(g["targets"] == [host] for g in groups) and host == "testserver"
    big = by_fabric["big"]
    parts = len(big)
    assert parts >= 2 * f.num_links // (64 + 16) and [b["__param_part"] for b in big] == [str(k) for k in range(parts)]
    assert by_fabric["small"] == [{"__metrics_path__": "/metrics", "__param_fabric": "small",
                                   "instance": "testserver/metrics?fabric=small"}]  # one part: no part asked
    assert by_fabric[""] == [{"__metrics_path__": "/metrics", "__param_process": "1",
                              "instance": "testserver/metrics?process=1"}]
    assert len({g["labels"]["instance"] for g in groups}) == len(groups), "each target its own up series"

    whole = api.get("/metrics?fabric=big").content.decode()
    seen: set[tuple] = set()
    for k in range(parts):
        text = api.get(f"/metrics?fabric=big&part={k}").content.decode()
        got = _series(text)
        assert not got & seen, f"part {k} repeats series of an earlier part"
        seen |= got
        ports = len(families(text)[PORT_FAMILY].samples)
        assert 0 < ports <= 64 + 16 - 1
        assert ("ibweb_fabric_link_downs_total" in text) is False  # no grading published here
        assert ("infiniband_counters_age_seconds{" in text) == (k == 0), "fabric-wide series in part 0 only"
    assert seen == _series(whole)
    assert len([s for s in seen if s[0] == "infiniband_port_transmit_data_bytes_total"]) == 2 * f.num_links


def test_a_part_is_asked_for_by_number_of_a_fabric_that_has_it(settings):
    settings.IBWEB_METRICS_TARGET_PORTS = 64
    publish("big", fat_tree(hosts=128, radix=16))
    api = operator_api()
    parts = len(api.get("/metrics/targets").json()) - 1
    assert api.get("/metrics?part=0").status_code == 400  # of which fabric?
    assert "a part number" in str(api.get("/metrics?fabric=big&part=x").json()["part"])
    missing = api.get(f"/metrics?fabric=big&part={parts}")
    assert missing.status_code == 404 and f"the fabric has {parts} parts" in missing.json()["detail"]
    assert api.get("/metrics?fabric=nowhere&part=0").status_code == 404


def test_a_view_below_all_gets_its_fabrics_parts_without_hosts_or_the_process(settings):
    settings.IBWEB_METRICS_TARGET_PORTS = 64
    f = fat_tree(hosts=128, radix=16)
    publish("big", f)
    anonymous = APIClient()
    groups = anonymous.get("/metrics/targets").json()
    assert groups and all(g["labels"]["__param_fabric"] == "big" for g in groups), "no process target"
    assert anonymous.get("/metrics?process=1").content == b""
    switch_ports = 0
    for g in groups:
        text = anonymous.get(f"/metrics?fabric=big&part={g['labels']['__param_part']}").content.decode()
        assert "gpu0" not in text
        switch_ports += len(families(text)[PORT_FAMILY].samples) if PORT_FAMILY in families(text) else 0
    hosts = np.isin(np.arange(f.num_nodes), f.hosts)
    trunks = int((~hosts[f.a_node] & ~hosts[f.b_node]).sum())
    assert switch_ports == 2 * trunks


def test_link_health_series_go_with_their_ports_part_and_the_fabrics_count_with_part_0(settings):
    import time

    from fabric_engine.state import FabricState
    from ibweb.fabrics.models import Fabric
    from ibweb.runtime import health, record
    from ibweb.runtime.metrics import CounterRecorder

    settings.IBWEB_METRICS_TARGET_PORTS = 64
    f = fat_tree(hosts=128, radix=16)
    row = Fabric.objects.create(name="big", slug="big")
    version = record.publish(row.pk, record.row_identity(row), f, None)
    rate = np.full(2 * f.num_links, 8.0, np.float32)
    CounterRecorder(row.pk).add(f, FabricState(1, time.time(), 1.0, rate, rate / 400), version=version)
    first, last = int(f.a_node[0]), int(f.a_node[-1])  # a port in the first part and one in the last
    ports = np.array([int(f.a_port[0]), int(f.a_port[-1])])
    health.write_ports(row.pk, record.fabric_version(record.head_of(row)), time.time(), {
        "node": np.array([first, last]), "port": ports, "raw": np.array([1e-5, 2e-5]),
        "effective": np.array([np.nan, np.nan]), "temp": np.array([50.0, 60.0]), "grade": np.array([1, 2]),
        "downs_total": np.array([0, 3]), "downs_fabric_total": 3})
    api = operator_api()
    whole = api.get("/metrics?fabric=big").content.decode()
    assert whole.count("ibweb_port_ber{") == 2 and "ibweb_fabric_link_downs_total{" in whole
    parts = [api.get(f"/metrics?fabric=big&part={k}").content.decode()
             for k in range(len(api.get("/metrics/targets").json()) - 1)]
    holding = [k for k, text in enumerate(parts) if "ibweb_port_ber{" in text]
    assert len(holding) == 2 and sum(text.count("ibweb_port_ber{") for text in parts) == 2
    assert [k for k, text in enumerate(parts) if "ibweb_fabric_link_downs_total{" in text] == [0]
    assert sum(text.count("ibweb_port_link_downs_total{") for text in parts) == 1
    assert any("ibweb_port_ber" not in text for text in parts), "a part with no graded port still answers"


def test_a_part_reads_only_the_counter_blocks_holding_its_ports(settings, monkeypatch):
    from django.core.cache import cache

    from ibweb.runtime import metrics

    settings.IBWEB_METRICS_TARGET_PORTS = 64
    monkeypatch.setattr(metrics, "BLOCK_ROWS", 48)  # 512 ports: 11 blocks
    f = fat_tree(hosts=128, radix=16)
    publish("big", f)
    asked: list[list[str]] = []
    real = cache.get_many
    monkeypatch.setattr(cache, "get_many", lambda keys, *a, **k: asked.append(list(keys)) or real(keys, *a, **k))
    api = operator_api()
    whole = _series(api.get("/metrics?fabric=big").content.decode())
    assert len([key for keys in asked for key in keys if key.startswith("ibweb:metrics:")]) == 11
    parts = len(api.get("/metrics/targets").json()) - 1
    seen: set[tuple] = set()
    for k in range(parts):
        asked.clear()
        seen |= _series(api.get(f"/metrics?fabric=big&part={k}").content.decode())
        blocks = [key for keys in asked for key in keys if key.startswith("ibweb:metrics:")]
        assert 1 <= len(blocks) <= 3, f"part {k} read {blocks}"
    assert seen == whole
    # a block of another record version (a topology change half written) is not served against this one
    row = __import__("ibweb.fabrics.models", fromlist=["Fabric"]).Fabric.objects.get(slug="big")
    stale = cache.get(f"ibweb:metrics:{row.pk}:3")
    cache.set(f"ibweb:metrics:{row.pk}:3", {**stale, "version": "another"})
    after = _series(api.get("/metrics?fabric=big").content.decode())
    ports = [s for s in after if s[0] == "infiniband_port_transmit_data_bytes_total"]
    assert len(ports) == 2 * f.num_links - 48
