"""Remote-write bodies read back field by field (a small protobuf reader), and VictoriaMetrics' view of them."""

from __future__ import annotations

import json
import time
import urllib.request

import cramjam
import numpy as np
import pytest

from ibweb.tsdb.remote_write import PortLabels, compressed, varint, write_request
from ibweb.tsdb.victoria import TsdbError, VictoriaStore
from tests.ibweb.tsdb.test_store import switch_ports
from tests.support.server import free_port


def read_varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[i]
        value |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return value, i
        shift += 7


def fields(buf: bytes):
    i = 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        tag, wire = key >> 3, key & 7
        if wire == 2:
            n, i = read_varint(buf, i)
            yield tag, buf[i:i + n]
            i += n
        elif wire == 1:
            yield tag, np.frombuffer(buf[i:i + 8], "<f8")[0]
            i += 8
        else:
            v, i = read_varint(buf, i)
            yield tag, v


def decode(body: bytes) -> list[tuple[dict, list]]:
    out = []
    for tag, ts in fields(body):
        assert tag == 1
        labels, samples = {}, []
        for t, part in fields(ts):
            inner = dict(fields(part))
            if t == 1:
                labels[inner[1].decode()] = inner[2].decode()
            else:
                samples.append((inner[1], inner[2]))
        out.append((labels, samples))
    return out


def test_varint():
    assert varint(0) == b"\x00" and varint(300) == b"\xac\x02" and read_varint(varint(2**41 + 5), 0)[0] == 2**41 + 5


def test_a_series_body_reads_back_sorted_labels_and_leaves_nan_out():
    guids = np.array([0x1, 0xFFFF_FFFF_FFFF_FFFF, 0x2], dtype=np.uint64)
    labels = PortLabels(7, guids, np.array([1, 255, 36], dtype=np.uint16))
    body = write_request("ibweb_port_" + "x" * 90, labels, np.array([1.5, np.nan, 2e10]), 1_800_000_000_123)
    got = decode(bytes(cramjam.snappy.decompress_raw(compressed(body))))
    assert [list(lab) for lab, _ in got] == [["__name__", "fabric", "guid", "port"]] * 2  # sorted by name
    assert got[0] == ({"__name__": "ibweb_port_" + "x" * 90, "fabric": "7", "guid": "0x0000000000000001",
                       "port": "1"}, [(1.5, 1_800_000_000_123)])  # a message over 127 bytes: 2-byte length
    assert got[1][0]["guid"] == "0x0000000000000002" and got[1][1] == [(2e10, 1_800_000_000_123)]
    assert write_request("m", labels, np.full(3, np.nan), 0) == b""


def test_victoria_holds_one_series_per_port_and_metric(victoria):
    store = VictoriaStore(victoria.url)
    ports = switch_ports(0xABC, 3)
    for i in range(5):  # five sweeps: still one series per (port, metric), no label per tick
        store.write(900, time.time() - 600 + 10 * i, ports,
                    {"utilization": np.ones(3), "error_PortRcvErrors_per_s": np.zeros(3)})
    victoria.flush()
    # a start given: without one VictoriaMetrics lists the series of the current UTC day only (a test run past midnight)
    since = int(time.time() - 3600)
    with urllib.request.urlopen(f"{victoria.url}/api/v1/series?match[]={{fabric=\"900\"}}&start={since}") as resp:
        series = json.load(resp)["data"]
    assert len(series) == 6
    assert {frozenset(s) for s in series} == {frozenset({"__name__", "fabric", "guid", "port"})}


def test_an_unreachable_server_is_named_and_the_sweep_kept(caplog):
    store = VictoriaStore(f"http://127.0.0.1:{free_port()}")
    store.write(1, time.time(), switch_ports(1, 2), {"utilization": np.ones(2)})
    assert store.backlog()[0] == 1 and "127.0.0.1" in caplog.text and "/api/v1/write" in caplog.text


