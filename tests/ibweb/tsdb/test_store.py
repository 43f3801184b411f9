"""The one interface, both backends: sweeps written, ranges downsampled, top-N, switches, retention, re-cabling.

Each VictoriaMetrics test uses its own fabric id (the server is shared by the module); samples sit 5 s into
each 10 s so no bin edge falls on one (VictoriaMetrics' bins are ``(t - w, t]``, the embedded store's ``[t, t + w)``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ibweb.tsdb.series import PORT_ID
from ibweb.tsdb.store import TOP, TimeSeriesStore

DAY = 86400
_fabric_ids = itertools.count(1)


def ports_of(pairs) -> np.ndarray:
    return np.array(list(pairs), dtype=PORT_ID)


def switch_ports(guid: int, count: int) -> np.ndarray:
    return ports_of((guid, p) for p in range(1, count + 1))


def test_both_backends_are_the_store(backend):
    assert isinstance(backend.store, TimeSeriesStore)


def test_range_is_downsampled_to_the_charts_width(backend, t0):
    fabric, ports = next(_fabric_ids), switch_ports(0x1000, 8)
    for i in range(60):  # 10 minutes of 10 s sweeps, a ramp per port
        backend.store.write(fabric, t0 + 10 * i + 5, ports, {
            "utilization": (i + np.arange(8)) / 100.0, "tx_bytes_per_s": np.full(8, 1e9 * (i % 2))})
    backend.settle()
    r = backend.store.range(fabric, (0x1000, 3), "utilization", t0, t0 + 600, 6)
    assert r.t.tolist() == [t0 + 100 * k for k in range(6)]
    expected = [(np.arange(10 * k, 10 * k + 10) + 2).mean() / 100 for k in range(6)]
    np.testing.assert_allclose(r.values, expected, rtol=1e-3)
    rate = backend.store.range(fabric, (0x1000, 1), "tx_bytes_per_s", t0, t0 + 600, 3)
    np.testing.assert_allclose(rate.values, [5e8] * 3, rtol=1e-3)  # byte rates above float16's range
    wide = backend.store.range(fabric, (0x1000, 3), "utilization", t0 - 600, t0 + 1200, 3)
    assert np.isnan(wide.values[0]) and np.isnan(wide.values[2])  # missing is never zero
    np.testing.assert_allclose(wide.values[1], (np.arange(60) + 2).mean() / 100, rtol=1e-3)
    unknown = backend.store.range(fabric, (0x1000, 40), "utilization", t0, t0 + 600, 6)
    assert np.isnan(unknown.values).all()


def test_top_n_over_a_window_across_fabrics(backend, t0):
    a, b = next(_fabric_ids), next(_fabric_ids)
    ports = switch_ports(0x2000, 16)
    rng = np.random.default_rng(7)
    base = rng.permutation(16).astype(float)
    for i in range(30):
        backend.store.write(a, t0 + 10 * i + 5, ports, {
            "error_SymbolErrorCounter_per_s": base + (i % 3) * 0.01,
            "link_up": np.where(np.arange(16) == 4, float(i % 10 != 3), 1.0)})
        backend.store.write(b, t0 + 10 * i + 5, ports, {"error_SymbolErrorCounter_per_s": base + 0.5})
    backend.settle()
    top = backend.store.top([a, b], "error_SymbolErrorCounter_per_s", t0, t0 + 300, 3)
    assert top.dtype == TOP
    assert [(int(r["fabric"]), int(r["port"])) for r in top] == [
        (b, int(np.argsort(base)[-1]) + 1), (a, int(np.argsort(base)[-1]) + 1), (b, int(np.argsort(base)[-2]) + 1)]
    np.testing.assert_allclose(top["value"][0], base.max() + 0.5, rtol=1e-3)
    down = backend.store.top(a, "link_up", t0, t0 + 300, 1)  # a min series: the port that went down first
    assert (int(down["guid"][0]), int(down["port"][0]), float(down["value"][0])) == (0x2000, 5, 0.0)
    assert len(backend.store.top(a, "utilization", t0, t0 + 300, 5)) == 0  # never written: nothing ranked


def test_ports_of_a_switch_side_by_side(backend, t0):
    fabric = next(_fabric_ids)
    ports = np.concatenate([switch_ports(0x3000, 4), switch_ports(0x3001, 2)])
    for i in range(12):
        backend.store.write(fabric, t0 + 10 * i + 5, ports, {"xmit_wait_per_s": ports["port"] * 100.0})
    backend.settle()
    s = backend.store.ports_of_switch(fabric, 0x3000, "xmit_wait_per_s", t0, t0 + 120, 2)
    assert s.ports.tolist() == [1, 2, 3, 4]
    np.testing.assert_allclose(s.values, np.repeat([[100.0], [200.0], [300.0], [400.0]], 2, axis=1), rtol=1e-3)
    assert backend.store.ports_of_switch(fabric, 0x9999, "xmit_wait_per_s", t0, t0 + 120, 2).values.shape == (0, 2)


def test_ports_side_by_side_in_the_order_asked(backend, t0):
    """Any ports (a job's links), across nodes, in the order asked; one never written all NaN."""
    fabric = next(_fabric_ids)
    ports = np.concatenate([switch_ports(0x7000, 3), switch_ports(0x7001, 3)])
    level = ports["port"] / 10.0 + (ports["guid"] - 0x7000)
    for i in range(12):
        backend.store.write(fabric, t0 + 10 * i + 5, ports, {"utilization": level})
    backend.settle()
    asked = ports_of([(0x7001, 2), (0x7000, 3), (0x7002, 1), (0x7000, 1)])
    got = backend.store.ranges(fabric, asked, "utilization", t0, t0 + 120, 2)
    assert got.ports.tolist() == asked.tolist() and got.values.shape == (4, 2) and got.t.tolist() == [t0, t0 + 60]
    np.testing.assert_allclose(got.values[[0, 1, 3]], np.repeat([[1.2], [0.3], [0.1]], 2, axis=1), rtol=1e-3)
    assert np.isnan(got.values[2]).all()
    assert backend.store.ranges(fabric, ports_of([]), "utilization", t0, t0 + 120, 2).values.shape == (0, 2)


def test_a_recabled_port_keeps_its_history(backend, t0):
    """Ports by identity: the sweeps after a re-cabling list the ports in another order, without one and with a
    new one; each port's series continues, whatever its index in the sweep."""
    fabric = next(_fabric_ids)
    before = ports_of([(0x4000, 1), (0x4000, 2), (0x4000, 3), (0x4001, 1)])
    after = ports_of([(0x4001, 1), (0x4000, 3), (0x4000, 2), (0x4002, 7)])  # 0x4000/1 cut, 0x4002/7 new

    def value(ports):
        return (ports["guid"] % 16) * 10.0 + ports["port"]

    for i in range(30):
        ports = before if i < 15 else after
        backend.store.write(fabric, t0 + 10 * i + 5, ports, {"rx_bytes_per_s": value(ports), "link_up": np.ones(4)})
    backend.settle()
    moved = backend.store.range(fabric, (0x4000, 2), "rx_bytes_per_s", t0, t0 + 300, 30)
    np.testing.assert_allclose(moved.values, 2.0, rtol=1e-3)
    cut = backend.store.range(fabric, (0x4000, 1), "rx_bytes_per_s", t0, t0 + 300, 2)
    assert cut.values[0] == pytest.approx(1.0, rel=1e-3) and np.isnan(cut.values[1])
    new = backend.store.range(fabric, (0x4002, 7), "rx_bytes_per_s", t0, t0 + 300, 2)
    assert np.isnan(new.values[0]) and new.values[1] == pytest.approx(27.0, rel=1e-3)


def test_history_older_than_the_retention_is_not_kept(backend, t0):
    fabric, ports = next(_fabric_ids), switch_ports(0x5000, 2)
    old = t0 - 91 * DAY
    backend.store.write(fabric, old + 5, ports, {"utilization": np.array([0.5, 0.25])})
    backend.store.write(fabric, t0 + 5, ports, {"utilization": np.array([0.75, 0.125])})
    backend.store.write(fabric, t0 + 905, ports, {"utilization": np.array([0.75, 0.125])})
    backend.settle()
    assert np.isnan(backend.store.range(fabric, (0x5000, 1), "utilization", old, old + 600, 1).values).all()
    assert backend.store.range(fabric, (0x5000, 1), "utilization", t0, t0 + 600, 1).values[0] == pytest.approx(0.75)


def test_bad_input_is_named(backend, t0):
    ports = switch_ports(0x6000, 3)
    with pytest.raises(KeyError, match="unknown series 'utilisation'"):
        backend.store.write(1, t0, ports, {"utilisation": np.zeros(3)})
    with pytest.raises(ValueError, match="series 'utilization': shape"):
        backend.store.write(1, t0, ports, {"utilization": np.zeros(2)})
    with pytest.raises(ValueError, match="duplicate"):
        backend.store.write(1, t0, ports[[0, 0, 1]], {"utilization": np.zeros(3)})
    with pytest.raises(ValueError, match="end"):
        backend.store.range(1, (0x6000, 1), "utilization", t0, t0, 10)
    with pytest.raises(KeyError):
        backend.store.top(1, "nope", t0, t0 + 1, 3)


def test_bins_count_their_samples_beside_mean_peak_and_sum(backend, t0):
    """What a one-minute summary serves: per port and minute the samples stored, their mean, peak and sum (a port
    not measured in some sweeps counts fewer; one never written counts none, its values NaN, never zero)."""
    fabric = next(_fabric_ids)
    ports = switch_ports(0x8000, 3)
    for i in range(12):  # two minutes of 10 s sweeps; port 2 not measured in the first 4, down in sweeps 7 and 8
        util = np.array([0.1 * (i % 6), 0.5 if i >= 4 else np.nan, 0.25])
        backend.store.write(fabric, t0 + 10 * i + 5, ports, {
            "utilization": util, "link_up": np.array([1.0, 0.0 if i in (7, 8) else 1.0, 1.0])})
    backend.settle()
    asked = ports_of([(0x8000, 1), (0x8000, 2), (0x8000, 9)])
    got = backend.store.stats(fabric, asked, "utilization", t0, t0 + 120, 2)
    assert got.ports.tolist() == asked.tolist() and got.t.tolist() == [t0, t0 + 60]
    assert got.count.tolist() == [[6, 6], [2, 6], [0, 0]]
    np.testing.assert_allclose(got.mean[:2], [[0.25, 0.25], [0.5, 0.5]], rtol=1e-3)
    np.testing.assert_allclose(got.max[:2], [[0.5, 0.5], [0.5, 0.5]], rtol=1e-3)
    np.testing.assert_allclose(got.sum[:2], [[1.5, 1.5], [1.0, 3.0]], rtol=1e-3)
    assert np.isnan(got.mean[2]).all() and np.isnan(got.max[2]).all() and np.isnan(got.sum[2]).all()
    assert got.sample_s in (None, 10.0)
    wide = backend.store.fabric_stats(fabric, "utilization", t0, t0 + 120, 2)
    assert wide.count.tolist() == [14, 18] and wide.sweeps.tolist() == [6, 6]
    np.testing.assert_allclose(wide.sum, [1.5 + 1.0 + 1.5, 1.5 + 3.0 + 1.5], rtol=1e-3)
    np.testing.assert_allclose(wide.max, [0.5, 0.5], rtol=1e-3)
    up = backend.store.fabric_stats(fabric, "link_up", t0, t0 + 120, 2)
    assert up.short.tolist() == [0.0, 2.0]  # the most sweeps one port was down, per minute
    none = backend.store.fabric_stats(fabric, "utilization", t0 + 600, t0 + 720, 2)
    assert none.count.tolist() == [0, 0] and np.isnan(none.sum).all() and np.isnan(none.max).all()
