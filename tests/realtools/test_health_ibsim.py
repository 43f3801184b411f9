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
