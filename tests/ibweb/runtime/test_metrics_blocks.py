"""The ``/metrics`` counter blocks: an emulated fabric's hold only the integrated columns, and read back whole."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from django.core.cache import cache

from fabric_engine.state import FabricState
from fabric_engine.telemetry import CounterIntegrator
from fabric_engine.telemetry.counters import COLUMNS
from fabric_engine.topology.generate import fat_tree
from ibweb.runtime import metrics
from ibweb.runtime.metrics import CounterRecorder, port_labels, read_totals

FABRIC_ID = 987_654  # no row: the blocks are read by primary key only


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(metrics, "BLOCK_ROWS", 48)
    yield
    metrics.forget(FABRIC_ID)


def _states(f, ticks: int):
    rng = np.random.default_rng(7)
    for seq in range(1, ticks + 1):
        rate = (rng.random(2 * f.num_links) * 400).astype(np.float32)
        yield FabricState(seq, 1000.0 + seq, 0.5, rate, rate / 400, xmit_wait=(rate * 3).astype(np.float32))


def _layout(f, version: str) -> dict:
    return {**port_labels(FABRIC_ID, version, f), "version": version}


def test_integrated_blocks_hold_the_moving_columns_and_read_back_every_column(small_blocks):
    f = fat_tree(hosts=32, radix=8)
    recorder, reference = CounterRecorder(FABRIC_ID, min_interval_s=0.0), CounterIntegrator(f)
    for state in _states(f, 4):
        recorder.add(f, state, version="v1")
        reference.add(state)
    block = cache.get(f"ibweb:metrics:{FABRIC_ID}:0")
    assert block["rows"].shape == (48, 5)  # not every column of the 48 ports: what an emulated fabric moves
    got = read_totals(SimpleNamespace(pk=FABRIC_ID), _layout(f, "v1"))
    assert got.shape == (2 * f.num_links, len(COLUMNS))
    np.testing.assert_array_equal(got, reference.totals)  # NaN columns NaN, zero columns zero, counts equal
    assert np.isnan(got).any() and (got[:, metrics.INTEGRATED] > 0).all()


def test_a_node_range_of_compact_blocks_reads_its_ports_only(small_blocks):
    f = fat_tree(hosts=32, radix=8)
    recorder, reference = CounterRecorder(FABRIC_ID, min_interval_s=0.0), CounterIntegrator(f)
    for state in _states(f, 2):
        recorder.add(f, state, version="v1")
        reference.add(state)
    labels = _layout(f, "v1")
    got = read_totals(SimpleNamespace(pk=FABRIC_ID), labels, nodes=(10, 20))
    mine = np.zeros(len(got), bool)
    mine[labels["order"][(labels["order_node"] >= 10) & (labels["order_node"] < 20)]] = True
    np.testing.assert_array_equal(got[mine], reference.totals[mine])
    assert np.isnan(got[~mine]).all()


def test_measured_counters_keep_every_column(small_blocks):
    f = fat_tree(hosts=32, radix=8)
    rng = np.random.default_rng(3)
    totals = rng.integers(0, 1 << 40, (2 * f.num_links, len(COLUMNS))).astype(np.float64)
    totals[::5, 3] = np.nan  # not read there
    state = next(_states(f, 1))
    CounterRecorder(FABRIC_ID, min_interval_s=0.0).add(f, state, (totals, 1234.0), version="v2")
    assert cache.get(f"ibweb:metrics:{FABRIC_ID}:0")["rows"].shape == (48, len(COLUMNS))
    np.testing.assert_array_equal(read_totals(SimpleNamespace(pk=FABRIC_ID), _layout(f, "v2")), totals)
