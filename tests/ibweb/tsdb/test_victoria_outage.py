"""Nothing lost while VictoriaMetrics is down for a minute: the sweeps wait in the store's backlog and are sent again,
in order, when the server is back (the real server, stopped and started again on its data dir and port)."""

from __future__ import annotations

import time

import numpy as np

import tests.support.victoria as victoria_support
from ibweb.tsdb.victoria import VictoriaStore
from tests.support.victoria import Victoria

PORTS = np.array([(0x0002C90300000001, 1), (0x0002C90300000001, 2), (0x0002C90300000002, 7)],
                 dtype=[("guid", "<u8"), ("port", "<u2")])


def sweep(i: int) -> dict[str, np.ndarray]:
    return {"utilization": np.array([0.1, 0.2, 0.3]) + i, "link_up": np.ones(3)}


def test_a_minute_down_loses_no_sweep(tmp_path, monkeypatch):
    server = Victoria(tmp_path)
    store = VictoriaStore(server.url, timeout=2)
    t0 = float(int(time.time() - 3600) // 600 * 600) + 1  # inside each bin ((t - w, t] at VictoriaMetrics)
    try:
        store.write(1, t0, PORTS, sweep(0))
        server.flush()
        server.stop()
        for i in range(1, 7):  # a minute of 10 s sweeps while it is down
            store.write(1, t0 + 10 * i, PORTS, sweep(i))
        assert store.backlog()[0] == 6 and store.dropped == 0
        monkeypatch.setattr(victoria_support, "free_port", lambda: server.port)
        server = Victoria(tmp_path)  # same data dir, same port
        store.write(1, t0 + 70, PORTS, sweep(7))
        assert store.backlog() == (0, 0)
        server.flush()
        got = store.range(1, (0x0002C90300000002, 7), "utilization", t0 - 1, t0 + 79, 8)
        np.testing.assert_allclose(got.values, 0.3 + np.arange(8))
        up = store.range(1, (0x0002C90300000001, 2), "link_up", t0 - 1, t0 + 79, 8)
        np.testing.assert_array_equal(up.values, np.ones(8))
    finally:
        store.close()
        server.stop()


def test_backlog_bounded_drops_oldest(tmp_path):
    store = VictoriaStore("http://127.0.0.1:9", timeout=0.5, backlog_bytes=1)  # discard port: refused
    for i in range(3):
        store.write(1, 1000.0 + 10 * i, PORTS, sweep(i))
    assert store.dropped == 2 and store.backlog()[0] == 1
    assert store._backlog[0][0] == 1020.0  # the newest kept
