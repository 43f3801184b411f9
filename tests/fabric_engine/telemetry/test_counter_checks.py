"""Issue 26, item 4: counters are checked before they become rates.

The hostile tester's figures: a 64-bit counter pushed 1,000 words lower than the last read as
53,344 Gb/s on a 400 Gb/s link; two reads 1 ms apart gave 320 Gb/s from 1e7 words; a read three
years ahead was taken. Each is now held (no rate, the link stale unless the other end's counter
is good) and raises a ``counter_suspect`` alert naming the port, the counter, the reason and the
figures; a 64-bit counter that goes backwards is a reset, never a wrap.
"""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.telemetry import (
    COLUMN,
    FUTURE,
    OUT_OF_ORDER,
    OVER_CAPACITY,
    RESET,
    STALE,
    SUSPECT,
    TOO_CLOSE,
    WRAPPED,
    CounterSamples,
    counter_deltas,
    link_port_keys,
    observe,
)
from fabric_engine.topology import KIND_HOST
from fabric_engine.topology.generate import fat_tree

XD = COLUMN["PortXmitData"]
NOW = 1.75e9  # the clock of every check here
THREE_YEARS = 3 * 365 * 86400.0
#: Old value of the report's counter: 1,000 words more than the value that read as 53,344 Gb/s in 1 s.
REPORT_OLD = 1_667_000_001_000


@pytest.fixture(scope="module")
def ndr():
    return fat_tree(hosts=8, radix=4, speed="NDR")  # 4x NDR: 400 Gb/s per direction


@pytest.fixture(scope="module")
def hdr():
    return fat_tree(hosts=8, radix=4, speed="HDR")  # 4x HDR: 200 Gb/s per direction


def into_host(fabric) -> int:
    """A directed link from a leaf into a host: only the leaf's out port is read (hosts are not)."""
    return int(np.flatnonzero(fabric.kind[fabric.dl_dst] == KIND_HOST)[0])


def out_port(fabric, d: int, t: float, counters: dict[str, int], extended: bool = True) -> CounterSamples:
    """One read of the out port of directed link ``d``."""
    xkey, _ = link_port_keys(fabric)
    k = int(xkey[d])
    return CounterSamples.from_records([{"lid": k // 256, "port": k % 256, "t": t, "extended": extended,
                                         "counters": counters}])


def pair(fabric, d, t0, v0, t1, v1, **kw):
    return observe(fabric, out_port(fabric, d, t0, {"PortXmitData": v0}), out_port(fabric, d, t1, {"PortXmitData": v1}),
                   seq=1, now=NOW, **kw)


def suspects(obs) -> list[dict]:
    return [a for a in obs.state.alerts if a["kind"] == "counter_suspect"]


def test_a_normal_pair_still_gives_the_right_rate(hdr):
    """3e9 words over 10 s = 9.6 Gb/s on a 200 Gb/s link: no flag, no alert."""
    d = into_host(hdr)
    obs = pair(hdr, d, NOW - 10.0, 5_000, NOW, 5_000 + 3_000_000_000)
    assert obs.state.rate_gbps[d] == pytest.approx(9.6, rel=1e-6)
    assert obs.state.util[d] == pytest.approx(9.6 / 200.0, rel=1e-6)
    assert not obs.stale[d] and obs.flags[d] == 0 and not suspects(obs)


def test_64_bit_counter_1000_words_lower_is_a_reset_not_53344_gbps(ndr):
    """The report: 1,000 words lower on a 64-bit counter read 1 s later became 53,344 Gb/s on a 400 Gb/s link."""
    d = into_host(ndr)
    assert ndr.capacity_gbps[d] == 400.0
    for wrap in (False, True):  # 64-bit counters never wrap, whatever the fabric's setting
        obs = pair(ndr, d, NOW - 1.0, REPORT_OLD, NOW, REPORT_OLD - 1000, wrap=wrap)
        assert obs.state.rate_gbps[d] == 0.0 and obs.state.rate_gbps.max() < 400.0
        assert obs.stale[d]
        row = obs.deltas.lookup(link_port_keys(ndr)[0][d:d + 1])[0]
        fl = int(obs.deltas.flags[row, XD])
        assert fl & RESET and fl & OVER_CAPACITY and fl & STALE and not fl & WRAPPED
        # never 2**64 - old + new: the figure is the new value (what a reset would have counted since)
        assert obs.deltas.delta[row, XD] == (REPORT_OLD - 1000) * 4.0
        (alert,) = suspects(obs)
        assert alert["reason"] == "over_capacity" and alert["reset"] is True
        assert alert["counter"] == "PortXmitData" and alert["link"] == d and alert["severity"] == "warning"
        assert alert["port"] == f"{ndr.node_name[ndr.dl_src[d]]} port {int(ndr.dl_src_port[d])}"
        assert alert["rate_gbps"] == pytest.approx(53_344.0) and alert["capacity_gbps"] == 400.0
        assert "53,344 Gb/s" in alert["message"] and alert["port"] in alert["message"]
        assert any(a["kind"] == "counter_reset" for a in obs.state.alerts)


