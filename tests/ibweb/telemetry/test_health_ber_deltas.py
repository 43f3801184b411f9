"""Issue 37, item 2: BER computed from counter deltas where the tool reports none (``perfquery -T``), where two
readings of the same port meet (the health store's merge): error bits over lane rate x lanes x interval, the
interval kept as the window; a cleared counter makes that interval's BER unknown, never a stale or negative one.
And OpenSM's log read by the collector's sweep as link-down evidence."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.health.downs import DownTracker
from fabric_engine.health.port_counters import SOURCE as PORT_COUNTERS
from fabric_engine.health.records import Builder
from ibweb.runtime import health_readings
from ibweb.telemetry.sweeps import run_sweep

from .test_sweep_health_counters import FAKE_TOOLS
from .test_telemetry_app import _clean_cache, make_config  # noqa: F401 (_clean_cache: autouse)

DATA = Path(__file__).parents[2] / "data"
G = 0x98039B0300000001
NDR_BITS = 106.25e9  # one NDR lane's bits per second


def reading(t: float, raw: float, eff: float, lanes=(None,), source: str = "perfquery -T #1", **more):
    b = Builder(source)
    values = {"t": t, "speed": "NDR", "lanes": 4, "raw_errors": raw, "eff_errors": eff, "fec_uncorrectable": eff,
              **more}
    if lanes != (None,):
        values["raw_errors_lane"] = list(lanes)
    b.add(G, "leaf01", 1, values)
    b.add(G, "leaf01", 2, {"t": t, "speed": "NDR", "lanes": 4, "raw_errors": 0.0, "eff_errors": 0.0})
    return b.build()


def port1(fabric_id: int) -> dict:
    rec = health_readings.read(fabric_id)
    i = int(np.flatnonzero(rec.port == 1)[0])
    return {f: rec[f][i] for f in ("raw_ber", "eff_ber", "sym_ber", "window_s", "raw_ber_lane")}


def test_ber_from_the_deltas_between_two_readings_of_a_port_and_unknown_after_a_clear():
    health_readings.put(7, reading(1000.0, 4000, 0, lanes=(1000, 1000, 1000, 1000)))
    first = port1(7)
    assert np.isnan(first["raw_ber"]) and np.isnan(first["window_s"])  # one reading: no interval yet
    health_readings.put(7, reading(1010.0, 21000, 17, lanes=(5250, 5250, 1000, 9500), source="perfquery -T #3"))
    got = port1(7)
    assert got["window_s"] == 10.0
    assert got["raw_ber"] == pytest.approx(17000 / (4 * NDR_BITS * 10))
    assert got["eff_ber"] == pytest.approx(17 / (4 * NDR_BITS * 10))
    assert got["raw_ber_lane"][:4] == pytest.approx([4250 / (NDR_BITS * 10), 4250 / (NDR_BITS * 10), 0,
                                                     8500 / (NDR_BITS * 10)])
    assert np.isnan(got["sym_ber"])  # perfquery -T counts no symbol errors
    # a lane cleared while the port's sum still rose: that interval's BER is unknown, the old one not kept
    health_readings.put(7, reading(1020.0, 30000, 17, lanes=(0, 20000, 1000, 9500)))
    cleared = port1(7)
    assert np.isnan(cleared["raw_ber"]) and np.isnan(cleared["eff_ber"]) and np.isnan(cleared["window_s"])
    assert np.isnan(cleared["raw_ber_lane"]).all()
    # ... and the cleared counters are the next interval's start
    health_readings.put(7, reading(1040.0, 30400, 17, lanes=(100, 20100, 1100, 9600)))
    again = port1(7)
    assert again["window_s"] == 20.0 and again["raw_ber"] == pytest.approx(400 / (4 * NDR_BITS * 20))
    assert again["eff_ber"] == 0.0


def test_another_tools_reading_between_two_sweeps_neither_breaks_nor_fakes_the_interval():
    health_readings.put(8, reading(1000.0, 4000, 0))
    b = Builder("mlxlink leaf01")  # mlxlink reports BER of its own (and counts since its own clear)
    b.add(G, "leaf01", 1, {"t": 1005.0, "eff_ber": 1e-15, "raw_ber": 2e-9, "raw_errors": 99.0, "temp": 41.0})
    health_readings.put(8, b.build())
    assert port1(8)["eff_ber"] == 1e-15  # the tool's own BER stands until the next sweep
    health_readings.put(8, reading(1010.0, 5000, 1))
    got = port1(8)
    assert got["window_s"] == 10.0 and got["raw_ber"] == pytest.approx(1000 / (4 * NDR_BITS * 10))
    assert health_readings.read(8)["temp"][health_readings.read(8).port == 1][0] == 41.0  # the module reading stays


def test_a_port_without_speed_or_lanes_has_no_ber():
    b = Builder("perfquery -T #1")
    b.add(G, "leaf01", 1, {"t": 1000.0, "raw_errors": 0.0, "eff_errors": 0.0})
    health_readings.put(9, b.build())
    b = Builder("perfquery -T #1")
    b.add(G, "leaf01", 1, {"t": 1010.0, "raw_errors": 10.0, "eff_errors": 0.0})
    health_readings.put(9, b.build())
    rec = health_readings.read(9)
    assert np.isnan(rec["raw_ber"][0]) and rec["window_s"][0] == 10.0


@pytest.fixture
def tools(tmp_path):
    script = tmp_path / "fake-diags"
    script.write_text(FAKE_TOOLS)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    ext = tmp_path / "ext.txt"
    env = {"DATA": str(DATA), "EXT": str(ext), "LOG": str(tmp_path / "calls.log")}
    return script, env, ext


def _ext(name: str) -> str:  # the fixture's two RS-FEC ports as leaf01's ports 1 and 2
    return ((DATA / "health" / name).read_text()
            .replace("Lid 20 port 1", "Lid 2 port 1").replace("Lid 21 port 1", "Lid 2 port 2"))


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_give_ber_at_the_discovered_speed_and_width(tools):
    script, env, ext = tools
    config = make_config("ber", command_prefix=[str(script)], environment=env, timeout_s=5.0, health_counters=True)
    ext.write_text(_ext("perfquery_T_before.txt"))
    run_sweep(config)
    rec = health_readings.read(config.fabric_id)
    assert rec["lanes"].tolist() == [4] * 4 and rec.names("speed").tolist() == ["SDR"] * 4  # iblinkinfo: 4X SDR
    assert np.isnan(rec["raw_ber"]).all()
    ext.write_text(_ext("perfquery_T_after.txt"))
    run_sweep(config)
    rec = health_readings.read(config.fabric_id)
    i = int(np.flatnonzero(rec.port == 1)[0])
    window = rec["window_s"][i]
    assert window > 0
    assert rec["raw_ber"][i] * 4 * 2.5e9 * window == pytest.approx(17000)
    assert rec["eff_ber"][i] * 4 * 2.5e9 * window == pytest.approx(17)


UNLINK = ("Mar 05 11:59:00 000900 [420F66C0] 0x04 -> pi_rcv_process_switch_ext_port: Unlinking local node "
          "0x98039b0300000001, port 3\n\t\t\t\tand remote node 0x98039b0300000005, port 1\n")


@pytest.mark.django_db(transaction=True)
def test_the_sweep_reads_opensms_log_from_where_it_stopped(tools, tmp_path):
    script, env, ext = tools
    ext.write_text(_ext("perfquery_T_before.txt"))
    log = tmp_path / "opensm.log"
    config = make_config("osm", command_prefix=[str(script)], environment=env, timeout_s=5.0,
                         opensm_log_path=str(log))
    sweep = run_sweep(config)
    assert any("OpenSM log not read" in w["reason"] for w in sweep.warnings)  # configured, not there yet
    assert health_readings.log_downs(config.fabric_id) == (None, None)
    log.write_text(UNLINK)
    sweep = run_sweep(config)
    assert not any("OpenSM log" in w["reason"] for w in sweep.warnings)
    v1, ev = health_readings.log_downs(config.fabric_id)
    assert ev["guid"].tolist() == [0x98039B0300000001, 0x98039B0300000005] and ev["up"].tolist() == [0, 0]
    run_sweep(config)  # nothing new: nothing added
    assert health_readings.log_downs(config.fabric_id)[0] == v1
    with open(log, "a") as fh:
        fh.write(UNLINK.replace("port 3", "port 4").replace("11:59:00", "11:59:30"))
    run_sweep(config)
    _, ev = health_readings.log_downs(config.fabric_id)
    assert ev["port"].tolist() == [3, 1, 4, 1]
    # a down tracker takes them once; the same evidence again changes nothing
    tracker, poll = DownTracker(), health_readings.LogDowns()
    assert poll.feed(config.fabric_id, tracker) == 4 and poll.feed(config.fabric_id, tracker) == 0
    assert tracker.status()["down"].tolist() == [True] * 3  # leaf01 ports 3 and 4, the far end's port 1
    assert health_readings.LogDowns().feed(config.fabric_id, tracker) == 0


def test_matched_rows_take_lanes_and_speed_from_their_cable_unless_they_give_their_own():
    from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
    from ibweb.runtime.health_ports import cable_rates, match_ports

    fabric = fabric_from_linkinfo(parse_iblinkinfo((DATA / "telemetry" / "iblinkinfo.txt").read_text()))
    b = Builder("t")
    b.add(0, "lid:2", 1, {"raw_errors": 1.0})  # perfquery -T: neither lanes nor speed
    b.add(0, "lid:2", 2, {"lanes": 2, "speed": "HDR"})  # a tool that says them
    b.add(0, "lid:2", 9, {"raw_errors": 1.0})  # leaf01 has 4 ports
    rec, dropped = match_ports(fabric, b.build())
    assert rec.port.tolist() == [1, 2] and dropped.tolist() == ["lid:2/9"]
    assert rec["lanes"].tolist() == [4, 2] and rec.names("speed").tolist() == ["SDR", "HDR"]
    leaf = fabric.node("leaf01")
    lanes, speed = cable_rates(fabric, np.array([leaf, leaf]), np.array([3, 9]))  # a port without a cable
    assert lanes.tolist() == [4, -1] and speed.tolist()[1] == 0 and speed.tolist()[0] > 0


def _basic(sym3: int, sym4: int) -> str:  # leaf01's PortCounters with the SymbolErrorCounter of ports 3 and 4
    text = (DATA / "telemetry" / "perfquery_loop.txt").read_text()
    head3, head4 = "# Port counters: Lid 2 port 3", "# Port counters: Lid 2 port 4"
    before, p3 = text.split(head3)
    p3, p4 = p3.split(head4)
    zero = "SymbolErrorCounter:..............0"
    assert zero in p3 and zero in p4
    return (before + head3 + p3.replace(zero, f"SymbolErrorCounter:..............{sym3}")
            + head4 + p4.replace(zero, f"SymbolErrorCounter:..............{sym4}"))


@pytest.mark.django_db(transaction=True)
def test_symbol_ber_of_the_ports_perfquery_T_does_not_count_from_their_PortCounters(tools, tmp_path):
    """Ports 3 and 4 of leaf01 have no ``perfquery -T`` rows: their symbol BER comes from the delta of the 16-bit,
    saturating ``SymbolErrorCounter`` the sweep read; at 65535, or lower than before, it is unknown."""
    script, env, ext = tools
    basic = tmp_path / "basic.txt"
    fake = tmp_path / "fake-basic"
    fake.write_text(FAKE_TOOLS.replace('cat "$DATA/telemetry/perfquery_loop.txt"', 'cat "$BASIC"'))
    fake.chmod(script.stat().st_mode)
    config = make_config("sym", command_prefix=[str(fake)], environment={**env, "BASIC": str(basic)}, timeout_s=5.0,
                         health_counters=True)
    ext.write_text(_ext("perfquery_T_before.txt"))

    def sweep(sym3: int, sym4: int) -> dict:
        basic.write_text(_basic(sym3, sym4))
        run_sweep(config)
        rec = health_readings.read(config.fabric_id)
        return {int(p): (rec["sym_ber"][i], rec["window_s"][i], rec.source[i])
                for i, p in enumerate(rec.port.tolist()) if p in (3, 4)}

    first = sweep(100, 65000)
    assert {p: s for p, (_, _, s) in first.items()} == {3: PORT_COUNTERS, 4: PORT_COUNTERS}
    assert all(np.isnan(b) for b, _, _ in first.values())  # one reading: no interval yet
    got = sweep(350, 65535)  # port 4 saturated on the way: errors past 65535 were not counted
    ber3, window3, _ = got[3]
    assert window3 > 0 and ber3 * 4 * 2.5e9 * window3 == pytest.approx(250)  # 4X SDR: 4 lanes of 2.5 Gb/s
    assert np.isnan(got[4][0])
    stuck = sweep(350, 65535)  # still at its top: not a BER of 0
    assert stuck[3][0] == 0.0 and np.isnan(stuck[4][0])
    reset = sweep(10, 5)  # cleared (port 3) and reset after saturation (port 4): both intervals unknown
    assert np.isnan(reset[3][0]) and np.isnan(reset[4][0]) and np.isnan(reset[4][1])
    again = sweep(10, 25)  # counting from the reset: measured again
    assert again[3][0] == 0.0 and again[4][0] * 4 * 2.5e9 * again[4][1] == pytest.approx(20)
    # leaf01's ports 1 and 2 keep their perfquery -T BER and no symbol BER of PortCounters
    rec = health_readings.read(config.fabric_id)
    assert set(rec.source[np.isin(rec.port, [1, 2])].tolist()) == {"perfquery -T #1"}