def test_a_refused_write_names_the_server(victoria):
    store = VictoriaStore(f"{victoria.url}/no/such/prefix")
    with pytest.raises(TsdbError, match="127.0.0.1.*/api/v1/write: HTTP 4"):
        store.write(1, time.time(), switch_ports(1, 2), {"utilization": np.ones(2)})
    assert store.backlog() == (0, 0)  # refused: it would be refused again


def test_a_sweep_larger_than_a_request_goes_in_batches(victoria, monkeypatch):
    from ibweb.tsdb import victoria as backend

    monkeypatch.setattr(backend, "BATCH", 4)
    store, ports, t = VictoriaStore(victoria.url), switch_ports(0xBA7C, 10), time.time() - 900
    for i in range(3):
        store.write(901, t + 10 * i, ports, {"utilization": ports["port"] / 100.0})
    victoria.flush()
    assert len(store._labels) == 3  # three batches, their labels encoded once each
    side = store.ports_of_switch(901, 0xBA7C, "utilization", t - 5, t + 25, 3)
    assert side.ports.tolist() == list(range(1, 11))
    np.testing.assert_allclose(side.values, np.repeat(np.arange(1, 11)[:, None] / 100.0, 3, axis=1))


def test_several_sweeps_in_one_request_arrive_each(victoria):
    """Three sweeps per request: each port's labels once with up to three samples, NaN (a hole) left out."""
    store = VictoriaStore(victoria.url, sweeps_per_request=3)
    ports, t = switch_ports(0x5EE9, 4), float(int(time.time() - 1800) // 600 * 600) + 1
    for i in range(7):
        util = ports["port"] / 100.0 + i
        util[1] = np.nan if i % 2 else util[1]  # port 2 measured every other sweep
        store.write(902, t + 10 * i, ports, {"utilization": util, "link_up": np.ones(4)})
        assert store.backlog() == (0, 0) and len(store._held.get(902, [])) == (i + 1) % 3
    store.flush(held=True)
    victoria.flush()
    side = store.ports_of_switch(902, 0x5EE9, "utilization", t - 1, t + 69, 7)
    np.testing.assert_allclose(side.values[0], 0.01 + np.arange(7))
    np.testing.assert_allclose(side.values[1], np.where(np.arange(7) % 2, np.nan, 0.02 + np.arange(7)))
    body = write_request("m", PortLabels(1, ports["guid"][:2], ports["port"][:2]),
                         np.array([[1.0, np.nan], [np.nan, np.nan]]), np.array([1000, 2000]))
    (tag, series), = list(fields(body))  # the second port has no sample: not sent
    assert tag == 1 and sum(1 for k, _ in fields(series) if k == 2) == 1


def test_ports_with_every_sample_and_ports_missing_some_read_back_the_same():
    """Ports with every sample are laid out by label length as fixed-size messages, the others one by one: both read
    back as each port's labels and present samples, whatever the mix (1- and 2-digit ports, 1 and 3 sweeps)."""
    rng = np.random.default_rng(5)
    guids = 0xE000 + np.arange(40, dtype=np.uint64) // 20
    numbers = np.arange(40) % 20 + 1  # 1..20: labels of two lengths
    labels = PortLabels(12, guids, numbers.astype(np.uint16))
    for sweeps in (1, 3):
        values = rng.uniform(0, 1e10, (40, sweeps))
        values[rng.random((40, sweeps)) < 0.2] = np.nan  # some ports miss some sweeps, a few all
        times = 1_800_000_000_000 + 10_000 * np.arange(sweeps)
        got = decode(write_request("ibweb_port_utilization", labels, values, times))
        seen = {(lab["guid"], lab["port"]): samples for lab, samples in got}
        expected = {(f"0x{int(g):016x}", str(int(p))): [(float(v), int(t)) for v, t in zip(row, times, strict=True)
                                                        if not np.isnan(v)]
                    for g, p, row in zip(guids, numbers, values, strict=True)}
        assert seen == {k: v for k, v in expected.items() if v}
        assert all(lab["__name__"] == "ibweb_port_utilization" and lab["fabric"] == "12" for lab, _ in got)