def test_64_bit_reset_to_a_plausible_value_gives_the_rate_of_the_new_value(ndr):
    d = into_host(ndr)
    obs = pair(ndr, d, NOW - 1.0, REPORT_OLD, NOW, 1_000_000_000)  # cleared, then 1e9 words: 32 Gb/s
    assert obs.state.rate_gbps[d] == pytest.approx(32.0) and obs.flags[d] & RESET and not obs.stale[d]
    assert not suspects(obs) and any(a["kind"] == "counter_reset" for a in obs.state.alerts)


def test_32_bit_counter_wraps_only_when_configured(hdr):
    d = into_host(hdr)
    prev = out_port(hdr, d, NOW - 1.0, {"PortXmitData": 0xFFFFFF00}, extended=False)
    cur = out_port(hdr, d, NOW, {"PortXmitData": 0x100}, extended=False)
    wrapped = observe(hdr, prev, cur, seq=1, now=NOW, wrap=True)
    assert wrapped.flags[d] & WRAPPED and wrapped.state.rate_gbps[d] == pytest.approx(0x200 * 32 / 1e9)
    reset = observe(hdr, prev, cur, seq=1, now=NOW)
    assert reset.flags[d] & RESET and not reset.flags[d] & WRAPPED


def test_two_reads_1_ms_apart_are_held_not_320_gbps(ndr):
    """The report: 1e7 words 1 ms apart gave 320 Gb/s (below the 400 Gb/s link: only the interval tells)."""
    d = into_host(ndr)
    obs = pair(ndr, d, NOW - 0.001, 1_000, NOW, 1_000 + 10_000_000)
    assert obs.state.rate_gbps[d] == 0.0 and obs.stale[d] and obs.flags[d] & TOO_CLOSE
    (alert,) = suspects(obs)
    assert alert["reason"] == "too_close" and alert["dt_s"] == pytest.approx(0.001)
    assert alert["rate_gbps"] == pytest.approx(320.0, rel=1e-3) and "1.0 ms" in alert["message"]
    # half a second apart is enough
    assert pair(ndr, d, NOW - 0.5, 1_000, NOW, 1_000 + 10_000_000).state.rate_gbps[d] == pytest.approx(0.64)


def test_same_time_different_values_is_held_and_the_same_read_twice_is_only_stale(ndr):
    d = into_host(ndr)
    obs = pair(ndr, d, NOW, 1_000, NOW, 5_000)
    assert obs.flags[d] & TOO_CLOSE and suspects(obs)
    again = pair(ndr, d, NOW, 1_000, NOW, 1_000)  # a drop directory read twice: nothing new, nothing suspect
    assert again.stale[d] and not again.flags[d] & SUSPECT and not suspects(again)


def test_a_stored_read_three_years_ahead_is_held(ndr):
    d = into_host(ndr)
    ahead = NOW + THREE_YEARS
    obs = pair(ndr, d, NOW - 10.0, 1_000, ahead, 1_000 + 3_000_000_000)
    assert obs.state.rate_gbps[d] == 0.0 and obs.stale[d] and obs.flags[d] & FUTURE
    (alert,) = suspects(obs)
    assert alert["reason"] == "future" and alert["read_at"] == pytest.approx(ahead)
    assert "94,608,000 s ahead" in alert["message"]
    # the next pair: the read from the future is now the previous one, and is held again
    after = pair(ndr, d, ahead, 1_000 + 3_000_000_000, NOW + 10.0, 1_000 + 6_000_000_000)
    assert after.state.rate_gbps[d] == 0.0 and after.flags[d] & FUTURE
    # within the clock margin: a rate
    fine = pair(ndr, d, NOW - 10.0, 1_000, NOW + 200.0, 1_000 + 3_000_000_000)
    assert fine.state.rate_gbps[d] == pytest.approx(96e9 / 210.0 / 1e9) and not suspects(fine)


