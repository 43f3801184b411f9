"""A telemetry-fed fabric watched through real infiniband-diags under ibsim (issue 7).

ibsim runs a generated 4x HDR fat tree; OpenSM sweeps it once; a telemetry-fed
fabric's collector runs ``iblinkinfo`` and ``perfquery`` under umad2sim (the
umad2sim ``LD_PRELOAD``, ``SIM_HOST`` and the simulator's ``IBSIM_SOCKNAME`` in
the collector's environment), with Celery eager running the shards. Counters are
driven through ibsim's console (``PerformanceSet``), links through ``Unlink`` and
``ReLink``; a wrapper that makes one ``perfquery`` hang checks the timeout.
"""

from __future__ import annotations

import asyncio
import stat
import time

import numpy as np
import pytest
from django.core.cache import cache

from fabric_engine.telemetry import COLUMN, MIN_INTERVAL_S
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.runner import FabricRunner
from ibweb.telemetry import store
from ibweb.telemetry.choices import SweepStatus
from ibweb.telemetry.models import CollectorConfig, Sweep
from ibweb.telemetry.tasks import sweep_fabric
from tests.realtools.ibsim import UMAD2SIM

pytestmark = [pytest.mark.realtools, pytest.mark.django_db(transaction=True)]

XD, SE = COLUMN["PortXmitData"], COLUMN["SymbolErrorCounter"]


def sweep(config: CollectorConfig) -> Sweep:
    time.sleep(MIN_INTERVAL_S)  # issue 26: reads closer than this give no rate; a collector's interval is longer
    return Sweep.objects.get(pk=sweep_fabric.delay(config.pk).get())


def sample(fabric_id: int, lid: int, port: int, col: int) -> tuple[int, float]:
    _, newest = store.sweeps(fabric_id)
    s = newest["samples"]
    row = np.flatnonzero((s.lid == lid) & (s.port == port))[0]
    return int(s.values[row, col]), float(s.t[row, col])


def test_counters_alerts_topology_events_and_timeouts_from_ibsim(ibsim, tmp_path):
    cache.clear()
    design = fat_tree(hosts=16, radix=8, speed="HDR")
    sim = ibsim(design, sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    sim.run_opensm(["-o"])
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    assert env["LD_PRELOAD"] == UMAD2SIM
    fabric = Fabric.objects.create(name="ibsim", slug="ibsim", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=fabric, environment=env, timeout_s=20.0, shard_size=3,
                                            stale_after_s=600.0)

    # --- two sweeps around a known increase of leaf03 port 5 -> spine01
    base, words = 10**12, 3 * 10**9
    sim.console(f'PerformanceSet "leaf03"[5] PortCountersExtended.PortXmitData={base}')
    first = sweep(config)
    assert first.status == SweepStatus.OK and first.shards == 3 and first.ports == 2 * 32 - 16  # cabled switch ports
    engine = FabricRunner(fabric)
    asyncio.run(engine.start())
    f = engine.source.fabric
    assert (f.num_hosts, f.num_switches, f.num_links) == (16, 8, 32)
    leaf = f.node("leaf03")
    lid = int(f.lid[leaf])
    v1, t1 = sample(fabric.pk, lid, 5, XD)
    sim.console(f'PerformanceSet "leaf03"[5] PortCountersExtended.PortXmitData={base + words}')
    assert sweep(config).status == SweepStatus.OK
    v2, t2 = sample(fabric.pk, lid, 5, XD)
    assert asyncio.run(engine.tick()) == 1
    prev, newest = store.sweeps(fabric.pk)
    state = engine.source.state(prev, newest, time.time(), engine.seq)
    d = f.out_link(leaf, 5)
    implied = (v2 - v1) * 4 * 8 / 1e9 / (t2 - t1)
    assert state.rate_gbps[d] == pytest.approx(implied, rel=1e-6)
    assert state.util[d] == pytest.approx(implied / 200.0, rel=1e-6)  # 4x HDR
    # ibsim adds its own MAD traffic on top of what we set; it is a few hundred words
    assert (v2 - v1) == pytest.approx(words, rel=1e-5)
    assert not [a for a in state.alerts if a["kind"] == "error_rate"]

    # --- a burst of symbol errors raises an error-rate condition for that port
    sim.console('PerformanceSet "leaf03"[5] PortCounters.SymbolErrorCounter=500')
    sweep(config)
    asyncio.run(engine.tick())
    prev, newest = store.sweeps(fabric.pk)
    alerts = [a for a in engine.source.state(prev, newest, time.time(), engine.seq).alerts if a["kind"] == "error_rate"]
    assert [(a["port"], a["condition"], "SymbolErrorCounter" in a["message"]) for a in alerts] == [
        ("leaf03 port 5", True, True)]

    # --- Unlink: link-down event, and the link is gone from the next discovery
    sim.console('Unlink "leaf03"[5]')
    down = sweep(config)
    assert [(e["kind"], {e["a"], e["b"]}) for e in down.events] == [("link_down", {"leaf03 port 5", "spine01 port 3"})]
    asyncio.run(engine.tick())
    f = engine.source.fabric
    assert f.num_links == 31 and f.out_link(f.node("leaf03"), 5) == -1

    # --- ReLink brings it back
    sim.console('ReLink "leaf03"[5]')
    up = sweep(config)
    assert [e["kind"] for e in up.events] == ["link_up"]
    asyncio.run(engine.tick())
    f = engine.source.fabric
    assert f.num_links == 32 and f.out_link(f.node("leaf03"), 5) >= 0

    # --- a perfquery that hangs hits its timeout; its links go stale; the feed goes on
    wrapper = tmp_path / "hang-on-leaf03"
    wrapper.write_text(f'#!/bin/sh\ncase " $* " in *" {lid} "*) [ "$1" = perfquery ] && exec sleep 60;; esac\n'
                       'exec "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    config.command_prefix, config.timeout_s = [str(wrapper)], 2.0
    config.save()
    engine.source.config = config
    t0 = time.monotonic()
    hung = sweep(config)
    assert time.monotonic() - t0 < 30
    assert hung.status == SweepStatus.PARTIAL
    assert [(x["target"], "no answer within 2 s" in x["error"]) for x in hung.failures] == [(lid, True)]
    seq = engine.seq
    assert asyncio.run(engine.tick()) == seq + 1
    prev, newest = store.sweeps(fabric.pk)
    state = engine.source.state(prev, newest, time.time(), engine.seq)
    f = engine.source.fabric
    host_links = [f.out_link(f.node("leaf03"), p) for p in range(1, 5)]
    stale = next(a for a in state.alerts if a["kind"] == "stale")
    assert set(host_links) <= set(stale["links"])
    assert all(state.rate_gbps[h] == 0 for h in host_links)
    assert any(a["kind"] == "sweep_failures" for a in state.alerts)
