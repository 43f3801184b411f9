"""``perfquery -T`` against ibsim: what the simulator answers, and how the health reader takes it.

ibsim (0.10, as packaged here) does not implement PortExtendedSpeedsCounters: perfquery exits 255 with
``perfquery: iberror: failed: cannot query PortExtendedSpeedsCounters`` (on stdout) after libibmad's
``ibwarn: [pid] mad_rpc: _do_madrpc failed; dport (Lid N)``. Pasted as a terminal shows it, the reader
skips both lines with warnings and reads no port; should a later ibsim answer, its output is read.
"""

from __future__ import annotations

import pytest

from fabric_engine.health import perfquery_ext_speeds
from fabric_engine.topology.generate import fat_tree

pytestmark = pytest.mark.realtools


def test_perfquery_ext_speeds_against_ibsim(ibsim):
    sim = ibsim(fat_tree(hosts=2, radix=4, speed="HDR"), sim_host="gpu0001", tools=("perfquery",))
    sim.run_opensm(["-o"])
    basic = sim.run(["perfquery", "-x", "1", "1"])  # the simulator answers PortCountersExtended ...
    assert "# Port extended counters: Lid 1 port 1" in basic.stdout
    result = sim.run(["perfquery", "-T", "1", "1"], check=False)
    terminal = f"[root@gpu0001 ~]# perfquery -T 1 1\n{result.stdout}{result.stderr}"
    warnings: list = []
    rec = perfquery_ext_speeds.read(terminal, "ibsim perfquery -T", warnings)
    if result.returncode == 0:  # a simulator that implements the attribute: its blocks are read
        assert len(rec) == 1 and rec.port[0] == 1 and rec.name[0] == "lid:1"
        return
    # ... but not PortExtendedSpeedsCounters
    assert "cannot query PortExtendedSpeedsCounters" in result.stdout  # IBEXIT prints on stdout
    assert len(rec) == 0
    reasons = [w["reason"] for w in warnings]
    assert "tool error message: the output stops there" in reasons and "shell prompt" in reasons


@pytest.mark.django_db(transaction=True)
def test_symbol_ber_of_the_collectors_sweep_from_ibsims_port_counters(ibsim):
    """ibsim answers PortCounters, not ``perfquery -T``: each switch is a warning of the sweep, and every swept port
    keeps the ``SymbolErrorCounter`` the sweep read, its symbol BER from the delta (set with ibsim's console,
    ``PerformanceSet``); at 65535, the 16-bit counter's top, it is unknown."""
    import time

    import numpy as np
    from django.core.cache import cache

    from fabric_engine.health.port_counters import SOURCE
    from fabric_engine.telemetry import MIN_INTERVAL_S
    from ibweb.fabrics.choices import FabricMode
    from ibweb.fabrics.models import Fabric
    from ibweb.runtime import health_readings
    from ibweb.telemetry.models import CollectorConfig
    from ibweb.telemetry.sweeps import run_sweep

    cache.clear()
    design = fat_tree(hosts=4, radix=4, speed="HDR")
    sim = ibsim(design, sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    sim.run_opensm(["-o"])
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    fabric = Fabric.objects.create(name="ibsim", slug="ibsim", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=fabric, environment=env, timeout_s=20.0, stale_after_s=600.0,
                                            health_counters=True)

    def sweep(sym1: int, sym3: int):
        sim.console(f'PerformanceSet "leaf01"[1] PortCounters.SymbolErrorCounter={sym1}')
        sim.console(f'PerformanceSet "leaf01"[3] PortCounters.SymbolErrorCounter={sym3}')
        time.sleep(MIN_INTERVAL_S)
        done = run_sweep(config)
        rec = health_readings.read(fabric.pk)
        leaf = rec.name == "leaf01"
        row = {p: int(np.flatnonzero(leaf & (rec.port == p))[0]) for p in (1, 3)}
        return done, rec, row

    done, rec, row = sweep(100, 64000)
    cannot = [w for w in done.warnings if w["text"].startswith("perfquery -T lid")]  # "_do_madrpc failed", exit 255
    assert len(cannot) == design.num_switches
    assert set(rec.source.tolist()) == {SOURCE} and len(rec) == done.ports  # every cabled switch port swept
    assert rec["sym_errors"][row[1]] == 100 and np.isnan(rec["sym_ber"]).all()  # one reading: no interval
    assert rec["lanes"][row[1]] == 4 and rec.names("speed")[row[1]] == "HDR"  # the discovery's 4X HDR
    done, rec, row = sweep(100 + 5000, 65535)  # leaf01 port 3 saturated on the way
    window = rec["window_s"][row[1]]
    assert window > 0 and rec["sym_ber"][row[1]] * 4 * 53.125e9 * window == pytest.approx(5000)
    assert np.isnan(rec["sym_ber"][row[3]])
    others = np.ones(len(rec), bool)
    others[[row[1], row[3]]] = False
    assert (rec["sym_ber"][others] == 0).all()  # no errors elsewhere: a measured zero
    health_readings.forget(fabric.pk)
