"""Two sweeps + the Fabric -> FabricState: rates, utilization, XmitWait, stale links, alerts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fabric_engine.telemetry import CounterSamples, Thresholds, link_port_keys, observe
from fabric_engine.telemetry.counters import COLUMN
from fabric_engine.topology import KIND_SWITCH
from fabric_engine.topology.generate import fat_tree


@pytest.fixture(scope="module")
def fabric():
    return fat_tree(hosts=8, radix=4, speed="HDR")  # 4x HDR: 200 Gb/s per direction


def switch_sweep(fabric, t: float, per_link: dict[str, np.ndarray], extended: bool = True) -> CounterSamples:
    """Counters of every switch out port, as perfquery on each switch port would read them."""
    xkey, _ = link_port_keys(fabric)
    sw = fabric.kind[fabric.dl_src] == KIND_SWITCH
    recs = []
    for d in np.flatnonzero(sw):
        recs.append({"lid": int(xkey[d] // 256), "port": int(xkey[d] % 256), "t": t, "extended": extended,
                     "counters": {name: int(v[d]) for name, v in per_link.items()}})
    return CounterSamples.from_records(recs)


def test_rates_and_utilization_are_what_the_counters_imply(fabric):
    n = 2 * fabric.num_links
    words0 = np.arange(n, dtype=np.int64) * 1000
    # 25 GB/s = 200 Gb/s on link 0, 50 Gb/s on others; over 2 s
    gbps = np.full(n, 50.0)
    gbps[0] = 200.0
    words1 = words0 + (gbps * 1e9 / 8 * 2.0 / 4).astype(np.int64)
    rcv = {"PortRcvData": words0 * 0}
    prev = switch_sweep(fabric, 100.0, {"PortXmitData": words0, **rcv})
    cur = switch_sweep(fabric, 102.0, {"PortXmitData": words1, **rcv})
    obs = observe(fabric, prev, cur, seq=7, tick_s=1.0)
    st = obs.state
    sw_out = fabric.kind[fabric.dl_src] == KIND_SWITCH
    assert np.allclose(st.rate_gbps[sw_out], gbps[sw_out], rtol=1e-6)
    assert np.allclose(st.util[sw_out], gbps[sw_out] / 200.0, rtol=1e-6)
    assert st.seq == 7 and st.t == 102.0
    # host -> leaf links: hosts were not read, their switch port's PortRcvData (all 0 increase) stands in
    assert not obs.stale.any()
    assert (st.rate_gbps[~sw_out] == 0).all()
    into_hosts = fabric.kind[fabric.dl_dst] != KIND_SWITCH
    assert st.throughput_gbps == pytest.approx(float(gbps[into_hosts].sum()), rel=1e-6)
    frame = json.loads(json.dumps(st.frame_header({"links": fabric.num_links}), allow_nan=False))
    assert frame["type"] == "frame" and frame["seq"] == 7 and frame["totals"]["links"] == fabric.num_links
    assert all(a.shape == (n,) for a in st.link_arrays().values())


def test_receive_counter_stands_in_for_an_unread_transmit_port(fabric):
    n = 2 * fabric.num_links
    host_out = np.flatnonzero(fabric.kind[fabric.dl_src] != KIND_SWITCH)
    rev = np.asarray(fabric.reverse(host_out))
    rcv0 = np.zeros(n, np.int64)
    rcv1 = np.zeros(n, np.int64)
    rcv1[rev] = 250_000_000  # words received at the leaf port from the host in 1 s = 8 Gb/s
    prev = switch_sweep(fabric, 0.0, {"PortRcvData": rcv0, "PortXmitData": rcv0})
    cur = switch_sweep(fabric, 1.0, {"PortRcvData": rcv1, "PortXmitData": rcv0})
    st = observe(fabric, prev, cur, seq=1).state
    assert np.allclose(st.rate_gbps[host_out], 8.0)


def test_missing_samples_mark_links_stale_without_inventing_rates(fabric):
    n = 2 * fabric.num_links
    words = np.zeros(n, np.int64)
    prev = switch_sweep(fabric, 0.0, {"PortXmitData": words, "PortRcvData": words})
    cur_all = switch_sweep(fabric, 1.0, {"PortXmitData": words + 1000, "PortRcvData": words + 1000})
    leaf = fabric.node("leaf01")
    keep = cur_all.lid != fabric.lid[leaf]  # the shard with leaf01 failed
    cur = CounterSamples(cur_all.lid[keep], cur_all.port[keep], cur_all.values[keep], cur_all.bits[keep],
                         cur_all.t[keep])
    obs = observe(fabric, prev, cur, seq=2)
    from_leaf = fabric.dl_src == leaf
    # leaf01's host links: neither the leaf port nor the host was read
    host_links = from_leaf & (fabric.kind[fabric.dl_dst] != KIND_SWITCH)
    assert obs.stale[host_links].all() and (obs.state.rate_gbps[host_links] == 0).all()
    # leaf01 -> spine: the spine's PortRcvData still gives the rate
    up = from_leaf & (fabric.kind[fabric.dl_dst] == KIND_SWITCH)
    assert not obs.stale[up].any() and np.allclose(obs.state.rate_gbps[up], 4000 * 8 / 1e9)
    stale_alert = [a for a in obs.state.alerts if a["kind"] == "stale"]
    assert stale_alert and stale_alert[0]["count"] == int(obs.stale.sum())
    assert obs.state.stale is obs.stale  # the state carries every stale link, not the alert's first 50


def test_xmit_wait_is_normalized_per_tick_and_link_rate(fabric):
    n = 2 * fabric.num_links
    zero = np.zeros(n, np.int64)
    wait = np.zeros(n, np.int64)
    # HDR lane: 50 Gb/s, symbol time 0.16 ns; tick code 9 -> 10 symbol times = 1.6 ns.
    # Waiting 25% of 2 s = 0.5 s = 312.5e6 ticks.
    wait[0] = 312_500_000
    prev = switch_sweep(fabric, 0.0, {"PortXmitWait": zero, "PortXmitData": zero}, extended=False)
    rate_words = zero.copy()
    rate_words[0] = int(50e9 / 8 * 2 / 4)  # 50 Gb/s carried (fits the 32-bit basic counter)
    cur = switch_sweep(fabric, 2.0, {"PortXmitWait": wait, "PortXmitData": rate_words}, extended=False)
    obs = observe(fabric, prev, cur, seq=1, tick_s=0.5, tick_code=9)
    assert obs.wait_share[0] == pytest.approx(0.25)
    assert obs.state.xmit_wait[0] == pytest.approx(312_500_000 / 2 * 0.5)
    assert obs.state.offered_gbps[0] == pytest.approx(50.0 / 0.75, rel=1e-5)
    assert obs.state.hotspots[0]["link"] == 0


def test_error_rates_over_threshold_raise_alerts(fabric):
    n = 2 * fabric.num_links
    zero = np.zeros(n, np.int64)
    sym = zero.copy()
    sym[3] = 30  # 30 symbol errors in 60 s: 30/min, threshold 10/min -> warning
    sym[5] = 5000  # critical
    prev = switch_sweep(fabric, 0.0, {"SymbolErrorCounter": zero}, extended=False)
    cur = switch_sweep(fabric, 60.0, {"SymbolErrorCounter": sym}, extended=False)
    alerts = [a for a in observe(fabric, prev, cur, seq=1).state.alerts if a["kind"] == "errors"]
    assert [(a["link"], a["severity"]) for a in alerts] == [(5, "critical"), (3, "warning")]
    assert alerts[1]["counter"] == "SymbolErrorCounter" and alerts[1]["rate_per_min"] == pytest.approx(30.0)
    quiet = Thresholds(per_minute={"SymbolErrorCounter": 100_000.0})
    assert not [a for a in observe(fabric, prev, cur, seq=1, thresholds=quiet).state.alerts if a["kind"] == "errors"]
    with pytest.raises(ValueError):
        Thresholds(per_minute={"PortXmitData": 1.0})


def test_counter_reset_between_sweeps_is_reported(fabric):
    n = 2 * fabric.num_links
    big = np.full(n, 10_000, np.int64)
    small = np.full(n, 10, np.int64)
    obs = observe(fabric, switch_sweep(fabric, 0.0, {"PortXmitData": big}),
                  switch_sweep(fabric, 1.0, {"PortXmitData": small}), seq=1)
    assert (obs.state.rate_gbps >= 0).all()
    assert any(a["kind"] == "counter_reset" for a in obs.state.alerts)
    assert obs.deltas.delta[:, COLUMN["PortXmitData"]].min() >= 0


def test_traffic_between_switches_is_counted_apart_from_what_hosts_receive(fabric):
    """120 Gb/s on one leaf-spine cable and nothing into hosts: 0 delivered, 120 between switches."""
    n = 2 * fabric.num_links
    words0 = np.zeros(n, dtype=np.int64)
    core = np.flatnonzero((fabric.kind[fabric.dl_src] == KIND_SWITCH) & (fabric.kind[fabric.dl_dst] == KIND_SWITCH))
    gbps = np.zeros(n)
    gbps[core[0]] = 120.0
    words1 = (gbps * 1e9 / 8 * 2.0 / 4).astype(np.int64)
    rcv = {"PortRcvData": words0}
    obs = observe(fabric, switch_sweep(fabric, 100.0, {"PortXmitData": words0, **rcv}),
                  switch_sweep(fabric, 102.0, {"PortXmitData": words1, **rcv}), seq=1, tick_s=1.0)
    assert obs.state.throughput_gbps == 0.0
    assert obs.state.switch_gbps == pytest.approx(120.0, rel=1e-6)
    totals = obs.state.frame_header({})["totals"]
    assert totals["throughput_gbps"] == 0.0 and totals["switch_gbps"] == pytest.approx(120.0)
