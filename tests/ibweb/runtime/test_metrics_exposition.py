"""``/metrics`` read by Prometheus' own parser: one family once however many fabrics, cables down that stay."""

from __future__ import annotations

import time

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from fabric_engine.state import FabricState
from fabric_engine.telemetry import cabling_conditions
from fabric_engine.topology import KIND_SWITCH
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.models import Fabric
from ibweb.runtime import record
from ibweb.runtime.metrics import CounterRecorder
from tests.support.tenancy_fixtures import operator_api

pytestmark = pytest.mark.django_db


def publish(slug: str, f, alerts=()) -> None:
    row = Fabric.objects.create(name=slug, slug=slug)
    version = record.publish(row.pk, record.row_identity(row), f, None)
    rate = np.full(2 * f.num_links, 8.0, np.float32)
    CounterRecorder(row.pk).add(f, FabricState(1, time.time(), 1.0, rate, rate / 400, alerts=list(alerts)),
                                version=version)


def families(text: str) -> dict:
    seen: dict[str, object] = {}
    for family in text_string_to_metric_families(text):
        assert family.name not in seen, f"{family.name} described twice"
        seen[family.name] = family
    return seen


def down_states(text: str) -> list[tuple]:
    return sorted((s.labels["fabric"], s.labels["name"], s.labels["port"], s.labels["remote_name"])
                  for s in families(text)["infiniband_port_state"].samples if s.value == 1)


def test_two_fabrics_one_help_and_type_per_family_and_cables_down_stay():
    design = fat_tree(hosts=8, radix=4)
    cut = design.without_links([0])  # leaf01 port 1 - gpu0001
    publish("alpha", design)
    publish("beta", cut, alerts=cabling_conditions(design, cut))
    text = operator_api().get("/metrics").content.decode()
    assert text.count("# TYPE infiniband_port_transmit_data_bytes_total ") == 1
    assert text.count("# HELP infiniband_port_state ") == 1
    found = families(text)
    by_fabric: dict[str, int] = {}
    for s in found["infiniband_port_transmit_data_bytes"].samples:  # the parser drops a counter's _total
        by_fabric[s.labels["fabric"]] = by_fabric.get(s.labels["fabric"], 0) + 1
    assert by_fabric == {"alpha": 2 * design.num_links, "beta": 2 * cut.num_links}
    up = [s for s in found["infiniband_port_state"].samples if s.value == 4]
    assert len(up) == 2 * (design.num_links + cut.num_links)
    assert down_states(text) == [("beta", "gpu0001", "1", "leaf01"), ("beta", "leaf01", "1", "gpu0001")]
    assert "infiniband_counters_age_seconds" in found


def test_a_view_below_all_gets_no_port_of_a_host_down():
    design = fat_tree(hosts=8, radix=4)
    switches = design.kind == KIND_SWITCH
    trunk = int(np.flatnonzero(switches[design.a_node] & switches[design.b_node])[0])
    cut = design.without_links([0, trunk])
    publish("beta", cut, alerts=cabling_conditions(design, cut))
    a, b = (str(design.node_name[design.a_node[trunk]]), str(design.node_name[design.b_node[trunk]]))
    assert len(down_states(operator_api().get("/metrics").content.decode())) == 4
    anonymous = APIClient().get("/metrics")
    assert anonymous.status_code == 200
    assert down_states(anonymous.content.decode()) == sorted(
        [("beta", a, str(int(design.a_port[trunk])), b), ("beta", b, str(int(design.b_port[trunk])), a)])
    assert "gpu0001" not in anonymous.content.decode()
