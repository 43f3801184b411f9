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
    with urllib.request.urlopen(f"{victoria.url}/api/v1/series?match[]={{fabric=\"900\"}}") as resp:
        series = json.load(resp)["data"]
    assert len(series) == 6
    assert {frozenset(s) for s in series} == {frozenset({"__name__", "fabric", "guid", "port"})}


def test_a_refused_write_names_the_server():
    store = VictoriaStore(f"http://127.0.0.1:{free_port()}")
    with pytest.raises(TsdbError, match="127.0.0.1.*/api/v1/write"):
        store.write(1, time.time(), switch_ports(1, 2), {"utilization": np.ones(2)})


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
