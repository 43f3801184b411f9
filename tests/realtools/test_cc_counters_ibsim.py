"""``perfquery --rcvcc`` against ibsim (issue 41): what the simulator answers, and how the collector takes it.

ibsim (0.10, as packaged here) does not implement the congestion control PerfMgt attributes (PortRcvConCtrl,
PortSLRcvFECN, PortXmitConCtrl, ...): perfquery exits 255 with ``perfquery: iberror: failed: cannot query
PortRcvConCtrl`` on stdout after libibmad's ``ibwarn: ... _do_madrpc failed; dport (Lid N)`` on stderr. Pasted as
a terminal shows it, the reader skips both lines with warnings and reads no port; should a later ibsim answer, its
output is read. A sweep with ``cc_counters`` on makes each switch one warning (asked for its first port only) and
still reads every switch's port counters.
"""

from __future__ import annotations

import pytest

from fabric_engine.telemetry.perfquery_cc import parse_perfquery_cc
from fabric_engine.topology.generate import fat_tree

pytestmark = pytest.mark.realtools


def test_perfquery_rcvcc_against_ibsim(ibsim):
    sim = ibsim(fat_tree(hosts=2, radix=4, speed="HDR"), sim_host="gpu0001", tools=("perfquery",))
    sim.run_opensm(["-o"])
    result = sim.run(["perfquery", "--rcvcc", "1", "1"], check=False)
    terminal = f"[root@gpu0001 ~]# perfquery --rcvcc 1 1\n{result.stdout}{result.stderr}"
    warnings: list = []
    s = parse_perfquery_cc(terminal, 1.0, "ibsim perfquery --rcvcc", warnings)
    if result.returncode == 0:  # a simulator that implements the attribute: its block is read
        assert len(s) == 1 and int(s.lid[0]) == 1 and int(s.port[0]) == 1
        return
    assert "cannot query PortRcvConCtrl" in result.stdout  # IBEXIT prints on stdout
    assert len(s) == 0
    reasons = [w["reason"] for w in warnings]
    assert "tool error message: the output stops there" in reasons and "shell prompt" in reasons


@pytest.mark.django_db(transaction=True)
def test_a_sweep_with_cc_counters_on_ibsim_warns_once_per_switch_and_reads_the_port_counters(ibsim):
    from django.core.cache import cache

    from ibweb.fabrics.choices import FabricMode
    from ibweb.fabrics.models import Fabric
    from ibweb.telemetry import cc_readings
    from ibweb.telemetry.choices import SweepStatus
    from ibweb.telemetry.models import CollectorConfig
    from ibweb.telemetry.sweeps import run_sweep

    cache.clear()
    design = fat_tree(hosts=4, radix=4, speed="HDR")
    sim = ibsim(design, sim_host="gpu0001", tools=("perfquery", "iblinkinfo"))
    sim.run_opensm(["-o"])
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    fabric = Fabric.objects.create(name="ibsim", slug="ibsim", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=fabric, environment=env, timeout_s=20.0, stale_after_s=600.0,
                                            cc_counters=True)
    done = run_sweep(config)
    assert done.status == SweepStatus.OK and done.failures == [] and done.ports > 0
    cannot = [w for w in done.warnings if w["text"].startswith("perfquery --rcvcc lid")]
    assert len(cannot) == design.num_switches  # one per switch: its other ports were not asked
    assert all("exit 255" in w["reason"] for w in cannot)
    r = cc_readings.readings(fabric.pk)
    assert r is not None and r["keys"].size == 0  # a reading with no port: no rates from an older one