def test_a_read_older_than_the_previous_is_held(ndr):
    d = into_host(ndr)
    obs = pair(ndr, d, NOW, 2_000_000, NOW - 10.0, 1_000_000)  # a replayed sample
    assert obs.state.rate_gbps[d] == 0.0 and obs.stale[d] and obs.flags[d] & OUT_OF_ORDER
    (alert,) = suspects(obs)
    assert alert["reason"] == "out_of_order" and alert["dt_s"] == pytest.approx(-10.0)
    assert "10.000 s before the previous read" in alert["message"]


def test_more_than_the_link_carries_is_held_with_an_alert(hdr):
    d = into_host(hdr)
    obs = pair(hdr, d, NOW - 1.0, 0, NOW, 12_500_000_000)  # 400 Gb/s on a 200 Gb/s link
    assert obs.state.rate_gbps[d] == 0.0 and obs.stale[d] and obs.flags[d] & OVER_CAPACITY
    (alert,) = suspects(obs)
    assert alert["reason"] == "over_capacity" and alert["rate_gbps"] == pytest.approx(400.0)
    assert alert["capacity_gbps"] == 200.0 and "over 1.5x the link's 200 Gb/s" in alert["message"]
    # up to 1.5x is the clocks' margin: what the counters imply, not clipped
    near = pair(hdr, d, NOW - 1.0, 0, NOW, 8_750_000_000)  # 280 Gb/s
    assert near.state.rate_gbps[d] == pytest.approx(280.0) and not suspects(near)


def test_a_held_transmit_counter_leaves_the_rate_to_the_receive_counter(hdr):
    """Leaf -> spine: the leaf's PortXmitData is implausible, the spine's PortRcvData is not."""
    xkey, rkey = link_port_keys(hdr)
    d = int(np.flatnonzero(hdr.kind[hdr.dl_dst] != KIND_HOST)[0])

    def both(t, xmit, rcv):
        return CounterSamples.from_records([
            {"lid": int(xkey[d] // 256), "port": int(xkey[d] % 256), "t": t, "extended": True,
             "counters": {"PortXmitData": xmit}},
            {"lid": int(rkey[d] // 256), "port": int(rkey[d] % 256), "t": t, "extended": True,
             "counters": {"PortRcvData": rcv}}]).merged()

    obs = observe(hdr, both(NOW - 1.0, 0, 0), both(NOW, 10**12, 125_000_000), seq=1, now=NOW)
    assert obs.state.rate_gbps[d] == pytest.approx(4.0) and not obs.stale[d]
    (alert,) = suspects(obs)
    assert alert["counter"] == "PortXmitData" and alert["link"] == d


def test_a_whole_sweep_too_close_lists_20_ports_and_counts_the_rest(hdr):
    xkey, _ = link_port_keys(hdr)
    sw = np.flatnonzero(hdr.kind[hdr.dl_src] != KIND_HOST)

    def sweep(t, words):
        return CounterSamples.from_records([{"lid": int(xkey[d] // 256), "port": int(xkey[d] % 256), "t": t,
                                             "extended": True, "counters": {"PortXmitData": words}} for d in sw])

    obs = observe(hdr, sweep(NOW - 0.001, 0), sweep(NOW, 1000), seq=1, now=NOW)
    assert (obs.state.rate_gbps == 0).all() and obs.stale[sw].all()
    alerts = suspects(obs)
    assert len(alerts) == 21 and all("port" in a for a in alerts[:20])
    assert alerts[20]["count"] == len(sw) and "port" not in alerts[20]
    assert f"{len(sw)} data counters held" in alerts[20]["message"] and f"{len(sw)} too close" in alerts[20]["message"]


def test_held_error_counters_raise_no_error_alert(hdr):
    """5 symbol errors 1 ms apart would read as 300,000 a minute: held, so no critical error alert."""
    d = into_host(hdr)
    prev = out_port(hdr, d, NOW - 0.001, {"SymbolErrorCounter": 0, "PortXmitData": 0}, extended=False)
    cur = out_port(hdr, d, NOW, {"SymbolErrorCounter": 5, "PortXmitData": 10}, extended=False)
    obs = observe(hdr, prev, cur, seq=1, now=NOW)
    assert not [a for a in obs.state.alerts if a["kind"] == "errors"]
    assert counter_deltas(prev, cur, now=NOW).flags[0, COLUMN["SymbolErrorCounter"]] & TOO_CLOSE
