"""The leader's per-port history (issue 40): a tick's per-link arrays become one row per out port, written at most
every interval, off the tick's thread, with the graded health where it is published."""

import asyncio
import time

import numpy as np
import pytest

from fabric_engine.state import FabricState
from fabric_engine.telemetry.counters import COLUMN, COLUMNS, ERROR_COUNTERS
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.publishing import Tick
from ibweb.live.history.job_runs import JobRuns
from ibweb.live.history.tsdb_publisher import (
    ErrorRates,
    GonePorts,
    JobNotes,
    Sweep,
    SweepWriter,
    TsdbPublisher,
    port_sweep,
)
from ibweb.runtime import health, record
from ibweb.tsdb.embedded import EmbeddedStore

F = fat_tree(hosts=8, radix=4)
N = 2 * F.num_links
T0 = float(int(time.time() // 600) * 600 - 1200)


def state(t: float, scale: float = 1.0, stale: np.ndarray | None = None, n: int = N) -> FabricState:
    rate = (np.arange(n, dtype=np.float32) + 1) * scale
    return FabricState(seq=int(t), t=t, tick_s=1.0, rate_gbps=rate, util=rate / 1000, xmit_wait=rate * 10,
                       stale=stale)



def test_port_rows_are_out_ports_both_ways():
    stale = np.zeros(N, dtype=bool)
    stale[5] = True
    a = F.a_node[2]
    down = [{"kind": "link_down", "condition": True, "guids": [f"0x{int(F.guid[a]):016x}",
                                                                f"0x{int(F.guid[F.b_node[2]]):016x}"],
             "ports": [int(F.a_port[2]), int(F.b_port[2])]}]
    s = Sweep.of("v1", Tick(state(T0, stale=stale), F, {}, down=down))
    hp = {"node": np.array([F.dl_src[7]], np.int32), "port": np.array([F.dl_src_port[7]], np.uint8),
          "effective": np.array([1e-12]), "temp": np.array([55.0]), "raw": np.array([1e-9]),
          "grade": np.array([0], np.int8)}
    ports, values = port_sweep(s, hp)
    assert len(ports) == N
    np.testing.assert_array_equal(ports["guid"], F.guid[F.dl_src])
    np.testing.assert_array_equal(ports["port"], F.dl_src_port)
    d, r = 3, int(F.reverse(3))
    assert values["tx_bytes_per_s"][d] == pytest.approx((d + 1) * 1e9 / 8)
    assert values["rx_bytes_per_s"][d] == pytest.approx((r + 1) * 1e9 / 8)
    assert values["utilization"][d] == pytest.approx((d + 1) / 1000, rel=1e-6)
    assert values["xmit_wait_per_s"][d] == pytest.approx((d + 1) * 10)
    assert np.isnan(values["tx_bytes_per_s"][5]) and np.isnan(values["utilization"][5])
    assert np.isnan(values["rx_bytes_per_s"][int(F.reverse(5))])
    assert set(np.flatnonzero(values["link_up"] == 0).tolist()) == {2, int(F.reverse(2))}
    assert values["effective_ber"][7] == 1e-12 and values["module_temperature_c"][7] == 55.0
    assert np.isnan(np.delete(values["effective_ber"], 7)).all()


def test_a_cut_cable_s_ports_are_written_down_until_forgotten():
    """A port the writer wrote that a later sweep's topology lacks (a cable cut) is written ``link_up`` 0 and nothing
    else: down, not unknown; again while it stays away, up to the keep; a sweep of the same ports adds nothing."""
    cut = F.without_links([2])
    gone = GonePorts(keep_s=100.0)
    ports, values = port_sweep(Sweep.of("v1", Tick(state(T0), F, {})))
    same = gone.add(T0, ports, values)
    assert same[0] is ports and same[1] is values
    assert gone.add(T0 + 10, ports, values)[0] is ports  # the same ports again: one comparison
    for dt in (20, 90):
        p, v = port_sweep(Sweep.of("v2", Tick(state(T0 + dt, n=2 * cut.num_links), cut, {})))
        out, got = gone.add(T0 + dt, p, v)
        assert len(out) == len(p) + 2 and out[:len(p)].tolist() == p.tolist()
        lost = {(int(F.guid[F.a_node[2]]), int(F.a_port[2])), (int(F.guid[F.b_node[2]]), int(F.b_port[2]))}
        assert {(int(g), int(q)) for g, q in out[len(p):].tolist()} == lost
        assert got["link_up"][len(p):].tolist() == [0.0, 0.0] and (got["link_up"][:len(p)] == 1).all()
        assert np.isnan(got["utilization"][len(p):]).all() and np.isnan(got["tx_bytes_per_s"][len(p):]).all()
        assert all(len(a) == len(out) for a in got.values())
    p, v = port_sweep(Sweep.of("v2", Tick(state(T0 + 200, n=2 * cut.num_links), cut, {})))  # away past the keep
    assert gone.add(T0 + 200, p, v)[0] is p


@pytest.mark.django_db
def test_publisher_writes_once_per_interval_off_the_tick(tmp_path):
    row, _ = ensure_demo()
    version = record.publish(row.pk, record.row_identity(row), F, None)
    store = EmbeddedStore(tmp_path / "tsdb.sqlite3")
    pub = TsdbPublisher(row, interval_s=10, store=lambda: store)
    health.write_ports(row.pk, version, T0, {"node": np.array([F.dl_src[0]], np.int32),
                                            "port": np.array([F.dl_src_port[0]], np.uint8),
                                            "effective": np.array([2e-13]), "temp": np.array([40.0]),
                                            "raw": np.array([1e-9]), "grade": np.array([0], np.int8)})

    async def run() -> None:
        for i in range(31):  # 1 s ticks: written at T0, T0+10, T0+20, T0+30
            await pub.publish(version, Tick(state(T0 + i + 1, scale=1 + i // 10), F, {}))

    asyncio.run(run())
    assert pub.writer.drain(30)
    assert pub.writer.written == 4 and pub.writer.dropped == 0 and pub.writer.failed == 0
    key = (int(F.guid[F.dl_src[0]]), int(F.dl_src_port[0]))
    got = store.range(row.pk, key, "tx_bytes_per_s", T0, T0 + 40, 4)
    np.testing.assert_allclose(got.values, np.array([1, 2, 3, 4]) * 1e9 / 8, rtol=1e-3)
    ber = store.range(row.pk, key, "effective_ber", T0, T0 + 40, 4)
    np.testing.assert_allclose(ber.values, 2e-13, rtol=1e-3)
    store.close()


def test_writer_drops_oldest_when_full(tmp_path, caplog):
    store = EmbeddedStore(tmp_path / "tsdb.sqlite3")
    writer = SweepWriter(1, "f", lambda: store, lambda s: None, capacity=2)
    with store._lock:  # the store is busy: the writer's thread waits in its first write
        for i in range(5):
            writer.put(Sweep.of(None, Tick(state(T0 + 10 * i + 1), F, {})))
            time.sleep(0.05)
    assert writer.drain(10)
    assert writer.dropped == 2 and writer.written == 3
    got = store.range(1, (int(F.guid[F.dl_src[0]]), int(F.dl_src_port[0])), "link_up", T0, T0 + 50, 5)
    np.testing.assert_array_equal(np.isnan(got.values), [False, True, True, False, False])
    assert "oldest queued sweep dropped" in caplog.text
    store.close()


def counters(symbol: np.ndarray | float, **at: tuple[int, float]) -> np.ndarray:
    """Measured counters ``[2L, C]``: every error counter 100 (SymbolErrorCounter ``symbol``), ``at``: counter ->
    (row, value)."""
    out = np.full((N, len(COLUMNS)), np.nan)
    out[:, [COLUMN[c] for c in ERROR_COUNTERS]] = 100.0
    out[:, COLUMN["SymbolErrorCounter"]] = symbol
    for name, (row, value) in at.items():
        out[row, COLUMN[name]] = value
    return out


def test_every_error_counter_becomes_a_rate_between_measured_sweeps():
    errors = ErrorRates()
    series = {f"error_{c}_per_s" for c in ERROR_COUNTERS}

    def values(t: float, measured) -> dict:
        return port_sweep(Sweep.of(None, Tick(state(t), F, {}, measured=measured)), None, errors)[1]

    assert not series & set(values(T0, (counters(100.0), T0)))  # one sweep: no rate yet
    later = counters(100.0 + np.arange(N), PortRcvErrors=(3, 5.0), LinkDownedCounter=(4, 255.0))
    later[5, [COLUMN[c] for c in ERROR_COUNTERS]] = np.nan  # port 5 not read
    got = values(T0 + 10, (later, T0 + 10))
    assert series <= set(got)
    np.testing.assert_allclose(got["error_SymbolErrorCounter_per_s"][[0, 7]], [0.0, 0.7])
    assert np.isnan(got["error_PortRcvErrors_per_s"][3]) and got["error_PortRcvErrors_per_s"][2] == 0  # a reset
    assert np.isnan(got["error_LinkDownedCounter_per_s"][4])  # latched at its 8 bits: unknown
    assert all(np.isnan(got[name][5]) for name in series)  # not read: missing, never zero
    again = values(T0 + 11, (later, T0 + 10))  # the same sweep on the next write: the same rates
    np.testing.assert_array_equal(again["error_SymbolErrorCounter_per_s"], got["error_SymbolErrorCounter_per_s"])
    assert not series & set(values(T0 + 20, None))  # no counters (an emulated fabric): no error series


@pytest.mark.django_db
def test_the_running_jobs_are_noted_with_their_ports_until_they_end(tmp_path):
    row, _ = ensure_demo()
    d = [0, 5, int(F.reverse(5))]
    catalog = [{"id": "j1", "tenant": "acme", "pattern": "ring", "hosts": [], "links": d, "spec": {}}]
    version = record.publish(row.pk, record.row_identity(row), F, None, catalog)
    runs = JobRuns(tmp_path / "runs.sqlite3")
    notes = JobNotes(row, lambda: runs)
    for t in (T0, T0 + 10, T0 + 70):  # noted at T0, not at T0 + 10 (within a minute), again at T0 + 70
        notes(Sweep.of(version, Tick(state(t), F, {})))
    run = runs.get(row.pk, "j1")
    assert (run.tenant, run.first, run.last) == ("acme", T0, T0 + 70)
    assert sorted(zip(run.ports["guid"].tolist(), run.ports["port"].tolist(), strict=True)) == sorted(
        (int(F.guid[F.dl_src[k]]), int(F.dl_src_port[k])) for k in d)
    record.publish_jobs(row.pk, version, [])  # the job ended: noted once more at the change, then kept
    notes(Sweep.of(version, Tick(state(T0 + 80), F, {})))
    assert runs.get(row.pk, "j1").last == T0 + 80
    notes(Sweep.of(version, Tick(state(T0 + 200), F, {})))
    assert runs.get(row.pk, "j1").last == T0 + 80 and runs.get(row.pk, "other") is None
    runs.close()
